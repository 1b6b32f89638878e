"""The memory commands: retain, recall, forget, list, show, stats, update, export, import,
reembed, working-memory sessions, summarize, reflect and the demo."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

import click

from hindsight import foresight, validate, views
from hindsight.cli import demo
from hindsight.cli.base import (
    HELD_NOTE,
    KINDS,
    ROLES,
    SOURCES,
    STATUSES,
    App,
    BadInput,
    CliError,
    _Group,
    cell,
    echo,
    emit_json,
    iso,
    json_option,
    memory_held_lines,
    owner_option,
    parse_metadata,
    print_memory,
    print_results,
    read_text,
    receipt_json,
    result_json,
    retain_lines,
    short,
    stdin_is_terminal,
)
from hindsight.engine import UNSET, Hindsight
from hindsight.errors import ValidationError
from hindsight.models import Source


# -- the group ---------------------------------------------------------------------------------
@click.group("hindsight", cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Data directory (default: $HINDSIGHT_HOME, else the platform's data dir).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bars or progress notes.")
@click.version_option(package_name="agent-hindsight", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context, home: Path | None, quiet: bool) -> None:
    """Long-term memory for LLM agents, on the command line.

    Every command that prints data takes --json. TEXT and QUERY arguments may be
    '-' to read stdin (strict UTF-8).

    \b
    Exit codes:
      0  success
      1  failure (store, embedding model, conflict, or a declined confirmation)
      2  bad input or usage; nothing was changed
      3  not found
    """
    ctx.obj = App(home=home, quiet=quiet)


REQUEST_ID = click.option(
    "--request-id",
    metavar="KEY",
    help="Make the write once under KEY: the same command again stores nothing twice.",
)


@cli.command()
@owner_option
@click.option("--session", "session_id", metavar="ID", help="Session the text belongs to.")
@click.option(
    "--source",
    type=SOURCES,
    default="user",
    show_default=True,
    help="Who said it: the basis of trust.",
)
@click.option(
    "--kind", type=KINDS, help="Store TEXT as one memory of this kind, verbatim (no extraction)."
)
@click.option("--observed-at", metavar="ISO", help="When it was said (ISO 8601; default: now).")
@click.option("--metadata", "metadata_json", metavar="JSON", help="A JSON object to attach.")
@click.option(
    "--expires-at",
    metavar="ISO",
    help="Forget what this creates after this time (ISO 8601 with its zone, e.g. ...Z).",
)
@REQUEST_ID
@json_option
@click.argument("text")
@click.pass_obj
def retain(
    app: App,
    owner: str,
    session_id: str | None,
    source: str,
    kind: str | None,
    observed_at: str | None,
    metadata_json: str | None,
    expires_at: str | None,
    request_id: str | None,
    as_json: bool,
    text: str,
) -> None:
    """Remember TEXT: keep it as an episode and extract what it states.

    With --kind, TEXT is stored as that one memory instead.
    """
    content = read_text(text, limit_chars=app.settings().max_content_chars)
    metadata = parse_metadata(metadata_json)
    result = app.engine.retain(
        owner,
        content,
        kind=kind,
        session_id=session_id,
        source=source,
        observed_at=observed_at,
        metadata=metadata,
        request_id=request_id,
        expires_at=expires_at,
    )
    if as_json:
        emit_json(views.retained(result))
    else:
        echo("\n".join(retain_lines(result)))


@cli.command()
@click.option(
    "--owner",
    "owners",
    multiple=True,
    required=True,
    metavar="OWNER",
    help="Whose memory to search; repeat to search several.",
)
@click.option(
    "-k", "--k", "k", type=int, default=10, show_default=True, help="How many results at most."
)
@click.option("--kind", "kinds", multiple=True, type=KINDS, help="Only these kinds (repeatable).")
@click.option("--since", metavar="ISO", help="Only memories observed at or after this time.")
@click.option("--until", metavar="ISO", help="Only memories observed before this time.")
@click.option("--min-confidence", type=float, metavar="X", help="Only confidence >= X (0..1).")
@click.option(
    "--budget", type=int, metavar="TOKENS", help="Fit the results' contents in this many tokens."
)
@click.option("--history", is_flag=True, help="Include superseded memories.")
@click.option(
    "--timezone",
    metavar="ZONE",
    help="Whose days 'yesterday' or 'on 8 May' in QUERY are: an IANA name such as "
    "America/New_York, or an offset such as -05:00 (default: the timezone setting, UTC).",
)
@click.option(
    "--expand/--no-expand",
    default=None,
    help="Let the LLM split QUERY into sub-queries searched beside it (with an LLM "
    "configured; default: the llm_expand setting).",
)
@json_option
@click.argument("query")
@click.pass_obj
def recall(
    app: App,
    owners: tuple[str, ...],
    k: int,
    kinds: tuple[str, ...],
    since: str | None,
    until: str | None,
    min_confidence: float | None,
    budget: int | None,
    history: bool,
    timezone: str | None,
    expand: bool | None,
    as_json: bool,
    query: str,
) -> None:
    """Find the memories that best answer QUERY, and why each came back."""
    text = read_text(query, limit_chars=app.settings().max_content_chars)
    results = app.engine.recall(
        list(owners),
        text,
        k=k,
        kinds=list(kinds) or None,
        since=since,
        until=until,
        min_confidence=min_confidence,
        token_budget=budget,
        include_history=history,
        timezone=timezone,
        expand=expand,
    )
    if as_json:
        emit_json({"results": [result_json(r) for r in results]})
    else:
        print_results(results, show_owner=len(set(owners)) > 1)


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


@cli.command()
@owner_option
@click.option("--session", "session_id", metavar="ID", help="Only this session's memories.")
@click.option("--id", "memory_id", metavar="ID", help="Only this memory (must be OWNER's).")
@click.option("--since", metavar="ISO", help="Only memories observed at or after this time.")
@click.option("--until", metavar="ISO", help="Only memories observed before this time.")
@click.option(
    "--source",
    type=click.Choice([s.value for s in Source]),
    help="Only memories from this source, e.g. tool.",
)
@click.option(
    "--principal", metavar="NAME", help="Only memories this writer (an API key's name) wrote."
)
@click.option("-y", "--yes", is_flag=True, help="Do not ask before forgetting everything.")
@json_option
@click.pass_obj
def forget(
    app: App,
    owner: str,
    session_id: str | None,
    memory_id: str | None,
    since: str | None,
    until: str | None,
    source: str | None,
    principal: str | None,
    yes: bool,
    as_json: bool,
) -> None:
    """Delete memories, and what was derived only from them.

    With no --id, --session, --since, --until, --source or --principal, everything
    of OWNER goes, working memory included. On a terminal that asks first;
    otherwise it refuses unless --yes is given, so a script must opt in.
    """
    owner = validate.owner(owner)
    hs = app.engine
    filters = (session_id, since, until, source, principal)
    if memory_id is not None:
        if any(f is not None for f in filters):
            raise click.UsageError(
                "--id cannot be combined with --session, --since, --until, --source or --principal"
            )
        receipt = hs.forget(memory_id, owner=owner)
    else:
        if all(f is None for f in filters) and not yes:
            _confirm_forget_all(hs, owner)
        receipt = hs.forget(
            owner=owner,
            session_id=session_id,
            since=since,
            until=until,
            source=source,
            principal=principal,
        )
    if as_json:
        emit_json(receipt_json(receipt))
    else:
        echo(
            f"forgot {len(receipt.deleted_ids)} memories and {len(receipt.derived_ids)} "
            f"derived from them ({receipt.count} in all) at {iso(receipt.at)}; receipt {receipt.id}"
        )


def _confirm_forget_all(hs: Hindsight, owner: str) -> None:
    if not stdin_is_terminal():
        raise BadInput(
            f"refusing to forget everything of {owner} without --yes (stdin is not a terminal)"
        )
    count = hs.stats(owner).memories
    if not click.confirm(
        f"Forget all {count} memories of {owner}, and its working memory?", err=True
    ):
        raise CliError("not confirmed; nothing was forgotten")


@cli.command("list")
@owner_option
@click.option("--kind", "kinds", multiple=True, type=KINDS, help="Only these kinds (repeatable).")
@click.option("--session", "session_id", metavar="ID", help="Only this session's memories.")
@click.option("--history", is_flag=True, help="Include superseded memories.")
@click.option(
    "--status",
    type=STATUSES,
    default="active",
    show_default=True,
    help="Only memories in this status.",
)
@click.option("--limit", type=int, default=50, show_default=True, help="Page size.")
@click.option("--offset", type=int, default=0, show_default=True, help="Skip this many.")
@json_option
@click.pass_obj
def list_(
    app: App,
    owner: str,
    kinds: tuple[str, ...],
    session_id: str | None,
    history: bool,
    status: str,
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """List OWNER's memories, newest observed first."""
    memories = app.engine.list_memories(
        owner,
        kinds=list(kinds) or None,
        session_id=session_id,
        include_history=history,
        status=status,
        limit=limit,
        offset=offset,
    )
    if as_json:
        emit_json({"memories": [views.memory(m) for m in memories]})
        return
    if not memories:
        echo("no memories")
    for m in memories:
        old = " (superseded)" if m.valid_to is not None else ""
        echo(
            f"{m.id}  {m.kind.value:<11} {m.observed_at:%Y-%m-%d %H:%M}  "
            f"{m.confidence:.2f}  {short(m.content, 70)}{old}"
        )


