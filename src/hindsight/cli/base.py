"""What every command shares: errors mapped once, the app state, output and input helpers.

Everything a command prints goes through :func:`echo` (people) or :func:`emit_json`
(scripts): both escape the control characters that stored text may hold, so a memory's
content, a reason or a name can never drive the terminal that shows it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Final, TypeVar

import click
import pydantic

from hindsight import views
from hindsight.config import Settings
from hindsight.engine import Hindsight
from hindsight.errors import HindsightError, NotFoundError, ValidationError
from hindsight.models import (
    HELD,
    ForgetReceipt,
    Kind,
    Memory,
    RecallResult,
    RetainResult,
    Source,
    Status,
)

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
        # one line, whatever a library message quotes
        click.echo(f"error: {cell(self.format_message())}", file=file or sys.stderr)


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
    # a server runs the LLM job queue in a worker thread; a command, over in a moment,
    # must not wait for a model on its way out (`hindsight jobs wait` runs the queue)
    worker: bool = False

    def settings(self, home: Path | None = None) -> Settings:
        home = home or self.home
        return Settings() if home is None else Settings(home=home)

    @property
    def engine(self) -> Hindsight:
        if self._engine is None:
            settings = self.settings()
            if not self.worker:
                settings = settings.model_copy(update={"llm_worker": False})
            self._engine = Hindsight(settings)
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
            echo(message, err=True)


# -- output: the one place stored text is made safe to print ----------------------------------
# C0 controls (BEL, BS, ESC, CR...), DEL and C1 controls (CSI) would be obeyed by a terminal;
# the bidirectional overrides and isolates would reorder what it shows (a spoofed line).
_UNSAFE: Final = "\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_CONTROL: Final = re.compile(f"[{_UNSAFE}]")
_CONTROL_BUT_LINES: Final = re.compile(f"(?![\n\t])[{_UNSAFE}]")
# what JSON text keeps raw (the encoder escapes C0 itself); escaped there as \uXXXX, which
# only occurs inside strings, so the JSON read back is the same
_JSON_RAW: Final = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with its control characters shown as escapes (``\\x1b``); newlines and
    tabs kept, for a multi-line display."""
    return _CONTROL_BUT_LINES.sub(_escaped, text)


def cell(text: str) -> str:
    """``text`` for one line (a table cell): every control character escaped, newlines
    and tabs too."""
    return _CONTROL.sub(_escaped, text)


def echo(text: str = "", *, err: bool = False) -> None:
    """Print ``text`` for people: every command's human output passes here."""
    click.echo(printable(text), err=err)


def dumps(data: object) -> str:
    """The one JSON encoder of the CLI: UTF-8, ISO 8601 datetimes; DEL, C1 controls and
    the bidirectional controls escaped (the encoder escapes the C0 ones)."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", views.dumps(data))


def emit_json(data: object) -> None:
    click.echo(dumps(data))


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def result_json(r: RecallResult) -> dict[str, Any]:
    """A memory as exported, with its score and why, and its session and source at the top."""
    m = r.memory
    return {
        **views.memory(m),
        "session_id": m.provenance.session_id,
        "source": m.provenance.source.value,
        "score": r.score,
        "explanation": views.explanation(r.explanation),
    }


def receipt_json(r: ForgetReceipt) -> dict[str, Any]:
    data = views.receipt(r)
    return {
        "receipt": data.pop("id"),
        **data,
        "deleted": len(r.deleted_ids),
        "derived": len(r.derived_ids),
    }


def short(text: str, width: int) -> str:
    """One line of at most ``width`` characters (whitespace runs become one space)."""
    line = cell(" ".join(text.split()))
    return line if len(line) <= width else line[: width - 3] + "..."


HELD_NOTE: Final = (
    "a held memory is not recalled until a reviewer approves it (see 'hindsight review list')"
)


def held_line(memory_id: str, status: Status, reason: str | None) -> str:
    """One held memory in plain words: quarantined or held for review, and why."""
    what = "quarantined" if status is Status.QUARANTINED else "held for review"
    return f"{memory_id} {what}: {cell(reason or 'no reason recorded')}"


def retain_lines(r: RetainResult) -> list[str]:
    if not (r.episodes or r.created or r.updated or r.superseded):
        return ["nothing kept"]
    lines = [f"kept {len(r.episodes)} episode(s): {' '.join(r.episodes) or '-'}"]
    lines.append(f"created {len(r.created)}: {' '.join(r.created) or '-'}")
    lines.append(f"updated {len(r.updated)}: {' '.join(r.updated) or '-'}")
    pairs = " ".join(f"{old} -> {new}" for old, new in r.superseded)
    lines.append(f"superseded {len(r.superseded)}: {pairs or '-'}")
    held = r.held
    lines += [held_line(mid, r.status[mid], r.reasons.get(mid)) for mid in held]
    if held:
        lines.append(HELD_NOTE)
    return lines


def memory_held_lines(m: Memory) -> list[str]:
    """What to say after showing a memory a command wrote: nothing, unless it is held."""
    if m.status not in HELD:
        return []
    return [held_line(m.id, m.status, m.review.reason if m.review else None), HELD_NOTE]


def why(r: RecallResult) -> str:
    """The channel ranks and boosts behind a result's score, on one line."""
    parts = []
    for name, hit in r.explanation.channels.items():
        if name == "dense":
            parts.append(f"dense #{hit.rank} (cos {hit.score:.3f})")
        elif name == "bm25":
            parts.append(f"bm25 #{hit.rank} ({hit.score:.2f})")
        elif name == "reply":
            parts.append(f"the reply to a question that matched (#{hit.rank})")
        else:
            parts.append(f"{name} #{hit.rank}")
    boosts = " ".join(f"{name} x{v:.2f}" for name, v in r.explanation.boosts.items())
    used = r.explanation.confidence
    if used is not None and round(used, 2) != round(r.memory.confidence, 2):
        boosts += f" (confidence {r.memory.confidence:.2f} decayed to {used:.2f})"
    owner = r.explanation.owner_weight
    weight = f"; owner weight x{owner:g}" if owner != 1.0 else ""
    rerank = views.reranked(r.explanation.rerank)
    return f"{', '.join(parts) or 'no channel'}; boosts {boosts}{weight}{rerank}"


def print_results(results: Sequence[RecallResult], *, show_owner: bool = False) -> None:
    if not results:
        echo("no results")
        return
    for i, r in enumerate(results, start=1):
        m = r.memory
        owner = f"  {m.owner}" if show_owner else ""
        old = "  (superseded)" if m.valid_to is not None else ""
        echo(f"{i:>2}. [{m.kind.value}] {_indented(m.content, 4)}")
        echo(
            f"    score {r.score:.4f}  confidence {m.confidence:.2f}  "
            f"observed {iso(m.observed_at)}  {m.id}{owner}{old}"
        )
        echo(f"    why: {why(r)}")


_FIELD_WIDTH: Final = 18


def _indented(text: str, width: int) -> str:
    """A multi-line value whose later lines are indented by ``width``, so no line of it
    can pass for a line of the display around it."""
    return text.replace("\n", "\n" + " " * width)


def print_memory(m: Memory) -> None:
    for key, value in views.memory(m).items():
        if isinstance(value, dict | list):
            value = dumps(value)
        shown = "-" if value is None else _indented(str(value), _FIELD_WIDTH)
        echo(f"{key + ':':<{_FIELD_WIDTH}}{shown}")


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


def request_id_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--request-id",
        metavar="KEY",
        help="Make the write once under KEY: the same command again stores nothing twice.",
    )(f)
