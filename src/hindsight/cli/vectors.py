"""``hindsight vectors``: whether the vector engine holds what the rows say, and its
index (Qdrant backends; ``local`` and ``pgvector`` keep vectors in the rows)."""

from __future__ import annotations

import click

from hindsight import jobs
from hindsight.cli.base import App, echo, emit_json, json_option
from hindsight.cli.group import cli


@cli.group("vectors")
def vectors_group() -> None:
    """The vector engine: check it against the rows, repair it, build its index."""


@vectors_group.command("check")
@click.option("--owner", metavar="OWNER", help="Only this owner's vectors (default: all).")
@click.option("--repair", is_flag=True, help="Upsert the missing vectors, delete the orphaned.")
@json_option
@click.pass_obj
def check(app: App, owner: str | None, repair: bool, as_json: bool) -> None:
    """Report vectors the engine lacks (missing) or holds without a row (orphaned).

    Applies the vector outbox first. Exits 0 when clean (after --repair: when the
    repair left it clean), 1 otherwise.
    """
    store = app.engine.store
    report = jobs.check_vectors(store, owner=owner, repair=repair)
    if repair:
        after = jobs.check_vectors(store, owner=owner)
        clean = not after["missing"] and not after["orphaned"]
    else:
        clean = not report["missing"] and not report["orphaned"]
    if as_json:
        emit_json(report)
    else:
        verb = "repaired" if repair else "found"
        echo(f"{verb}: {len(report['missing'])} missing, {len(report['orphaned'])} orphaned")
        for mid in report["missing"][:20]:
            echo(f"missing  {mid}")
        for key in report["orphaned"][:20]:
            echo(f"orphaned point {key}")
    if not clean:
        raise SystemExit(1)


@vectors_group.command("optimize")
@json_option
@click.pass_obj
def optimize(app: App, as_json: bool) -> None:
    """Build the vector index now (qdrant-edge builds HNSW only when asked; this blocks
    the process that runs it, which also holds the shard: stop a server using it first)."""
    built = jobs.optimize_vectors(app.engine.store)
    if as_json:
        emit_json({"optimized": built})
    else:
        echo("index built" if built else "nothing to build")