@cli.command()
@json_option
@click.argument("memory_id", metavar="ID")
@click.pass_obj
def show(app: App, as_json: bool, memory_id: str) -> None:
    """Show one memory, every field of it."""
    memory = app.engine.get(memory_id)
    if as_json:
        emit_json(views.memory(memory))
    else:
        print_memory(memory)


@cli.command()
@json_option
@click.pass_obj
def owners(app: App, as_json: bool) -> None:
    """List the owners that have memories (those the caller may read)."""
    names = app.engine.owners()
    if as_json:
        emit_json({"owners": names})
    else:
        for name in names:
            echo(cell(name))


@cli.command()
@click.option("--owner", metavar="OWNER", help="Only this owner's memories.")
@json_option
@click.pass_obj
def stats(app: App, owner: str | None, as_json: bool) -> None:
    """Count memories by kind and status, and show the store's size and model."""
    result = app.engine.stats(owner)
    data = asdict(result)
    if as_json:
        emit_json(data)
        return
    months = data.pop("by_month")
    data.pop("by_month_status")  # the same months again: in --json
    for key, value in data.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in sorted(value.items())) or "-"
        echo(f"{key + ':':<17}{'-' if value is None else cell(str(value))}")
    for month, kinds in months.items():  # of one owner
        echo(f"{month:<17}" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))


