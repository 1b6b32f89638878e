"""The ``hindsight`` command: a thin adapter over :class:`hindsight.Hindsight`.

Each command parses its options, calls one library method and prints the answer,
as a table for people or as JSON (``--json``) for scripts. Errors are mapped to
one line and an exit code in one place, :func:`_one_line_errors`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import IO, Any, BinaryIO, Final, TypeVar

import click
import pydantic

from hindsight import demo, validate
from hindsight.config import Settings
from hindsight.engine import UNSET, Hindsight
from hindsight.errors import HindsightError, NotFoundError, ValidationError
from hindsight.models import (
    ForgetReceipt,
    Kind,
    Memory,
    RecallResult,
    RetainResult,
    Source,
    Status,
)
from hindsight.store import WorkingTurn
from hindsight.transfer import memory_to_dict

EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2
EXIT_NOT_FOUND: Final = 3

KINDS: Final = click.Choice([k.value for k in Kind])
SOURCES: Final = click.Choice([s.value for s in Source if s is not Source.IMPORT])
STATUSES: Final = click.Choice([s.value for s in Status])
ROLES: Final = click.Choice(["user", "assistant", "tool", "system"])
T = TypeVar("T")


# -- errors: mapped once, for every command -------------------------------------------
class CliError(click.ClickException):
    """An error shown as one ``error: ...`` line on stderr; exits 1."""

    exit_code = EXIT_FAILURE

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.format_message()}", file=file or sys.stderr)


class BadInput(CliError):
    """Bad input or usage; nothing was changed. Exits 2."""

    exit_code = EXIT_USAGE


class Missing(CliError):
    """What was asked for does not exist. Exits 3."""

    exit_code = EXIT_NOT_FOUND


def cli_error(exc: HindsightError) -> CliError:
    """The CLI error, and so the exit code, of a library error."""
    if isinstance(exc, ValidationError):
        return BadInput(str(exc))
    if isinstance(exc, NotFoundError):
        return Missing(str(exc))
    return CliError(str(exc))


@contextlib.contextmanager
def _one_line_errors() -> Iterator[None]:
    """Turn library, settings, usage and OS errors into a :class:`CliError`."""
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise  # a bare group prints its help
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} -h')" if exc.ctx is not None else ""
        raise BadInput(exc.format_message() + hint) from None
    except click.FileError as exc:
        raise BadInput(exc.format_message()) from None
    except HindsightError as exc:
        raise cli_error(exc) from None
    except pydantic.ValidationError as exc:  # a bad HINDSIGHT_* environment variable
        first = exc.errors()[0]
        name = "HINDSIGHT_" + "_".join(str(p) for p in first["loc"]).upper()
        raise BadInput(f"invalid setting {name}: {first['msg']}") from None
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            raise  # click quietens a closed pipe (`hindsight export | head`)
        raise CliError(str(exc)) from None


class _Group(click.Group):
    """A group whose parsing and dispatch map every error once."""

    group_class = type  # nested groups (``session``) behave the same

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        with _one_line_errors():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _one_line_errors():
            try:
                return super().invoke(ctx)
            finally:
                if ctx.parent is None and isinstance(ctx.obj, App):
                    ctx.obj.close()


# -- shared state and output ---------------------------------------------------------------
@dataclass
class App:
    """What the group's options set up; the engine opens on first use."""

    home: Path | None
    quiet: bool
    _engine: Hindsight | None = None

    def settings(self, home: Path | None = None) -> Settings:
        home = home or self.home
        return Settings() if home is None else Settings(home=home)

    @property
    def engine(self) -> Hindsight:
        if self._engine is None:
            self._engine = Hindsight(self.settings())
        return self._engine

    def close(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()

    @property
    def shows_progress(self) -> bool:
        return not self.quiet and sys.stderr is not None and sys.stderr.isatty()

    def progress(
        self, items: Iterable[T], *, length: int, label: str
    ) -> contextlib.AbstractContextManager[Iterable[T]]:
        """A progress bar on stderr, or nothing when quiet or not on a terminal."""
        if not self.shows_progress:
            return contextlib.nullcontext(items)
        return click.progressbar(items, length=length, label=label, file=sys.stderr)

    def note(self, message: str) -> None:
        if self.shows_progress:
            click.echo(message, err=True)


def _json_default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def dumps(data: object) -> str:
    """The one JSON encoder of the CLI: UTF-8, ISO 8601 datetimes."""
    return json.dumps(data, ensure_ascii=False, default=_json_default)


def emit_json(data: object) -> None:
    click.echo(dumps(data))


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def memory_json(m: Memory) -> dict[str, Any]:
    data = memory_to_dict(m)
    data.pop("format", None)
    return data


def result_json(r: RecallResult) -> dict[str, Any]:
    m = r.memory
    return {
        "id": m.id,
        "content": m.content,
        "kind": m.kind.value,
        "owner": m.owner,
        "score": r.score,
        "explanation": r.explanation.as_dict(),
        "confidence": m.confidence,
        "observed_at": iso(m.observed_at),
        "session_id": m.provenance.session_id,
        "source": m.provenance.source.value,
        "status": m.status.value,
        "attribute": m.attribute,
        "valid_to": iso(m.valid_to),
        "superseded_by": m.superseded_by,
        "metadata": m.metadata,
    }


def retain_json(r: RetainResult) -> dict[str, Any]:
    return {
        "episodes": r.episodes,
        "created": r.created,
        "updated": r.updated,
        "superseded": [{"old": old, "new": new} for old, new in r.superseded],
    }


def receipt_json(r: ForgetReceipt) -> dict[str, Any]:
    return {
        "receipt": r.id,
        "count": r.count,
        "deleted": len(r.deleted_ids),
        "derived": len(r.derived_ids),
        "deleted_ids": r.deleted_ids,
        "derived_ids": r.derived_ids,
        "at": r.at,
        "criteria": r.criteria,
    }


def turn_json(t: WorkingTurn) -> dict[str, Any]:
    return {
        "seq": t.seq,
        "role": t.role,
        "content": t.content,
        "tokens": t.tokens,
        "created_at": t.created_at,
        "expires_at": t.expires_at,
        "speaker": t.speaker,
        "tool_name": t.tool_name,
        "metadata": t.metadata,
    }


def short(text: str, width: int) -> str:
    """One line of at most ``width`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 3] + "..."


def retain_lines(r: RetainResult) -> list[str]:
    if not (r.episodes or r.created or r.updated or r.superseded):
        return ["nothing kept"]
    lines = [f"kept {len(r.episodes)} episode(s): {' '.join(r.episodes) or '-'}"]
    lines.append(f"created {len(r.created)}: {' '.join(r.created) or '-'}")
    lines.append(f"updated {len(r.updated)}: {' '.join(r.updated) or '-'}")
    pairs = " ".join(f"{old} -> {new}" for old, new in r.superseded)
    lines.append(f"superseded {len(r.superseded)}: {pairs or '-'}")
    return lines


def why(r: RecallResult) -> str:
    """The channel ranks and boosts behind a result's score, on one line."""
    parts = []
    for name, hit in r.explanation.channels.items():
        if name == "dense":
            parts.append(f"dense #{hit.rank} (cos {hit.score:.3f})")
        elif name == "bm25":
            parts.append(f"bm25 #{hit.rank} ({hit.score:.2f})")
        else:
            parts.append(f"{name} #{hit.rank}")
    boosts = " ".join(f"{name} x{v:.2f}" for name, v in r.explanation.boosts.items())
    owner = r.explanation.owner_weight
    weight = f"; owner weight x{owner:g}" if owner != 1.0 else ""
    return f"{', '.join(parts) or 'no channel'}; boosts {boosts}{weight}"


def print_results(results: Sequence[RecallResult], *, show_owner: bool = False) -> None:
    if not results:
        click.echo("no results")
        return
    for i, r in enumerate(results, start=1):
        m = r.memory
        owner = f"  {m.owner}" if show_owner else ""
        old = "  (superseded)" if m.valid_to is not None else ""
        click.echo(f"{i:>2}. [{m.kind.value}] {m.content}")
        click.echo(
            f"    score {r.score:.4f}  confidence {m.confidence:.2f}  "
            f"observed {iso(m.observed_at)}  {m.id}{owner}{old}"
        )
        click.echo(f"    why: {why(r)}")


def print_memory(m: Memory) -> None:
    for key, value in memory_json(m).items():
        if isinstance(value, dict | list):
            value = dumps(value)
        click.echo(f"{key + ':':<18}{'-' if value is None else value}")


# -- input helpers ---------------------------------------------------------------------------
def read_text(text: str, *, limit_chars: int) -> str:
    """TEXT, or stdin decoded strictly as UTF-8 when TEXT is ``-``."""
    if text != "-":
        return text
    cap = limit_chars * 4 + 4096  # UTF-8 is at most 4 bytes a character, plus some padding
    data = sys.stdin.buffer.read(cap + 1) if sys.stdin is not None else b""
    if len(data) > cap:
        raise ValidationError(
            f"stdin holds more than {cap} bytes; the limit is {limit_chars} characters"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"stdin is not valid UTF-8 (byte {exc.start}: {exc.reason})"
        ) from None


def parse_metadata(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"--metadata is not valid JSON: {exc.msg} (column {exc.colno})"
        ) from None
    if not isinstance(value, dict):
        raise ValidationError('--metadata must be a JSON object, e.g. \'{"topic": "music"}\'')
    return value


def stdin_is_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")(f)


def owner_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--owner",
        required=True,
        metavar="OWNER",
        help="Whose memory, as namespace:name, e.g. user:alice.",
    )(f)


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
    )
    if as_json:
        emit_json(retain_json(result))
    else:
        click.echo("\n".join(retain_lines(result)))


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
    )
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
    yes: bool,
    as_json: bool,
) -> None:
    """Delete memories, and what was derived only from them.

    With no --id, --session, --since or --until, everything of OWNER goes,
    working memory included. On a terminal that asks first; otherwise it
    refuses unless --yes is given, so a script must opt in.
    """
    owner = validate.owner(owner)
    hs = app.engine
    if memory_id is not None:
        if session_id or since or until:
            raise click.UsageError("--id cannot be combined with --session, --since or --until")
        receipt = hs.forget(memory_id, owner=owner)
    else:
        if session_id is None and since is None and until is None and not yes:
            _confirm_forget_all(hs, owner)
        receipt = hs.forget(owner=owner, session_id=session_id, since=since, until=until)
    if as_json:
        emit_json(receipt_json(receipt))
    else:
        click.echo(
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
        emit_json({"memories": [memory_json(m) for m in memories]})
        return
    if not memories:
        click.echo("no memories")
    for m in memories:
        old = " (superseded)" if m.valid_to is not None else ""
        click.echo(
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
        emit_json(memory_json(memory))
    else:
        print_memory(memory)


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
    for key, value in data.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in sorted(value.items())) or "-"
        click.echo(f"{key + ':':<17}{'-' if value is None else value}")


@cli.command()
@click.option("--content", help="New content ('-' reads stdin); it is re-embedded.")
@click.option("--metadata", "metadata_json", metavar="JSON", help="Replace the metadata.")
@click.option("--confidence", type=float, metavar="X", help="New confidence (0..1).")
@click.option("--status", type=STATUSES, help="New status.")
@json_option
@click.argument("memory_id", metavar="ID")
@click.pass_obj
def update(
    app: App,
    content: str | None,
    metadata_json: str | None,
    confidence: float | None,
    status: str | None,
    as_json: bool,
    memory_id: str,
) -> None:
    """Change one memory in place."""
    if content is None and metadata_json is None and confidence is None and status is None:
        raise click.UsageError(
            "nothing to update: give --content, --metadata, --confidence or --status"
        )
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
    )
    if as_json:
        emit_json(memory_json(memory))
    else:
        print_memory(memory)


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
            click.echo(dumps(record))


