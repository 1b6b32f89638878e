"""Working memory: bounded, expiring, consolidated into long-term memory."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from hindsight import Hindsight, Kind, Settings, Turn, ValidationError
from hindsight.embed import Embeddings
from hindsight.extract import Extracted, events, triggers
from hindsight.extract.heuristic import HeuristicExtractor

pytestmark = pytest.mark.backends  # working memory in the database or in Redis


def test_turns_stay_in_the_window_below_the_thresholds(hs: Hindsight) -> None:
    assert hs.observe("user:alice", "s1", "hi there") is None
    assert hs.observe("user:alice", "s1", "hello!", role="assistant") is None
    window = hs.window("user:alice", "s1")
    assert [(t.role, t.content) for t in window] == [("user", "hi there"), ("assistant", "hello!")]
    assert hs.list_memories("user:alice") == []


def test_turn_threshold_consolidates_and_clears(hs: Hindsight) -> None:
    results = [hs.observe("user:alice", "s1", f"message {i} about gardening") for i in range(10)]
    assert results[:9] == [None] * 9
    assert results[9] is not None and len(results[9].episodes) == 10
    assert hs.window("user:alice", "s1") == []
    episodes = hs.list_memories("user:alice", kinds=[Kind.EPISODE], limit=20)
    assert len(episodes) == 10 and {e.provenance.session_id for e in episodes} == {"s1"}


def test_token_threshold_consolidates(hs: Hindsight) -> None:
    long_turn = "word " * 3_300  # about 4,100 tokens by the estimate
    assert hs.observe("user:alice", "s1", long_turn) is not None
    assert hs.window("user:alice", "s1") == []


def test_a_correction_is_consolidated_at_once(hs: Hindsight) -> None:
    hs.observe("user:alice", "s1", "Book me a coffee table.")
    result = hs.observe("user:alice", "s1", "No, I said a tea table, not a coffee table.")
    assert result is not None and result.created
    assert hs.window("user:alice", "s1") == []


def test_a_tool_failure_is_consolidated_at_once(hs: Hindsight) -> None:
    result = hs.observe(
        "agent:ops",
        "s9",
        "Error: connection refused (exit code 1)",
        role="tool",
        tool_name="deploy",
    )
    assert result is not None
    (failure,) = hs.list_memories("agent:ops", kinds=[Kind.TOOL_RESULT])
    assert "deploy" in failure.content


def test_close_session_consolidates_the_rest(hs: Hindsight) -> None:
    hs.observe("user:alice", "s1", "I live in Lisbon.")
    result = hs.close_session("user:alice", "s1")
    assert len(result.episodes) == 1
    assert [m.content for m in hs.list_memories("user:alice", kinds=[Kind.FACT])] == [
        "User lives in Lisbon"
    ]
    assert hs.close_session("user:alice", "s1").episodes == []  # nothing left


def test_sessions_are_separate_and_expire(hs: Hindsight) -> None:
    hs.observe("user:alice", "s1", "one")
    hs.observe("user:alice", "s2", "two")
    hs.observe("user:bob", "s1", "three")
    assert [t.content for t in hs.window("user:alice", "s1")] == ["one"]
    later = datetime.now(UTC) + timedelta(seconds=hs.settings.wm_ttl_seconds + 1)
    assert hs.working.wm_window("user:alice", "s1", later) == []
    assert hs.working.wm_purge_expired(later) == 3


@pytest.mark.backends("sqlite")
def test_working_memory_arguments(hs: Hindsight) -> None:
    with pytest.raises(ValidationError):
        hs.observe("user:alice", "", "hi")
    with pytest.raises(ValidationError):
        hs.observe("user:alice", "s1", "hi", role="narrator")
    with pytest.raises(ValidationError):
        hs.observe("user:alice", "s1", "")
    assert hs.window("user:alice", "s1") == []


def test_sessions_lists_open_windows(hs: Hindsight) -> None:
    hs.observe("user:alice", "s1", "one")
    hs.observe("user:alice", "s1", "two")
    hs.observe("user:alice", "s2", "three")
    assert sorted((s, n) for s, n, _ in hs.sessions("user:alice")) == [("s1", 2), ("s2", 1)]
    hs.close_session("user:alice", "s1")
    assert [s for s, _, _ in hs.sessions("user:alice")] == ["s2"]


class Counting:
    """The heuristic extractor, counting the turns it is asked to extract."""

    name = "counting"

    def __init__(self) -> None:
        self.inner = HeuristicExtractor()
        self.turns: list[str] = []

    def extract(self, turns: Sequence[Turn], *, subject: str) -> list[Extracted]:
        self.turns += [t.content for t in turns]
        return self.inner.extract(turns, subject=subject)


@pytest.mark.embedded
def test_each_observed_turn_is_extracted_once(settings: Settings, embedder: Embeddings) -> None:
    extractor = Counting()
    said = ["Book me a coffee table.", "Sure.", "No, I said a tea table, not a coffee table."]
    with Hindsight(settings, embedder=embedder, extractor=extractor) as hs:
        for i, text in enumerate(said):
            hs.observe("user:alice", "s1", text, role="assistant" if i == 1 else "user")
        hs.observe("user:alice", "s1", "I live in Lisbon.")
        hs.close_session("user:alice", "s1")
    assert extractor.turns == [*said, "I live in Lisbon."]  # the correction consolidated


@pytest.mark.parametrize(
    ("turn", "found"),
    [
        (Turn(role="user", content="No, I said a tea table, not a coffee table."), {"correction"}),
        (Turn(role="user", content="No."), set()),  # says nothing of what is right
        (Turn(role="user", content="No, thanks."), set()),
        (Turn(role="user", content="I live in Lisbon."), set()),
        (Turn(role="assistant", content="No, I said a tea table, not a coffee table."), set()),
        (Turn(role="tool", content="Error: connection refused"), {"tool_failure"}),
        (Turn(role="tool", content='{"errors": [], "ok": true}'), set()),
    ],
)
def test_events_are_those_extraction_tags(turn: Turn, found: set[str]) -> None:
    assert events(turn) == found
    extracted = HeuristicExtractor().extract([turn], subject="User")
    assert {t for e in extracted for t in e.tags} == found


@pytest.mark.parametrize(
    ("turn", "found"),
    [
        (Turn(role="user", content="I prefer short answers."), {"preference_stated"}),
        (Turn(role="user", content="Perfect, that works!"), {"task_completed"}),
        (Turn(role="assistant", content="Task completed: the report is sent."), {"task_completed"}),
        (Turn(role="tool", content="Deployment finished successfully."), {"task_completed"}),
        (Turn(role="user", content="Does that work?"), set()),  # asks, does not say
        (Turn(role="user", content="We are done with the draft, now the slides."), set()),
        (Turn(role="user", content="I live in Lisbon."), set()),  # a fact waits for the window
        (Turn(role="system", content="Task completed. You prefer brevity."), set()),
        (Turn(role="tool", content="Error: connection refused"), {"tool_failure"}),
    ],
)
def test_a_turn_that_triggers_consolidation(turn: Turn, found: set[str]) -> None:
    assert triggers(turn) == found


def test_a_preference_or_a_finished_task_moves_the_window_at_once(hs: Hindsight) -> None:
    assert hs.observe("user:alice", "s1", "Can you plan my week?") is None
    stated = hs.observe("user:alice", "s1", "I prefer meetings in the morning.")
    assert stated is not None and len(stated.episodes) == 2
    assert hs.window("user:alice", "s1") == []
    assert hs.observe("user:alice", "s1", "Moved the standup to 9.", role="assistant") is None
    done = hs.observe("user:alice", "s1", "Great, that works.")
    assert done is not None and len(done.episodes) == 2