@cli.command()
@click.option("--content", help="New content ('-' reads stdin); it is re-embedded.")
@click.option("--metadata", "metadata_json", metavar="JSON", help="Replace the metadata.")
@click.option("--confidence", type=float, metavar="X", help="New confidence (0..1).")
@click.option("--status", type=STATUSES, help="New status.")
@click.option("--expires-at", metavar="ISO", help="Forget it after this time (ISO 8601, zoned).")
@click.option("--no-expiry", is_flag=True, help="Clear its expiry.")
@json_option
@click.argument("memory_id", metavar="ID")
@click.pass_obj
def update(
    app: App,
    content: str | None,
    metadata_json: str | None,
    confidence: float | None,
    status: str | None,
    expires_at: str | None,
    no_expiry: bool,
    as_json: bool,
    memory_id: str,
) -> None:
    """Change one memory in place."""
    given = (content, metadata_json, confidence, status, expires_at)
    if all(v is None for v in given) and not no_expiry:
        raise click.UsageError(
            "nothing to update: give --content, --metadata, --confidence, --status, "
            "--expires-at or --no-expiry"
        )
    if expires_at is not None and no_expiry:
        raise click.UsageError("give --expires-at or --no-expiry, not both")
    text = (
        None
        if content is None
        else read_text(content, limit_chars=app.settings().max_content_chars)
    )
    metadata = parse_metadata(metadata_json)
    memory = app.engine.update(
        memory_id,
        content=UNSET if text is None else text,
        metadata=UNSET if metadata is None else metadata,
        confidence=UNSET if confidence is None else confidence,
        status=UNSET if status is None else status,
        expires_at=None if no_expiry else UNSET if expires_at is None else expires_at,
    )
    if as_json:
        emit_json(views.memory(memory))
    else:
        print_memory(memory)
        for line in memory_held_lines(memory):
            echo(line)


@cli.command()
@owner_option
@click.pass_obj
def export(app: App, owner: str) -> None:
    """Write OWNER's memories to stdout as JSON lines, oldest first.

    The output is what 'hindsight import' reads; vectors are not exported.
    """
    hs = app.engine
    total = hs.stats(owner).memories
    with app.progress(hs.export(owner), length=total, label="exporting") as records:
        for record in records:
            emit_json(record)


