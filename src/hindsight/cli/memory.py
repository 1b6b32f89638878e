"""The memory commands: retain, recall, forget, list, show, owners, stats and update.

Each one library call on an owner's long-term memory, printed for people or as JSON.
"""

from __future__ import annotations

from dataclasses import asdict

import click

from hindsight import validate, views
from hindsight.cli.base import (
    KINDS,
    SOURCES,
    STATUSES,
    App,
    BadInput,
    CliError,
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
    request_id_option,
    result_json,
    retain_lines,
    short,
    stdin_is_terminal,
)
from hindsight.cli.group import cli
from hindsight.engine import UNSET, Hindsight
from hindsight.models import Source
from hindsight.recall.request import RecallRequest, default_of, help_of


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
@request_id_option
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
    "-k", "--k", "k", type=int, default=default_of("k"), show_default=True, help=help_of("k")
)
@click.option("--kind", "kinds", multiple=True, type=KINDS, help="Only these kinds (repeatable).")
@click.option("--since", metavar="ISO", help="Only memories observed at or after this time.")
@click.option("--until", metavar="ISO", help="Only memories observed before this time.")
@click.option("--min-confidence", type=float, metavar="X", help="Only confidence >= X (0..1).")
@click.option("--budget", type=int, metavar="TOKENS", help=help_of("token_budget"))
@click.option("--history", is_flag=True, help=help_of("include_history"))
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
    request = RecallRequest(
        owners=list(owners),
        query=text,
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
    results = app.engine.recall(request)
    if as_json:
        emit_json({"results": [result_json(r) for r in results]})
    else:
        print_results(results, show_owner=len(set(owners)) > 1)


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
