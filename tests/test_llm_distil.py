"""Summaries and lessons by an LLM, as background jobs behind summarize and reflect,
against a real OpenAI-protocol server on loopback: the offline draft is written at once,
the model's replaces it later, and running either twice over the same input changes
nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from llm_servers import FakeLLM, Seen, configured, openai_answer

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings
from hindsight.models import Kind, Memory
from hindsight.store import Filter

ALICE = "user:alice"


@pytest.fixture
def hs(settings: Settings, server: FakeLLM, embedder: Embeddings) -> Iterator[Hindsight]:
    only = configured(settings, server, llm_extract=False)  # only the jobs under test
    with Hindsight(only, embedder=embedder) as engine:
        yield engine


def chat(hs: Hindsight, session: str, *lines: str) -> None:
    hs.retain(
        ALICE, messages=[{"role": "user", "content": line} for line in lines], session_id=session
    )


def summaries(hs: Hindsight, session: str, *, history: bool = False) -> list[Memory]:
    flt = Filter(owners=[ALICE], kinds=[Kind.SUMMARY], session_id=session, current_only=not history)
    return list(hs.store.iterate(flt))


SUMMARY = "Alice planned a trip to Kyoto for 12 May and booked a ryokan near Gion."


def test_a_session_summary_by_the_model_replaces_the_offline_one(
    hs: Hindsight, server: FakeLLM
) -> None:
    chat(hs, "s1", "I am planning a trip to Kyoto on 12 May.", "I booked a ryokan near Gion.")
    offline = hs.summarize(ALICE, "s1")
    assert offline.metadata["generator"] == "heuristic"
    assert [j.operation for j in hs.jobs(ALICE).jobs] == ["summarize"]
    server.script(openai_answer(json.dumps({"summary": SUMMARY, "topics": ["Kyoto trip"]})))
    assert hs.run_jobs() == 1
    sent = server.seen[0].body["messages"][-1]["content"]
    assert "I booked a ryokan near Gion." in sent
    [summary] = summaries(hs, "s1")
    assert summary.id == offline.id  # the same turns: rewritten in place
    assert (summary.content, summary.metadata["generator"]) == (SUMMARY, "llm:m")
    assert "Kyoto trip" in summary.query_hints
    assert set(summary.provenance.derived_from) == set(offline.provenance.derived_from)
    # the same input again: the offline redraft leaves the model's text, and no job
    assert hs.summarize(ALICE, "s1").content == SUMMARY
    assert hs.run_jobs() == 0 and len(server.seen) == 1
    # new turns: a new offline summary supersedes, and a new job rewrites it
    chat(hs, "s1", "I will take the Shinkansen from Tokyo.")
    newer = hs.summarize(ALICE, "s1")
    assert newer.id != offline.id and newer.metadata["generator"] == "heuristic"
    server.script(openai_answer(json.dumps({"summary": SUMMARY + " By Shinkansen.", "topics": []})))
    assert hs.run_jobs() == 1
    [current] = summaries(hs, "s1")
    assert current.content.endswith("By Shinkansen.")
    assert len(summaries(hs, "s1", history=True)) == 2


def test_a_summary_job_of_a_session_that_changed_since_writes_nothing(
    hs: Hindsight, server: FakeLLM
) -> None:
    chat(hs, "s1", "I am planning a trip to Kyoto on 12 May.")
    hs.summarize(ALICE, "s1")
    chat(hs, "s1", "Actually make it Osaka.")  # not summarized yet: the old job is stale
    assert hs.run_jobs() == 1 and server.seen == []
    [job] = hs.jobs(ALICE).jobs
    assert job.state == "done" and job.result == {
        "note": "the session changed since: a later job summarizes it"
    }


def lessons(*items: tuple[str, str, float, list[str]], digests: Any = ()) -> Any:
    return openai_answer(
        json.dumps(
            {
                "lessons": [
                    {"key": key, "lesson": text, "importance": weight, "evidence": labels}
                    for key, text, weight, labels in items
                ],
                "digests": list(digests),
            }
        )
    )


def labels_of(seen: Seen) -> dict[str, str]:
    """What each memory shown to the model is labelled, by its text."""
    prompt = seen.body["messages"][-1]["content"]
    return {
        line.split(": ", 1)[1]: line.split(" ", 1)[0]
        for line in prompt.splitlines()
        if line.startswith("m") and ": " in line
    }


def test_lessons_by_the_model_rest_on_what_it_was_shown_and_rerun_changes_nothing(
    hs: Hindsight, server: FakeLLM
) -> None:
    chat(hs, "s1", "Please keep answers short.", "The weather tool failed again.")
    chat(hs, "s2", "Short answers, please, I said.")

    def respond(seen: Seen) -> Any:
        label = labels_of(seen)
        short = [label["Please keep answers short."], label["Short answers, please, I said."]]
        return lessons(
            ("brevity", "The user wants short answers, and said so twice.", 0.9, short),
            ("small_talk", "The user mentions the weather.", 0.4, short),  # not important
            ("made_up", "The user likes opera.", 0.95, ["m999"]),  # rests on nothing shown
        )

    server.respond = respond
    hs.reflect(ALICE)
    assert [j.operation for j in hs.jobs(ALICE).jobs] == ["reflect"]
    hs.run_jobs()
    [lesson] = [
        m
        for m in hs.list_memories(ALICE, kinds=["reflection"])
        if m.metadata.get("lesson") == "llm"
    ]
    assert lesson.content == "The user wants short answers, and said so twice."
    assert lesson.metadata["importance"] == 0.9 and lesson.metadata["generator"] == "llm:m"
    cited = {m.content for m in hs.store.get(lesson.provenance.derived_from)}
    assert cited == {"Please keep answers short.", "Short answers, please, I said."}
    assert hs.jobs(ALICE).jobs[0].result == {"changed": [lesson.id], "left_out": 2}
    before = {m.id: m.content for m in hs.list_memories(ALICE, kinds=["reflection"])}
    hs.reflect(ALICE)  # the same memories: the same job, not queued again
    assert hs.run_jobs() == 0 and len(server.seen) == 1
    assert {m.id: m.content for m in hs.list_memories(ALICE, kinds=["reflection"])} == before
    # forgetting the evidence forgets the lesson
    hs.forget(owner=ALICE, session_id="s1")
    hs.forget(owner=ALICE, session_id="s2")
    assert hs.list_memories(ALICE, kinds=["reflection"]) == []


RUNS = (
    "I started training for the Berlin marathon.",
    "Long run today: 30 km for the marathon.",
    "I finished the Berlin marathon in 3:58!",
    "Next I will run the Berlin marathon again in 2026.",
)


def test_a_topic_digest_draws_on_every_session_it_names(hs: Hindsight, server: FakeLLM) -> None:
    chat(hs, "s1", RUNS[0])
    chat(hs, "s2", RUNS[1])
    chat(hs, "s3", RUNS[2], "I had pasta for dinner.")
    digest = (
        "Berlin marathon: Alice started training (s1), ran 30 km (s2) and finished in 3:58 (s3)."
    )

    def respond(seen: Seen) -> Any:
        label = labels_of(seen)
        runs = [label[t] for t in label if t in RUNS]
        return lessons(
            digests=[
                {"topic": "Berlin marathon", "digest": digest, "evidence": runs},
                {"topic": "Dinner", "digest": "Alice had pasta once.", "evidence": ["m1"]},
            ]
        )

    server.respond = respond
    hs.reflect(ALICE)
    hs.run_jobs()
    [made] = [m for m in hs.list_memories(ALICE, kinds=["summary"]) if m.metadata.get("digest")]
    assert (made.content, made.metadata["key"], made.metadata["sessions"]) == (
        digest,
        "digest:berlin_marathon",
        3,
    )
    cited = {m.content for m in hs.store.get(made.provenance.derived_from)}
    assert cited == set(RUNS[:3])
    assert "Berlin marathon" in made.query_hints
    top = hs.recall(ALICE, "What happened with the Berlin marathon?", k=3)
    assert made.id in [r.memory.id for r in top]
    # a later run naming the same topic rewrites or supersedes it, never adds a second
    chat(hs, "s4", RUNS[3])
    hs.reflect(ALICE)
    hs.run_jobs()
    digests = [m for m in hs.list_memories(ALICE, kinds=["summary"]) if m.metadata.get("digest")]
    assert len(digests) == 1 and len(digests[0].provenance.derived_from) == 4


def test_a_summary_and_lessons_as_real_models_wrap_them_are_read(
    hs: Hindsight, server: FakeLLM
) -> None:
    """A summary under another key and name, topics left out; lessons as a bare list,
    fenced, one of them invalid (dropped and counted), no digests: read at once."""
    chat(hs, "s1", "I am planning a trip to Kyoto on 12 May.", "I booked a ryokan near Gion.")
    hs.summarize(ALICE, "s1")
    server.script(openai_answer(json.dumps({"result": {"text": SUMMARY, "mood": "happy"}})))
    assert hs.run_jobs() == 1
    [summary] = summaries(hs, "s1")
    assert (summary.content, summary.metadata["topics"]) == (SUMMARY, [])

    def respond(seen: Seen) -> Any:
        trip = list(labels_of(seen).values())
        good = {"key": "trip_planning", "text": "The user plans trips well ahead.",
                "importance": 0.9, "memories": trip}  # fmt: skip
        bad = {"key": "vague", "lesson": "Too short", "importance": 2, "evidence": trip}
        return openai_answer("```json\n" + json.dumps([good, bad]) + "\n```")

    server.respond = respond
    hs.reflect(ALICE)
    hs.run_jobs()
    assert len(server.seen) == 2  # no retry for the bad lesson
    [lesson] = [
        m
        for m in hs.list_memories(ALICE, kinds=["reflection"])
        if m.metadata.get("lesson") == "llm"
    ]
    assert lesson.content == "The user plans trips well ahead."
    [row] = [r for r in hs.usage(ALICE) if r.operation == "reflect"]
    assert (row.calls, row.dropped, row.dropped_items) == (1, 0, 1)