@cli.command("import")
@REQUEST_ID
@json_option
@click.argument("file", type=click.File("rb"))
@click.pass_obj
def import_(app: App, request_id: str | None, as_json: bool, file: BinaryIO) -> None:
    """Load memories from FILE of JSON lines ('-' for stdin); ids the owner holds are skipped.

    Every line is checked first: one bad line is an error naming it, and
    nothing is imported.
    """
    records = _read_json_lines(file)
    lines = [n for n, _ in records]
    at = 0  # which record the engine is checking, to name its line on error

    def feed() -> Iterator[dict[str, Any]]:
        nonlocal at
        for at, (_, record) in enumerate(records, start=1):  # noqa: B007
            yield record

    hs = app.engine
    try:
        with app.progress(feed(), length=len(records), label="importing") as items:
            counts = hs.import_records(items, request_id=request_id)
    except ValidationError as exc:
        prefix = f"record {at}: "
        if at and str(exc).startswith(prefix):
            raise ValidationError(f"line {lines[at - 1]}: {str(exc)[len(prefix) :]}") from None
        raise
    if as_json:
        emit_json(counts)
        return
    echo(f"imported {counts['imported']}, skipped {counts['skipped']} already known")
    if counts["held"]:
        echo(
            f"{counts['held']} of those imported held (quarantined or pending review): {HELD_NOTE}"
        )


@cli.command()
@json_option
@click.pass_obj
def reembed(app: App, as_json: bool) -> None:
    """Remake the store's vectors with the configured embedding model.

    Needed after the embedding model changes: a store refuses to open with a model other
    than the one that made its vectors. Resumes if interrupted.
    """
    from hindsight.jobs import reembed as run

    settings = app.settings()
    count = run(settings, progress=lambda done: app.note(f"re-embedded {done}"))
    if as_json:
        emit_json({"reembedded": count})
    else:
        echo(f"re-embedded {count} memories")


def _read_json_lines(stream: BinaryIO) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; any bad line is an error naming it."""
    records: list[tuple[int, dict[str, Any]]] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(stream, start=1):
        try:
            line = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValidationError(f"line {number} is not valid UTF-8") from None
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"line {number} is not valid JSON: {exc.msg} (column {exc.colno})"
            ) from None
        if not isinstance(record, dict):
            raise ValidationError(f"line {number} is not a JSON object")
        rid = record.get("id")
        if isinstance(rid, str):
            if rid in first_line:
                raise ValidationError(f"line {number} repeats id {rid!r} of line {first_line[rid]}")
            first_line[rid] = number
        records.append((number, record))
    return records


# -- working memory ----------------------------------------------------------------------------
@cli.group()
def session() -> None:
    """Working memory: a session's recent turns, before they become long-term memory."""


@session.command("add")
@owner_option
@click.option("--session", "session_id", required=True, metavar="ID", help="The session.")
@click.option("--role", type=ROLES, default="user", show_default=True, help="Who spoke.")
@REQUEST_ID
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


# -- summaries and reflections -----------------------------------------------------------------
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


# -- demo --------------------------------------------------------------------------------------
@cli.command("demo")
@click.option(
    "--home",
    "demo_home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the demo's store here (default: a temporary directory, removed after).",
)
@json_option
@click.pass_obj
def demo_(app: App, demo_home: Path | None, as_json: bool) -> None:
    """Retain a sample conversation for user:demo, then recall from it with explanations.

    It runs offline in a fresh temporary store unless --home is given (on the
    command or the group); HINDSIGHT_HOME is ignored, so your data is never touched.
    """
    home = demo_home or app.home
    with contextlib.ExitStack() as stack:
        if home is None:
            home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hindsight-demo-")))
        hs = stack.enter_context(Hindsight(app.settings(home)))
        run = demo.run(hs)
        if as_json:
            emit_json(
                {
                    "home": str(home) if demo_home or app.home else None,
                    "owner": demo.OWNER,
                    "retained": [views.retained(r) for r in run.retained],
                    "recalls": [
                        {"query": q, "results": [result_json(r) for r in results]}
                        for q, results in run.recalls
                    ],
                }
            )
        else:
            demo.print_run(
                run, home=home if demo_home or app.home else None, show_results=print_results
            )
