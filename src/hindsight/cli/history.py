"""``hindsight feedback`` and ``hindsight history``: a memory's use and its past."""

from __future__ import annotations

import click

from hindsight import views
from hindsight.cli.base import App, cell, echo, emit_json, json_option, short
from hindsight.cli.group import cli
from hindsight.lifecycle.history import HistoryEvent, Version


@cli.command()
@click.option(
    "--useful/--not-useful",
    "useful",
    default=None,
    help="It was of use (confidence rises toward its trust), or it was not (it falls).",
)
@json_option
@click.argument("memory_id", metavar="ID")
@click.pass_obj
def feedback(app: App, useful: bool | None, as_json: bool, memory_id: str) -> None:
    """Say whether memory ID was of use; recall alone changes nothing.

    A useful mark also counts as use. A memory the guard holds takes no feedback.
    """
    if useful is None:
        raise click.UsageError("give --useful or --not-useful")
    before = app.engine.get(memory_id).confidence
    memory = app.engine.feedback(memory_id, useful)
    if as_json:
        emit_json(views.memory(memory))
    else:
        said = "useful" if useful else "not useful"
        echo(
            f"marked {memory.id} {said}: confidence {before:.3f} -> {memory.confidence:.3f}"
            f" (trust {memory.trust:.2f})"
        )


def _event_line(e: HistoryEvent) -> str:
    extra = []
    for key, value in e.detail.items():
        if key == "confidence" and isinstance(value, list) and len(value) == 2:
            extra.append(f"confidence {value[0]:.3f} -> {value[1]:.3f}")
        elif key not in ("request_id", "useful"):
            extra.append(cell(f"{key.replace('_', ' ')} {value}"))
    more = f"  ({', '.join(extra)})" if extra else ""
    who = cell(e.principal or "-")
    return f"    {e.at.isoformat(timespec='seconds')}  {who:<12} {cell(e.what)}{more}"


def _print_version(n: int, v: Version, asked: str) -> None:
    m = v.memory
    mark = "  <- asked" if m.id == asked else ""
    valid_from = m.valid_from.isoformat(timespec="seconds") if m.valid_from else "-"
    valid_to = m.valid_to.isoformat(timespec="seconds") if m.valid_to else "now"
    state = m.status.value if m.superseded_by is None else f"{m.status.value}, superseded"
    echo(f"{n:>2}. {m.id}  {state}  valid {valid_from} .. {valid_to}{mark}")
    echo(f"    [{m.kind.value}] {short(m.content, 100)}")
    for e in v.events:
        echo(_event_line(e))


@cli.command()
@json_option
@click.argument("memory_id", metavar="ID")
@click.pass_obj
def history(app: App, as_json: bool, memory_id: str) -> None:
    """Show the versions of memory ID, oldest first, who changed what and when, and
    what was derived from it."""
    found = app.engine.history(memory_id)
    if as_json:
        emit_json(views.history(found))
        return
    for n, version in enumerate(found.versions, start=1):
        _print_version(n, version, found.memory_id)
    if found.derived:
        echo("derived from it:")
        for m in found.derived:
            echo(f"    {m.id}  [{m.kind.value}] {short(m.content, 90)}")
