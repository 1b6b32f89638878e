"""Current facts first: what recall says now is what is true now (issue 14's four cases)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from test_cli import OWNER, retain, run_json

from hindsight import Hindsight, Kind, Status
from hindsight.models import ChannelHit, Explanation, Memory, Provenance, RecallResult, Source
from hindsight.recall.rank import current_first, fuse_minmax, successors_first
from hindsight.text.terms import query_terms, text_terms


def test_a_move_outranks_the_turn_that_states_the_old_city(hs: Hindsight) -> None:
    hs.retain("user:alice", "I live in Paris and I love jazz.")
    hs.retain("user:alice", "I moved to Berlin.")
    results = hs.recall("user:alice", "where does she live?")
    contents = [r.memory.content for r in results]
    assert "Berlin" in contents[0], contents
    paris = contents.index("I live in Paris and I love jazz.")
    assert all("Berlin" in c for c in contents[:paris]) and paris >= 2
    # the turn still says something current ("I love jazz"): half its values are outdated
    assert results[paris].explanation.boosts["outdated"] == pytest.approx(0.75)


def test_a_keyword_match_on_a_word_every_memory_has_counts_for_nothing() -> None:
    ranked = {
        "dense": {"a": ChannelHit(1, 0.5), "b": ChannelHit(2, 0.4), "c": ChannelHit(3, 0.1)},
        "bm25": {"a": ChannelHit(1, 1e-6), "c": ChannelHit(2, 1e-6)},
    }
    fused = fuse_minmax(ranked)
    assert fused["a"] == pytest.approx(1.0, abs=1e-5) and fused["c"] < fused["b"]
    strong = {**ranked, "bm25": {"c": ChannelHit(1, 7.0), "a": ChannelHit(2, 3.0)}}
    assert fuse_minmax(strong)["c"] == pytest.approx(1.0)  # a real match counts in full


def test_a_changed_taste_supersedes_the_old_one(hs: Hindsight) -> None:
    hs.retain("user:bob", "I hate coffee")
    result = hs.retain("user:bob", "Actually I now love coffee")
    prefs = hs.list_memories("user:bob", kinds=["preference"], include_history=True)
    by_text = {m.content: m for m in prefs}
    assert set(by_text) == {"User hates coffee", "User loves coffee"}
    old, new = by_text["User hates coffee"], by_text["User loves coffee"]
    assert old.superseded_by == new.id and (old.id, new.id) in result.superseded
    # the user changed their mind; the assistant was not corrected
    assert "tags" not in new.metadata
    assert not any("corrected" in m.content for m in hs.list_memories("user:bob"))
    contents = [r.memory.content for r in hs.recall("user:bob", "does he like coffee?")]
    assert contents[0] == "User loves coffee"
    assert contents.index("Actually I now love coffee") < contents.index("I hate coffee")


def test_another_persons_value_retires_nothing(hs: Hindsight) -> None:
    hs.retain(
        "chat:1",
        messages=[
            {"role": "user", "speaker": "Caroline", "content": "I live in Boston."},
            {"role": "user", "speaker": "Melanie", "content": "I live in Denver."},
        ],
    )
    facts = hs.list_memories("chat:1", kinds=["fact"], include_history=True)
    assert sorted(m.content for m in facts) == [
        "Caroline lives in Boston",
        "Melanie lives in Denver",
    ]
    assert all(m.superseded_by is None for m in facts)


def test_a_correction_of_the_assistant_is_still_one(hs: Hindsight) -> None:
    hs.retain("user:carl", "No, I live in Berlin.")
    (fact,) = hs.list_memories("user:carl", kinds=["fact"])
    assert fact.metadata["tags"] == ["correction"]


def _result(
    mid: str, text: str, score: float, day: int, source: Source = Source.USER
) -> RecallResult:
    when = datetime(2024, 3, 1, tzinfo=UTC) + timedelta(days=day)
    memory = Memory(
        id=mid,
        owner="user:x",
        kind=Kind.EPISODE,
        content=text,
        confidence=1.0,
        provenance=Provenance(source=source),
        observed_at=when,
        created_at=when,
        updated_at=when,
    )
    why = Explanation(channels={}, fused=score, boosts={}, final=score)
    return RecallResult(memory=memory, score=score, explanation=why)


QUERY = "What is the test coverage percentage for my API integration module?"


def _order(results: list[RecallResult]) -> list[str]:
    ranked = current_first(results, query_terms(QUERY), text_terms)
    return [r.memory.id for r in ranked]


def test_what_superseded_a_turns_value_reads_before_the_turn_however_close_the_scores() -> None:
    results = [
        _result("paris", "I live in Paris and I love jazz", 0.826, 0),
        _result("berlin", "User moved to Berlin", 0.825, 5),
        _result("lisbon", "User moved to Lisbon", 0.5, 6),
        _result("jazz", "User loves jazz", 0.4, 0),
    ]
    successors = {"paris": {"berlin", "lisbon", "elsewhere"}, "jazz": {"paris"}}
    ranked = successors_first(results, successors)
    assert [r.memory.id for r in ranked] == ["berlin", "lisbon", "paris", "jazz"]
    assert ranked[0].explanation.boosts["update"] > 1  # the explanation says why
    assert successors_first(ranked, successors) == ranked  # already in order: unmoved
    fresh = [
        _result("paris", "I live in Paris", 0.9, 0),
        _result("berlin", "User moved to Berlin", 0.8, 5),
        _result("lisbon", "User moved to Lisbon", 0.7, 6),
    ]
    windowed = successors_first(fresh, {"paris": {"berlin", "lisbon"}}, window=2)
    assert [r.memory.id for r in windowed] == ["berlin", "paris", "lisbon"]  # in the window only


def test_a_newer_statement_of_a_change_moves_above_the_older() -> None:
    results = [
        _result("old", "I've reached 65% test coverage on my API integration module", 2.0, 0),
        _result("other", "My API uses OAuth tokens", 1.5, 1),
        _result("new", "My API integration test coverage has recently improved to 78%", 1.2, 5),
    ]
    assert _order(results) == ["new", "old", "other"]
    assert results[2].explanation.boosts["update"] > 1  # the explanation says why


@pytest.mark.parametrize(
    ("old_text", "new_text", "moves"),
    [
        # another count of the same thing, with no word of change
        (
            "I secured 3 API integration test interviews",
            "I secured 5 API integration test interviews",
            True,
        ),
        # about something else: too few of the query's words shared with the older
        ("My API integration test coverage is 65%", "I recently moved to a new flat", False),
        # no change said and no other value: a restatement keeps its place
        (
            "My API integration test coverage is 65%",
            "Test coverage of the API integration is 65%",
            False,
        ),
    ],
)
def test_what_moves(old_text: str, new_text: str, moves: bool) -> None:
    results = [_result("old", old_text, 2.0, 0), _result("new", new_text, 1.0, 3)]
    assert _order(results)[0] == ("new" if moves else "old")


def test_only_the_older_and_only_within_the_window_and_never_the_agents() -> None:
    old = "My API integration test coverage has recently improved to 78%"
    new = "I've reached 65% test coverage on my API integration module"
    # the later one is the one ranked first already: nothing moves
    assert _order([_result("b", old, 2.0, 5), _result("a", new, 1.0, 0)]) == ["b", "a"]
    agent = _result("agent", old, 1.0, 5, Source.AGENT)
    assert _order([_result("a", new, 2.0, 0), agent]) == ["a", "agent"]
    tool = _result("tool", old, 1.0, 5, Source.TOOL)
    tool.memory.trust = 0.5  # a less trusted source does not overrule the user
    assert _order([_result("a", new, 2.0, 0), tool]) == ["a", "tool"]
    filler = [_result(f"f{i}", f"unrelated note {i}", 1.9 - i / 100, 1) for i in range(10)]
    late = _result("late", old, 1.0, 5)
    assert _order([_result("a", new, 2.0, 0), *filler, late])[-1] == "late"  # beyond the ten


def test_the_four_cases_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_HOME", str(tmp_path / "env-home"))  # never the user's
    home = tmp_path / "home"
    retain(home, "I live in Paris and I love jazz.", "--session", "s1")
    retain(home, "I moved to Berlin.", "--session", "s2")
    first = run_json(home, "recall", "--owner", OWNER, "where does she live?")["results"][0]
    assert "Berlin" in first["content"]
    receipt = run_json(home, "forget", "--owner", OWNER, "--session", "s2")
    assert receipt["restored_ids"]
    first = run_json(home, "recall", "--owner", OWNER, "where does she live?")["results"][0]
    assert "Paris" in first["content"]
    retain(home, "I hate coffee")
    retain(home, "Actually I now love coffee")
    first = run_json(home, "recall", "--owner", OWNER, "does she like coffee?")["results"][0]
    assert first["content"] == "User loves coffee"
    listed = run_json(home, "list", "--owner", OWNER, "--kind", "preference")["memories"]
    assert "User hates coffee" not in {m["content"] for m in listed}
    assert Status.ACTIVE.value in {m["status"] for m in listed}