@cli.command("import")
@json_option
@click.argument("file", type=click.File("rb"))
@click.pass_obj
def import_(app: App, as_json: bool, file: BinaryIO) -> None:
    """Load memories from FILE of JSON lines ('-' for stdin); known ids are skipped.

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
            counts = hs.import_records(items)
    except ValidationError as exc:
        prefix = f"record {at}: "
        if at and str(exc).startswith(prefix):
            raise ValidationError(f"line {lines[at - 1]}: {str(exc)[len(prefix) :]}") from None
        raise
    if as_json:
        emit_json(counts)
    else:
        click.echo(f"imported {counts['imported']}, skipped {counts['skipped']} already known")


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
@json_option
@click.argument("text")
@click.pass_obj
def session_add(app: App, owner: str, session_id: str, role: str, as_json: bool, text: str) -> None:
    """Add a turn to a session's window ('-' reads stdin).

    The window moves to long-term memory when it is full, or at once on a
    correction or a tool failure.
    """
    content = read_text(text, limit_chars=app.settings().max_content_chars)
    hs = app.engine
    result = hs.observe(owner, session_id, content, role=role)
    window = hs.window(owner, session_id)
    if as_json:
        emit_json(
            {
                "owner": owner,
                "session_id": session_id,
                "window_turns": len(window),
                "consolidated": result is not None,
                "retained": None if result is None else retain_json(result),
            }
        )
        return
    click.echo(f"added to {session_id}; {len(window)} turn(s) in the window")
    if result is not None:
        click.echo("the window moved to long-term memory:")
        click.echo("\n".join(retain_lines(result)))


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
            {"owner": owner, "session_id": session_id, "turns": [turn_json(t) for t in turns]}
        )
        return
    if not turns:
        click.echo("no turns")
    for t in turns:
        click.echo(
            f"{t.seq:>5}  {t.created_at:%Y-%m-%d %H:%M:%S}  {t.role:<9} {short(t.content, 80)}"
        )


@session.command("close")
@owner_option
@click.option("--session", "session_id", required=True, metavar="ID", help="The session.")
@json_option
@click.pass_obj
def session_close(app: App, owner: str, session_id: str, as_json: bool) -> None:
    """End a session: move what is left of its window to long-term memory."""
    result = app.engine.close_session(owner, session_id)
    if as_json:
        emit_json(retain_json(result))
    else:
        click.echo("\n".join(retain_lines(result)))


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
        click.echo("no open sessions")
    for sid, turns, tokens in rows:
        click.echo(f"{sid}  {turns} turns  ~{tokens} tokens")


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
                    "retained": [retain_json(r) for r in run.retained],
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


# -- benchmarks ----------------------------------------------------------------------------
@cli.group()
def bench() -> None:
    """Measure speed and recall quality through the code users run."""


@bench.command("scale")
@click.option(
    "--n",
    "n",
    type=click.IntRange(1, 10_000_000),
    default=100_000,
    show_default=True,
    help="How many memories to build the store with.",
)
@click.option(
    "--queries",
    type=click.IntRange(1, 100_000),
    default=200,
    show_default=True,
    help="How many recalls to time.",
)
@json_option
@click.pass_obj
def bench_scale(app: App, n: int, queries: int, as_json: bool) -> None:
    """Ingest N generated memories for one owner, then time recalls on that store.

    Runs in a fresh temporary store unless --home is given on the group.
    """
    from hindsight.bench import scale

    with contextlib.ExitStack() as stack:
        home = app.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hs-b-")))
        bar = stack.enter_context(app.progress(range(n), length=n, label="ingesting"))
        step = getattr(bar, "update", None)
        result = scale.run(app.settings(home), n, queries=queries, progress=step)
    if as_json:
        emit_json(result.as_dict())
        return
    for key, value in result.as_dict().items():
        click.echo(f"{key:>20}  {value}")


def _limit_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--limit",
        type=click.IntRange(1, None),
        metavar="N",
        help="Only the first N conversations.",
    )(f)


def _out_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--out",
        type=click.Path(dir_okay=False, writable=True, path_type=Path),
        metavar="FILE",
        help="Also write the JSON report to FILE.",
    )(f)


def _bench_quality(
    app: App, name: str, path: Path, *, limit: int | None, as_json: bool, out: Path | None
) -> None:
    """Load a benchmark, run it in a store (temporary unless --home), print the report."""
    from hindsight.bench import datasets, quality

    dataset = datasets.LOADERS[name](path, limit=limit)
    with contextlib.ExitStack() as stack:
        home = app.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hs-q-")))
        total = quality.work(dataset)
        bar = stack.enter_context(app.progress(range(total), length=total, label=name))
        report = quality.run(app.settings(home), dataset, progress=getattr(bar, "update", None))
    data = report.as_dict()
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(dumps(data) + "\n", encoding="utf-8")
    if as_json:
        emit_json(data)
    else:
        click.echo("\n".join(quality.table(report)))


@bench.command("locomo")
@_limit_option
@json_option
@_out_option
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_obj
def bench_locomo(app: App, limit: int | None, as_json: bool, out: Path | None, path: Path) -> None:
    """Turn-level recall on LoCoMo (PATH is its locomo10.json), against BM25 and dense.

    Each conversation is retained into its own owner through the normal write
    path, then every question is recalled with default settings; BM25-only and
    dense-only searches over the same turns run in the same store. Runs in a
    fresh temporary store unless --home is given on the group.
    """
    _bench_quality(app, "locomo", path, limit=limit, as_json=as_json, out=out)


@bench.command("beam")
@_limit_option
@json_option
@_out_option
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.pass_obj
def bench_beam(app: App, limit: int | None, as_json: bool, out: Path | None, path: Path) -> None:
    """Turn-level recall on BEAM (PATH holds <n>/chat.json folders), against BM25 and dense.

    Each conversation is retained into its own owner (a batch is a session),
    then every probing question with source messages is recalled with default
    settings. Also reports how often a knowledge update ranks above the
    information it replaced. Runs in a fresh temporary store unless --home is
    given on the group.
    """
    _bench_quality(app, "beam", path, limit=limit, as_json=as_json, out=out)


def main(argv: Sequence[str] | None = None) -> None:
    """The ``hindsight`` console script."""
    cli.main(args=argv, prog_name="hindsight")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
