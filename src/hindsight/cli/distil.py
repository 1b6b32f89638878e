"""What hindsight reads out of what an owner said: ``summarize`` (a session in one
memory), ``reflect`` (lasting lessons) and ``foresee`` (what lies ahead)."""

from __future__ import annotations

import click

from hindsight import foresight, views
from hindsight.cli.base import App, cell, echo, emit_json, iso, json_option, owner_option, short
from hindsight.cli.group import cli


@cli.command()
@owner_option
@click.option("--session", "session_id", required=True, metavar="ID", help="The session.")
@json_option
@click.pass_obj
def summarize(app: App, owner: str, session_id: str, as_json: bool) -> None:
    """Summarize a session of OWNER into one long-term memory and show it.

    The session's working memory is consolidated first. Run it again with no new
    turns and it shows the same summary without writing; after new turns the new
    summary supersedes the old one (see 'list --history').
    """
    memory = app.engine.summarize(owner, session_id)
    if as_json:
        emit_json(views.memory(memory))
        return
    echo(memory.content)
    turns = memory.metadata.get("turns", len(memory.provenance.derived_from))
    echo(f"\n{memory.id}  summary of {turns} turn(s), updated {iso(memory.updated_at)}")


@cli.command()
@owner_option
@click.option("--session", "session_id", metavar="ID", help="Only this session (and its window).")
@click.option("--since", metavar="ISO", help="Only memories observed at or after this time.")
@click.option("--until", metavar="ISO", help="Only memories observed before this time.")
@json_option
@click.pass_obj
def reflect(
    app: App,
    owner: str,
    session_id: str | None,
    since: str | None,
    until: str | None,
    as_json: bool,
) -> None:
    """Distil lasting lessons from OWNER's memories and show those new or changed.

    Lessons: a tool that failed repeatedly, a correction the user made, an attribute
    whose value changed, a preference stated again and again. Rerunning on the same
    evidence writes nothing and shows nothing.
    """
    reflections = app.engine.reflect(owner, session_id=session_id, since=since, until=until)
    if as_json:
        emit_json({"reflections": [views.memory(m) for m in reflections]})
        return
    if not reflections:
        echo("no new or changed lessons")
    for m in reflections:
        echo(f"{m.id}  [{cell(str(m.metadata.get('lesson', 'lesson')))}]  {m.content}")


@cli.command()
@owner_option
@click.option(
    "--now",
    metavar="ISO",
    help="Look ahead from this time (ISO 8601; default: now); what was said later is unread.",
)
@click.option(
    "--days",
    type=int,
    default=foresight.DEFAULT_DAYS,
    show_default=True,
    help="How many days ahead, in the timezone setting's days.",
)
@json_option
@click.pass_obj
def foresee(app: App, owner: str, now: str | None, days: int, as_json: bool) -> None:
    """List what lies ahead for OWNER: events, commitments, routines and goals.

    Read from what OWNER said (and when; see retain --observed-at): open items due from
    today to DAYS days ahead, then the undated ones; soonest, then surest, first. A later
    move, cancellation or completion is honoured; past items drop out.
    """
    items = app.engine.foresee(owner, now=now, days=days)
    if as_json:
        emit_json({"items": [views.foresight_item(i) for i in items]})
        return
    if not items:
        echo("nothing ahead")
    for item in items:
        due = "-" if item.due is None else item.due.isoformat()
        echo(f"{due:<25} {item.kind:<10} {item.confidence:.2f}  {short(item.content, 70)}")
