"""``hindsight session``: working memory, a session's recent turns before they become
long-term memory (add, show, close, list)."""

from __future__ import annotations

import click

from hindsight import views
from hindsight.cli.base import (
    ROLES,
    App,
    cell,
    echo,
    emit_json,
    json_option,
    owner_option,
    read_text,
    request_id_option,
    retain_lines,
    short,
)
from hindsight.cli.group import cli


@cli.group()
def session() -> None:
    """Working memory: a session's recent turns, before they become long-term memory."""


@session.command("add")
@owner_option
@click.option("--session", "session_id", required=True, metavar="ID", help="The session.")
@click.option("--role", type=ROLES, default="user", show_default=True, help="Who spoke.")
@request_id_option
@json_option
@click.argument("text")
@click.pass_obj
def session_add(
    app: App,
    owner: str,
    session_id: str,
    role: str,
    request_id: str | None,
    as_json: bool,
    text: str,
) -> None:
    """Add a turn to a session's window ('-' reads stdin).

    The window moves to long-term memory when it is full, or at once on a
    correction or a tool failure.
    """
    content = read_text(text, limit_chars=app.settings().max_content_chars)
    hs = app.engine
    result = hs.observe(owner, session_id, content, role=role, request_id=request_id)
    window = hs.window(owner, session_id)
    if as_json:
        emit_json(
            {
                "owner": owner,
                "session_id": session_id,
                "window_turns": len(window),
                "consolidated": result is not None,
                "retained": None if result is None else views.retained(result),
            }
        )
        return
    echo(f"added to {session_id}; {len(window)} turn(s) in the window")
    if result is not None:
        echo("the window moved to long-term memory:")
        echo("\n".join(retain_lines(result)))


@session.command("show")
@owner_option
@click.option("--session", "session_id", required=True, metavar="ID", help="The session.")
@json_option
@click.pass_obj
def session_show(app: App, owner: str, session_id: str, as_json: bool) -> None:
    """Show a session's working memory, oldest turn first."""
    turns = app.engine.window(owner, session_id)
    if as_json:
        emit_json(
            {"owner": owner, "session_id": session_id, "turns": [views.turn(t) for t in turns]}
        )
        return
    if not turns:
        echo("no turns")
    for t in turns:
        echo(f"{t.seq:>5}  {t.created_at:%Y-%m-%d %H:%M:%S}  {t.role:<9} {short(t.content, 80)}")


@session.command("close")
@owner_option
@click.option("--session", "session_id", required=True, metavar="ID", help="The session.")
@json_option
@click.pass_obj
def session_close(app: App, owner: str, session_id: str, as_json: bool) -> None:
    """End a session: move what is left of its window to long-term memory."""
    result = app.engine.close_session(owner, session_id)
    if as_json:
        emit_json(views.retained(result))
    else:
        echo("\n".join(retain_lines(result)))


@session.command("list")
@owner_option
@json_option
@click.pass_obj
def session_list(app: App, owner: str, as_json: bool) -> None:
    """List OWNER's open sessions with their turn and token counts, latest first."""
    rows = app.engine.sessions(owner)
    if as_json:
        emit_json({"sessions": [{"session_id": s, "turns": n, "tokens": t} for s, n, t in rows]})
        return
    if not rows:
        echo("no open sessions")
    for sid, turns, tokens in rows:
        echo(f"{cell(sid)}  {turns} turns  ~{tokens} tokens")
