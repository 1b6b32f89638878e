"""``hindsight pin``, ``unpin``, ``restore`` and ``maintain``: the memory lifecycle."""

from __future__ import annotations

import click

from hindsight import views
from hindsight.cli.base import App, echo, emit_json, json_option, memory_held_lines, short
from hindsight.cli.group import cli
from hindsight.models import Memory


def _show(memory: Memory, as_json: bool, done: str) -> None:
    if as_json:
        emit_json(views.memory(memory))
        return
    echo(f"{done} {memory.id} ({memory.status.value}): {short(memory.content, 100)}")
    for line in memory_held_lines(memory):
        echo(line)


@cli.command()
@json_option
@click.argument("memory_id", metavar="ID")
@click.pass_obj
def pin(app: App, as_json: bool, memory_id: str) -> None:
    """Pin memory ID: it neither decays nor is archived until unpinned."""
    _show(app.engine.pin(memory_id), as_json, "pinned")


@cli.command()
@json_option
@click.argument("memory_id", metavar="ID")
@click.pass_obj
def unpin(app: App, as_json: bool, memory_id: str) -> None:
    """Unpin memory ID: it decays and may be archived again."""
    _show(app.engine.unpin(memory_id), as_json, "unpinned")


@cli.command()
@json_option
@click.argument("memory_id", metavar="ID")
@click.pass_obj
def restore(app: App, as_json: bool, memory_id: str) -> None:
    """Make archived memory ID active again (restoring counts as using it)."""
    _show(app.engine.restore(memory_id), as_json, "restored")


@cli.command()
@click.option(
    "--as-of", metavar="ISO", help="Run the pass as if at this time (ISO 8601; default: now)."
)
@json_option
@click.pass_obj
def maintain(app: App, as_of: str | None, as_json: bool) -> None:
    """Run the maintenance pass over every owner: forget what expired or passed its
    owner's retention (with receipts), archive what went stale. Idempotent."""
    report = app.engine.maintain(as_of)
    if as_json:
        emit_json(report.as_dict())
    else:
        echo(
            f"archived {report.archived}, expired {report.expired}, "
            f"forgotten {report.forgotten} (retention), over {report.owners} owners"
        )
