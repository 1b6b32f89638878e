"""Session summaries and reflections: content, idempotence, supersession, forget, the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hindsight import Hindsight, Kind, NotFoundError, Source, ValidationError
from hindsight.cli import cli
from hindsight.reflect import MAX_REFLECTION_CHARS, MAX_SUMMARY_CHARS, reconcile, summarize_session

OWNER = "user:caroline"


def at(day: str, minute: int = 0) -> str:
    return f"{day}T10:{minute:02d}:00Z"


def turn(role: str, content: str, when: str, **extra: str) -> dict[str, str]:
    return {"role": role, "content": content, "observed_at": when, **extra}


def first_session(hs: Hindsight, owner: str = OWNER) -> None:
    """A real conversation: a name, facts, a preference, a correction and a failing tool."""
    day = "2024-05-01"
    hs.retain(
        owner,
        messages=[
            turn("user", "Hi, I'm Caroline. I love jazz.", at(day, 0)),
            turn("assistant", "Nice to meet you! You live in Lyon, right?", at(day, 1)),
            turn("user", "No, I live in Berlin, not Lyon.", at(day, 2)),
            turn("user", "My sister is named Anna and I work as a nurse.", at(day, 3)),
            turn(
                "tool", "TimeoutError: weather API did not answer", at(day, 4), tool_name="weather"
            ),
            turn("assistant", "Sorry, the weather service is not answering right now.", at(day, 5)),
        ],
        session_id="s1",
    )


def state(hs: Hindsight, owner: str = OWNER) -> tuple[Any, ...]:
    """Every memory (any status, with history) and every open window of ``owner``."""
    memories = sorted(json.dumps(d, sort_keys=True) for d in hs.export(owner))
    windows = {sid: [t.content for t in hs.window(owner, sid)] for sid, _, _ in hs.sessions(owner)}
    return memories, windows, hs.stats().memories


def by_key(reflections: list[Any]) -> dict[str, Any]:
    return {r.metadata["key"]: r for r in reflections}


# -- summaries -------------------------------------------------------------------------------
def test_a_summary_says_who_when_and_what(hs: Hindsight) -> None:
    first_session(hs)
    summary = hs.summarize(OWNER, "s1")
    text = summary.content
    assert summary.kind is Kind.SUMMARY and summary.owner == OWNER
    assert text.startswith("Summary of session s1: 6 turns on 2024-05-01 from 10:00 to 10:05 UTC")
    assert "Caroline (the user), the assistant and the tool weather" in text
    assert "Correction: User lives in Berlin." in text  # a correction, first
    assert "User works as a nurse." in text and "User's sister is named Anna." in text  # facts
    assert "User loves jazz." in text  # a preference
    assert "Tool weather failed: TimeoutError" in text  # a tool result
    assert '- the assistant: "Nice to meet you! You live in Lyon, right?"' in text
    assert len(text) <= MAX_SUMMARY_CHARS
    episodes = hs.list_memories(OWNER, kinds=["episode"], session_id="s1")
    assert sorted(summary.provenance.derived_from) == sorted(e.id for e in episodes)
    assert summary.provenance.session_id == "s1" and summary.provenance.source is Source.SYSTEM
    assert summary.metadata["turns"] == 6 and summary.metadata["key"] == "summary:s1"
    assert summary.metadata["started_at"] == "2024-05-01T10:00:00+00:00"
    assert hs.get(summary.id).content == text  # stored as returned
    found = hs.recall(OWNER, "summary of what we talked about in session s1", k=3)
    assert summary.id in [r.memory.id for r in found]


def test_a_long_session_gets_a_bounded_summary(hs: Hindsight) -> None:
    cities = ["Oslo", "Rome", "Lima", "Kyiv", "Doha", "Riga", "Baku", "Bern", "Nice", "Pisa"]
    kinds = ["Jazz", "Film", "Book", "Food", "Wine", "Kite"]
    texts = [f"I love the {c} {k} festival, I go there every year." for k in kinds for c in cities]
    hs.retain(OWNER, messages=[{"content": t} for t in texts], session_id="long")
    summary = hs.summarize(OWNER, "long")
    assert len(summary.content) <= MAX_SUMMARY_CHARS < sum(len(t) for t in texts) / 2
    omitted = summary.metadata["omitted_points"]
    assert omitted > 0 and summary.metadata["key_points"] + omitted == 60
    assert summary.metadata["turns"] == 60 and len(summary.provenance.derived_from) == 60
    assert f"({omitted} more key points not shown)" in summary.content
    points = [line for line in summary.content.splitlines() if line.startswith("- ")]
    assert points[:2] == [
        "- User loves the Oslo Jazz festival.",
        "- User loves the Rome Jazz festival.",
    ]


def test_summarize_consolidates_the_window_first(hs: Hindsight) -> None:
    hs.observe(OWNER, "w1", "I grew up in Porto.")  # a fact: it waits in the window
    hs.observe(OWNER, "w1", "Fado is a Portuguese genre of music.", role="assistant")
    assert len(hs.window(OWNER, "w1")) == 2 and hs.list_memories(OWNER) == []
    summary = hs.summarize(OWNER, "w1")
    assert hs.window(OWNER, "w1") == []
    assert summary.metadata["turns"] == 2
    assert "User grew up in Porto" in summary.content


def test_summarize_again_with_nothing_new_writes_nothing(hs: Hindsight) -> None:
    first_session(hs)
    summary = hs.summarize(OWNER, "s1")
    before = state(hs)
    again = hs.summarize(OWNER, "s1")
    assert state(hs) == before
    assert (again.id, again.content, again.updated_at) == (
        summary.id,
        summary.content,
        summary.updated_at,
    )


def test_new_turns_supersede_the_old_summary(hs: Hindsight) -> None:
    first_session(hs)
    old = hs.summarize(OWNER, "s1")
    hs.retain(OWNER, "I moved to Hamburg.", session_id="s1", observed_at=at("2024-05-02"))
    new = hs.summarize(OWNER, "s1")
    assert new.id != old.id and new.metadata["turns"] == 7
    assert "User moved to Hamburg." in new.content
    assert set(old.provenance.derived_from) < set(new.provenance.derived_from)
    retired = hs.get(old.id)
    assert retired.superseded_by == new.id and retired.valid_to is not None
    assert retired.content == old.content  # history keeps what it said
    current = hs.list_memories(OWNER, kinds=["summary"], session_id="s1")
    history = hs.list_memories(OWNER, kinds=["summary"], session_id="s1", include_history=True)
    assert [m.id for m in current] == [new.id]
    assert {m.id for m in history} == {old.id, new.id}
    assert hs.summarize(OWNER, "s1").id == new.id


@pytest.mark.backends
def test_forgetting_the_turns_forgets_the_summary(hs: Hindsight) -> None:
    first_session(hs)
    summary = hs.summarize(OWNER, "s1")
    episodes = [m.id for m in hs.list_memories(OWNER, kinds=["episode"], session_id="s1")]
    receipt = hs.forget(episodes[0])
    assert summary.id in receipt.derived_ids  # it quotes the turn: it goes with its first turn
    with pytest.raises(NotFoundError):
        hs.get(summary.id)


@pytest.mark.backends
def test_forgetting_a_session_forgets_its_summaries(hs: Hindsight) -> None:
    first_session(hs)
    old = hs.summarize(OWNER, "s1")
    hs.retain(OWNER, "I love opera too.", session_id="s1", observed_at=at("2024-05-02"))
    new = hs.summarize(OWNER, "s1")
    receipt = hs.forget(owner=OWNER, session_id="s1")
    assert {old.id, new.id} <= {*receipt.deleted_ids, *receipt.derived_ids}
    assert list(hs.export(OWNER)) == []


@pytest.mark.backends
def test_a_summary_made_after_a_forget_does_not_quote_it(hs: Hindsight) -> None:
    first_session(hs)
    summary = hs.summarize(OWNER, "s1")
    (tool_turn,) = [
        m
        for m in hs.list_memories(OWNER, kinds=["episode"], session_id="s1")
        if "Timeout" in m.content
    ]
    assert summary.id in hs.forget(tool_turn.id).derived_ids
    again = hs.summarize(OWNER, "s1")
    assert "Timeout" not in again.content and again.metadata["turns"] == 5
    history = hs.list_memories(OWNER, kinds=["summary"], include_history=True)
    assert [m.id for m in history] == [again.id]


def test_summarize_rejects_bad_input_and_writes_nothing(hs: Hindsight) -> None:
    first_session(hs)
    hs.observe(OWNER, "open", "I am still talking.")
    before = state(hs)
    for owner, sid in [("caroline", "s1"), (OWNER, "bad id!"), (OWNER, None), (OWNER, "")]:
        with pytest.raises(ValidationError):
            hs.summarize(owner, sid)  # type: ignore[arg-type]  # None on purpose
    with pytest.raises(NotFoundError, match="'s404'"):
        hs.summarize(OWNER, "s404")
    with pytest.raises(NotFoundError, match="'s1'"):
        hs.summarize("user:someone-else", "s1")
    assert state(hs) == before


# -- reflections -----------------------------------------------------------------------------
def later_sessions(hs: Hindsight, owner: str = OWNER) -> None:
    """The weather tool fails again; she moves; she repeats a preference."""
    day = "2024-06-01"
    hs.retain(
        owner,
        messages=[
            turn("tool", "Error: HTTP 503 from weather service", at(day, 0), tool_name="weather"),
            turn("user", "I moved to Munich.", at(day, 1)),
            turn("user", "I love jazz.", at(day, 2)),
        ],
        session_id="s2",
    )
    hs.retain(owner, "I love jazz!", session_id="s3", observed_at=at("2024-07-01"))


def test_reflect_finds_failures_corrections_changes_and_preferences(hs: Hindsight) -> None:
    first_session(hs)
    later_sessions(hs)
    lessons = by_key(hs.reflect(OWNER))
    kinds = sorted(r.metadata["lesson"] for r in lessons.values())
    assert kinds == ["attribute_change", "correction", "preference", "tool_failure"]
    assert {"tool_failure:weather", "correction:fact:location:", "change:fact:location:"} < set(
        lessons
    )
    tool = lessons["tool_failure:weather"]
    assert tool.kind is Kind.REFLECTION and tool.metadata["failures"] == 2
    assert (
        "weather" in tool.content
        and "failed 2 times between 2024-05-01 and 2024-06-01" in tool.content
    )
    assert tool.metadata["latest_error"] == "Error: HTTP 503 from weather service"
    failures = hs.list_memories(OWNER, kinds=["tool_result"])
    assert {f.id for f in failures} <= set(tool.provenance.derived_from)

    fix = lessons["correction:fact:location:"]
    assert "corrected the assistant: User lives in Berlin." in fix.content
    assert 'The assistant had said: "Nice to meet you! You live in Lyon, right?"' in fix.content
    assert fix.content.endswith("(This changed again on 2024-06-01.) Do not repeat this mistake.")

    change = lessons["change:fact:location:"]
    assert "Berlin (2024-05-01) -> Munich (2024-06-01)" in change.content
    assert change.metadata["values"] == ["Berlin", "Munich"]

    (pref,) = [r for r in lessons.values() if r.metadata["lesson"] == "preference"]
    assert pref.metadata["mentions"] == 3 and "User loves jazz" in pref.content
    assert "stated 3 times between 2024-05-01 and 2024-07-01" in pref.content
    jazz = [e for e in hs.list_memories(OWNER, kinds=["episode"]) if "jazz" in e.content]
    assert len(jazz) == 3 and {e.id for e in jazz} < set(pref.provenance.derived_from)
    for lesson in lessons.values():
        assert len(lesson.content) <= MAX_REFLECTION_CHARS and lesson.provenance.derived_from
        assert lesson.provenance.source is Source.SYSTEM
    found = hs.recall(OWNER, "which tool keeps failing?", k=3)
    assert tool.id in [r.memory.id for r in found]


def test_reflect_again_writes_nothing_and_new_evidence_supersedes(hs: Hindsight) -> None:
    first_session(hs)
    later_sessions(hs)
    first = by_key(hs.reflect(OWNER))
    before = state(hs)
    assert hs.reflect(OWNER) == []
    assert hs.reflect(OWNER, session_id="s2") == []  # a narrower scope changes nothing either
    assert state(hs) == before
    error = "ConnectionError: weather host unreachable"
    hs.retain(OWNER, messages=[turn("tool", error, at("2024-08-01"), tool_name="weather")])
    (changed,) = hs.reflect(OWNER)
    old = first["tool_failure:weather"]
    assert changed.metadata["key"] == "tool_failure:weather" and changed.id != old.id
    assert changed.metadata["failures"] == 3
    assert changed.metadata["latest_error"] == "ConnectionError: weather host unreachable"
    retired = hs.get(old.id)
    assert retired.superseded_by == changed.id and retired.valid_to is not None
    current = hs.list_memories(OWNER, kinds=["reflection"])
    assert len(current) == len(first) and changed.id in {m.id for m in current}


def test_reflect_on_one_session_or_a_period(hs: Hindsight) -> None:
    first_session(hs)
    again = {"role": "tool", "tool_name": "weather", "content": "TimeoutError: no answer"}
    hs.retain(OWNER, messages=[{**again, "observed_at": at("2024-05-01", 9)}], session_id="s1")
    hs.retain(OWNER, "I live in Paris.", session_id="s5", observed_at=at("2024-09-01"))
    (lesson,) = hs.reflect(OWNER, since="2024-08-01", until="2024-12-31")
    assert lesson.metadata["key"] == "change:fact:location:"  # Berlin in s1 -> Paris in s5
    assert "Berlin (2024-05-01) -> Paris (2024-09-01)" in lesson.content
    found = by_key(hs.reflect(OWNER, session_id="s1"))
    assert set(found) == {"correction:fact:location:", "tool_failure:weather"}
    assert found["tool_failure:weather"].provenance.session_id == "s1"
    assert hs.reflect(OWNER) == []  # everything in scope already has its lesson
    assert hs.reflect(OWNER, session_id="s5", until="2024-01-01") == []  # known, out of range


def test_reflect_on_a_session_takes_in_its_window(hs: Hindsight) -> None:
    for text in ("I love green tea.", "I really love green tea.", "I love green tea!"):
        hs.observe(OWNER, "w2", text)  # a preference stated moves the window at once
    hs.observe(OWNER, "w2", "I live in Leeds.")  # a fact waits in the window
    assert len(hs.window(OWNER, "w2")) == 1
    (lesson,) = hs.reflect(OWNER, session_id="w2")
    assert hs.window(OWNER, "w2") == []
    assert lesson.metadata["lesson"] == "preference" and lesson.metadata["mentions"] == 3
    assert lesson.provenance.session_id == "w2"


@pytest.mark.backends
def test_forgetting_the_evidence_forgets_the_reflection(hs: Hindsight) -> None:
    first_session(hs)
    later_sessions(hs)
    lessons = by_key(hs.reflect(OWNER))
    hs.forget(owner=OWNER, session_id="s1")
    hs.forget(owner=OWNER, session_id="s2")
    for key in ("tool_failure:weather", "correction:fact:location:"):
        with pytest.raises(NotFoundError):
            hs.get(lessons[key].id)


def test_reflect_rejects_bad_input_and_writes_nothing(hs: Hindsight) -> None:
    first_session(hs)
    hs.observe(OWNER, "open", "I am still talking.")
    before = state(hs)
    bad: list[dict[str, Any]] = [
        {"session_id": "bad id!"},
        {"since": "last tuesday"},
        {"until": 12},
        {"since": "2024-06-01", "until": "2024-05-01"},
    ]
    with pytest.raises(ValidationError, match="owner"):
        hs.reflect("caroline")
    for kwargs in bad:
        with pytest.raises(ValidationError):
            hs.reflect(OWNER, **kwargs)
    with pytest.raises(NotFoundError, match="'s404'"):
        hs.reflect(OWNER, session_id="s404")
    assert state(hs) == before
    assert hs.reflect("user:nobody") == []


# -- the pure functions ------------------------------------------------------------------------
def test_drafts_do_not_depend_on_input_order(hs: Hindsight) -> None:
    first_session(hs)
    episodes = hs.list_memories(OWNER, kinds=["episode"], session_id="s1")[::-1]  # oldest first
    derived = [m for m in hs.list_memories(OWNER) if m.kind is not Kind.EPISODE]
    one = summarize_session("s1", episodes, derived)
    two = summarize_session("s1", episodes, derived[::-1])
    assert one == two
    now = datetime.now(UTC)
    changes = reconcile([one], [], owner=OWNER, embedding_model="m", now=now)
    assert [m.content for m in changes.insert] == [one.content] and not changes.retire
    stored = changes.insert[0]
    assert reconcile([one], [stored], owner=OWNER, embedding_model="m", now=now).changed == []
    with pytest.raises(ValidationError):
        summarize_session("s1", [], derived)


# -- the command line ------------------------------------------------------------------------
def run(home: Path, *args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["--home", str(home), *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HINDSIGHT_HOME", str(tmp_path / "env-home"))
    monkeypatch.setenv("HINDSIGHT_SQLITE_SYNCHRONOUS", "OFF")
    home = tmp_path / "home"
    for source, text in [
        ("user", "Hi, I'm Caroline. I live in Paris."),
        ("agent", "Noted: you live in Paris."),
        ("user", "Actually, I moved to Berlin."),
        ("tool", "TimeoutError: weather API did not answer"),
        ("tool", "Error: HTTP 503 from weather service"),
    ]:
        run(home, "retain", "--owner", OWNER, "--session", "s1", "--source", source, text)
    return home


def test_cli_summarize(home: Path) -> None:
    out = run(home, "summarize", "--owner", OWNER, "--session", "s1").stdout
    assert out.startswith("Summary of session s1: 5 turns") and "Caroline" in out
    assert "summary of 5 turn(s)" in out
    data = json.loads(run(home, "summarize", "--owner", OWNER, "--session", "s1", "--json").stdout)
    assert data["kind"] == "summary" and data["metadata"]["turns"] == 5
    assert data["id"] in out  # the same summary: nothing new was said
    result = run(home, "summarize", "--owner", OWNER, "--session", "nope", code=3)
    assert result.stderr.startswith("error: ") and "'nope'" in result.stderr
    assert (
        "invalid owner"
        in run(home, "summarize", "--owner", "caroline", "--session", "s1", code=2).stderr
    )


def test_cli_reflect(home: Path) -> None:
    data = json.loads(run(home, "reflect", "--owner", OWNER, "--json").stdout)
    lessons = {r["metadata"]["key"]: r for r in data["reflections"]}
    assert lessons["tool_failure:tool"]["kind"] == "reflection"
    assert "An unnamed tool is unreliable" in lessons["tool_failure:tool"]["content"]
    fix = lessons["correction:fact:location:"]["metadata"]
    assert (fix["right"], fix["wrong"]) == ("User moved to Berlin", ["User lives in Paris"])
    assert run(home, "reflect", "--owner", OWNER).stdout == "no new or changed lessons\n"
    run(home, "retain", "--owner", OWNER, "--session", "s2", "--source", "tool", "Error: 500")
    out = run(home, "reflect", "--owner", OWNER, "--session", "s2").stdout
    assert "[tool_failure]" in out and "failed 3 times" in out
    assert json.loads(
        run(home, "reflect", "--owner", OWNER, "--since", "2000-01-01", "--json").stdout
    ) == {"reflections": []}
    result = run(home, "reflect", "--owner", OWNER, "--since", "soon", code=2)
    assert "invalid since 'soon'" in result.stderr
