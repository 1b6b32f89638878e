"""``hindsight demo``: a short sample conversation, retained and then recalled.

Two sessions a month apart: the user states preferences and facts, a tool
fails, then the user moves house (which supersedes the old location) and
corrects the agent. The recalls show what came back and why.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

import click

from hindsight import views
from hindsight.cli.base import App, echo, emit_json, json_option, print_results, result_json
from hindsight.cli.group import cli
from hindsight.engine import Hindsight
from hindsight.models import RecallResult, RetainResult

OWNER: Final = "user:demo"


@dataclass(frozen=True, slots=True)
class Line:
    role: str
    content: str
    tool_name: str | None = None


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str
    days_ago: int
    lines: tuple[Line, ...]


SESSIONS: Final = (
    Session(
        "demo-1",
        30,
        (
            Line("user", "Hi! I live in Lisbon and I work as a nurse."),
            Line("assistant", "Nice to meet you. How can I help?"),
            Line("user", "I love jazz, especially Coltrane. I hate loud pop music."),
            Line("user", "I am vegetarian, so please keep recipes meat-free."),
            Line("assistant", "Let me check the weather for your weekend."),
            Line(
                "tool",
                "Error: weather API request timed out after 30 seconds.",
                tool_name="weather",
            ),
        ),
    ),
    Session(
        "demo-2",
        0,
        (
            Line("user", "Big news! I moved to Berlin last week."),
            Line("assistant", "Congratulations! Shall I add soy milk to your shopping list?"),
            Line("user", "No, I drink oat milk, not soy milk."),
            Line("user", "I prefer short answers without emojis."),
        ),
    ),
)

QUERIES: Final = (
    "Where does the user live?",
    "What music does the user like?",
    "What milk should I buy for the user?",
    "Which tool calls failed?",
)


@dataclass(slots=True)
class DemoRun:
    retained: list[RetainResult] = field(default_factory=list)
    superseded: list[tuple[str, str]] = field(default_factory=list)  # (old, new) contents
    recalls: list[tuple[str, list[RecallResult]]] = field(default_factory=list)


def run(hs: Hindsight, *, k: int = 3, now: datetime | None = None) -> DemoRun:
    """Retain the sample sessions for :data:`OWNER`, then run :data:`QUERIES`."""
    now = now or datetime.now(UTC)
    result = DemoRun()
    for session in SESSIONS:
        when = now - timedelta(days=session.days_ago)
        messages = [
            {
                "role": line.role,
                "content": line.content,
                "tool_name": line.tool_name,
                "observed_at": when + timedelta(minutes=i),
            }
            for i, line in enumerate(session.lines)
        ]
        kept = hs.retain(OWNER, messages=messages, session_id=session.session_id)
        result.retained.append(kept)
        result.superseded += [
            (hs.get(old).content, hs.get(new).content) for old, new in kept.superseded
        ]
    for query in QUERIES:
        result.recalls.append((query, hs.recall(OWNER, query, k=k)))
    return result


def print_run(
    run: DemoRun,
    *,
    home: Path | None,
    show_results: Callable[[Sequence[RecallResult]], None],
) -> None:
    """Print the conversation, what was kept, and each recall via ``show_results``."""
    where = f"in {home}" if home else "in a temporary store (use --home DIR to keep it)"
    echo(f"hindsight demo: a sample conversation for {OWNER}, {where}\n")
    for session, retained in zip(SESSIONS, run.retained, strict=True):
        ago = f"{session.days_ago} days ago" if session.days_ago else "today"
        echo(f"session {session.session_id} ({ago}):")
        for line in session.lines:
            echo(f"  {line.role:>9}: {line.content}")
        echo(
            f"  -> kept {len(retained.episodes)} turns verbatim, extracted "
            f"{len(retained.created)} memories, merged {len(retained.updated)}, "
            f"superseded {len(retained.superseded)}\n"
        )
    for old, new in run.superseded:
        echo(f'"{new}" superseded "{old}": the old fact is kept as history only.')
    if run.superseded:
        echo()
    for query, results in run.recalls:
        echo(f'recall "{query}"')
        show_results(results)
        echo()
    echo("'why' lists each search channel's rank and score (dense = meaning, bm25 = words,")
    echo("reply = the answer to a question that matched) and the boosts (confidence, source,")
    echo("recency, and time when the query names one) that turned the fused score")
    echo("into the score.")


@cli.command("demo")
@click.option(
    "--home",
    "demo_home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the demo's store here (default: a temporary directory, removed after).",
)
@json_option
@click.pass_obj
def demo(app: App, demo_home: Path | None, as_json: bool) -> None:
    """Retain a sample conversation for user:demo, then recall from it with explanations.

    It runs offline in a fresh temporary store unless --home is given (on the
    command or the group); HINDSIGHT_HOME is ignored, so your data is never touched.
    """
    home = demo_home or app.home
    with contextlib.ExitStack() as stack:
        if home is None:
            home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hindsight-demo-")))
        hs = stack.enter_context(Hindsight(app.settings(home)))
        outcome = run(hs)
        if as_json:
            emit_json(
                {
                    "home": str(home) if demo_home or app.home else None,
                    "owner": OWNER,
                    "retained": [views.retained(r) for r in outcome.retained],
                    "recalls": [
                        {"query": q, "results": [result_json(r) for r in results]}
                        for q, results in outcome.recalls
                    ],
                }
            )
        else:
            print_run(
                outcome, home=home if demo_home or app.home else None, show_results=print_results
            )
