"""``hindsight doctor``: the configuration, the store's embedding versions, the endpoints."""

from __future__ import annotations

from typing import Any

import click

from hindsight.cli.base import App, cell, echo, emit_json, json_option
from hindsight.cli.group import cli


@cli.command()
@click.option("--offline", is_flag=True, help="Call no endpoint: show the configuration only.")
@json_option
@click.pass_obj
def doctor(app: App, offline: bool, as_json: bool) -> None:
    """Show the embedding model, reranker, LLM and store in use, how many memories hold
    vectors of each embedding version, and whether each endpoint answers. Never a key.

    Opens no engine, so it works when one would refuse to open (the embedding model
    changed). Exits 1 when an endpoint does not answer.
    """
    from hindsight.doctor import diagnose

    found = diagnose(app.settings(), check_endpoints=not offline)
    if as_json:
        emit_json(found)
    else:
        for line in _lines(found):
            echo(line)
    if not found["ok"]:
        raise click.exceptions.Exit(1)


def _lines(found: dict[str, Any]) -> list[str]:
    e, r, llm, s = found["embedding"], found["reranker"], found["llm"], found["store"]
    dimension = f" ({e['dimension']}-d)" if e["dimension"] else ""
    lines = [f"embedding  {e['provider']}: {e['model']}{dimension}{_at(e['base_url'])}"]
    lines += _check(e["check"])
    for v in e["versions"]:
        mark = "  (current)" if v["current"] else ""
        lines.append(
            f"  stored   {v['memories']} memories of {v['model']} ({v['dimension']}-d){mark}"
        )
    if e["to_embed"]:
        lines.append(f"  pending  {e['to_embed']} memories without a vector of the current model")
    if e["switch_pending"]:
        lines.append("  the model changed: run 'hindsight reembed' to remake the stored vectors")
    model = f" {r['model']}" if r["model"] else ""
    lines.append(f"reranker   {r['name']}{model}{_at(r['base_url'] or r['model_dir'])}")
    lines += _check(r["check"])
    model = f" {llm['model']}" if llm["model"] else ""
    lines.append(f"llm        {llm['provider']}{model}{_at(llm['base_url'])}")
    lines += _check(llm["check"])
    where = s.get("path") or s.get("host")
    lines.append(
        f"store      {s['database']} {where}, vectors {s['vectors']}{_at(s['qdrant_url'])}"
    )
    lines += _check(s["check"])
    for replica in s.get("replicas", []):
        state = "usable" if replica["usable"] else f"not usable: {replica.get('error', 'lagging')}"
        lines.append(f"  replica  {replica['replica']} {state}, lag {replica['lag_seconds']} s")
    return [cell(line) for line in lines]


def _at(where: str | None) -> str:
    return f" at {where}" if where else ""


def _check(check: dict[str, Any] | None) -> list[str]:
    if check is None:
        return []
    if check["ok"]:
        return [f"  answers  in {check['ms']:g} ms"]
    return [f"  FAILS    after {check['ms']:g} ms: {check['error']}"]
