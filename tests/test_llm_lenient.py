"""Answers as real models write them, read item by item (issue 34), against real HTTP
servers on loopback that speak the OpenAI and Anthropic protocols: synonyms, missing
turns, extra fields, fences and wrappers are read; a bad item is dropped and counted
while its neighbours are stored; only an answer with nothing usable is asked again.
What storage accepts stays as strict: valid kinds, content, confidence in [0, 1].
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llm_servers import FakeLLM, anthropic_answer, engines, openai_answer

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings
from hindsight.extract.llm import LENIENCY, SCHEMA
from hindsight.llm.lenient import relax
from hindsight.llm.structured import check_answer, validate
from hindsight.models import Kind, Memory
from hindsight.store import Filter

ALICE = "user:alice"
T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def make(
    settings: Settings, server: FakeLLM, embedder: Embeddings
) -> Iterator[Callable[..., Hindsight]]:
    # extraction alone asks the model: no LLM check
    with engines(settings, server, embedder, lambda: T0, llm_assess=False) as make:
        yield make


@pytest.fixture
def hs(make: Callable[..., Hindsight]) -> Hindsight:
    return make()


def item(content: str, **more: Any) -> dict[str, Any]:
    """A memory as a model that follows the prompt writes it."""
    return {"kind": "fact", "content": content, "confidence": 0.9, "turn": 0, **more}


def derived(hs: Hindsight) -> list[Memory]:
    return [
        m
        for m in hs.store.iterate(Filter(owners=[ALICE], current_only=False))
        if m.metadata.get("extractor") == "llm:m"
    ]


def contents(hs: Hindsight) -> list[str]:
    return sorted(m.content for m in derived(hs))


def job_result(hs: Hindsight) -> dict[str, Any]:
    [job] = hs.jobs(ALICE).jobs
    assert job.state == "done", job.error
    assert job.result is not None
    return job.result


# -- the shape of an answer ---------------------------------------------------------------------
NURSE = "User works as a nurse in Leeds."
CELLO = "User plays the cello."
JAZZ = "User listens to jazz on vinyl every evening."
LOOSE = {"type": "fact", "content": NURSE, "confidence": 0.9, "reason": "said so", "id": 7}
ENVELOPES = {
    "fenced": "```json\n" + json.dumps({"memories": [LOOSE]}, indent=2) + "\n```",
    "prose-and-fence": "Here are the memories:\n```\n" + json.dumps([LOOSE]) + "\n```\nDone.",
    "bare-list": json.dumps([LOOSE]),
    "single-object": json.dumps(LOOSE),
    "under-items": json.dumps({"items": [LOOSE]}),
    "under-any-key": json.dumps({"extracted_memories": [LOOSE], "count": 1}),
    "result-object": json.dumps({"result": {"memories": [LOOSE]}}),
    "result-single": json.dumps({"result": LOOSE}),
    "single-under-the-key": json.dumps({"memories": LOOSE}),
}


@pytest.mark.parametrize("answer", list(ENVELOPES.values()), ids=list(ENVELOPES))
def test_what_wraps_the_items_is_forgiven_and_they_are_stored_at_once(
    hs: Hindsight, server: FakeLLM, answer: str
) -> None:
    """``type`` for ``kind``, no ``turn``, fields the schema does not name, and the
    items in a fence, alone, or under any key: stored from the first answer."""
    result = hs.retain(ALICE, "I work as a nurse in Leeds.")
    server.script(openai_answer(answer))
    assert hs.run_jobs() == 1
    assert len(server.seen) == 1  # no retry
    [memory] = derived(hs)
    assert (memory.content, memory.kind) == (NURSE, Kind.FACT)
    assert memory.provenance.derived_from == result.episodes
    assert job_result(hs)["dropped"] == 0
    [row] = hs.usage(ALICE)
    assert (row.calls, row.failures, row.dropped, row.dropped_items) == (1, 0, 0, 0)


def test_synonyms_of_kind_and_forms_of_values_are_read_into_the_strict_shape(
    hs: Hindsight, server: FakeLLM
) -> None:
    hs.retain(
        ALICE,
        messages=[
            {"role": "user", "content": "Jazz on vinyl, every evening. I play the cello."},
            {"role": "user", "content": "Please answer me in French from now on."},
            {"role": "tool", "tool_name": "weather", "content": "Leeds: 12C, drizzle"},
        ],
    )
    answer = [
        {"memory_type": "Preference", "text": JAZZ, "confidence": "0.8"},
        {"category": "facts", "statement": CELLO, "confidence": 1, "turn": "0"},
        {
            "type": "instruction",
            "content": "User wants answers in French.",
            "confidence": 0.95,
            "applies_when": "any answer",
            "query_hints": None,
            "key": None,
        },
        {"type": "Tool Result", "content": "Leeds had 12C and drizzle.", "confidence": 0.9},
    ]
    server.script(openai_answer(json.dumps({"memories": answer})))
    hs.run_jobs()
    assert len(server.seen) == 1
    kept = {m.content: m for m in derived(hs)}
    assert kept[JAZZ].kind is Kind.PREFERENCE
    assert kept[JAZZ].confidence == pytest.approx(0.8)
    assert kept[CELLO].kind is Kind.FACT
    assert kept["User wants answers in French."].metadata["applies_when"] == "any answer"
    weather = kept["Leeds had 12C and drizzle."]
    assert (weather.kind, weather.metadata["tool"]) == (Kind.TOOL_RESULT, "weather")
    assert job_result(hs)["dropped"] == 0


def test_a_missing_turn_is_the_turn_whose_words_the_memory_carries(
    hs: Hindsight, server: FakeLLM
) -> None:
    """A job covers several turns: an item without one is tied to the turn sharing the
    most words with it (provenance and time are that turn's); sharing none, the latest
    user turn; one that matches only the assistant's words is dropped as before."""
    said = [
        ("user", "My sister Maya moved to Lisbon last spring.", T0),
        ("assistant", "Lisbon is lovely! Try the pastel de nata at Belem.", T0),
        ("user", "I am training for the Leeds half marathon.", T0 + timedelta(minutes=5)),
        ("user", "Thanks, that's all for today.", T0 + timedelta(minutes=6)),
    ]
    result = hs.retain(
        ALICE,
        messages=[{"role": r, "content": c, "observed_at": t.isoformat()} for r, c, t in said],
    )
    maya: dict[str, Any] = {
        "type": "fact",
        "content": "Maya, User's sister, lives in Lisbon.",
        "confidence": 0.9,
    }
    race: dict[str, Any] = {"type": "experience", "content": "User trains for a half marathon."}
    vague: dict[str, Any] = {"type": "preference", "content": "User is polite.", "confidence": 0.7}
    pastry = {"type": "fact", "content": "Belem has pastel de nata.", "confidence": 0.9}
    server.script(openai_answer(json.dumps([maya, {**race, "confidence": 0.8}, vague, pastry])))
    hs.run_jobs()
    kept = {m.content: m for m in derived(hs)}
    assert sorted(kept) == sorted([maya["content"], race["content"], vague["content"]])
    assert kept[maya["content"]].provenance.derived_from == [result.episodes[0]]
    assert kept[race["content"]].provenance.derived_from == [result.episodes[2]]
    assert kept[race["content"]].observed_at == said[2][2]
    assert kept[vague["content"]].provenance.derived_from == [result.episodes[3]]
    assert job_result(hs)["dropped"] == 1  # the assistant's words, as with a turn given


# -- item by item -------------------------------------------------------------------------------
def test_one_bad_item_is_dropped_and_counted_and_its_neighbours_are_stored(
    hs: Hindsight, server: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    hs.retain(ALICE, "I work as a nurse in Leeds and I play the cello.")
    answer = [
        item(NURSE),
        item("User is an opinion.", kind="opinion"),  # not a kind storage takes
        item(""),  # no content
        item("User is 150% sure.", confidence=1.5),  # outside [0, 1]
        item("User has no confidence."),
        item(CELLO, turn=0, updated=True),
    ]
    del answer[4]["confidence"]
    with caplog.at_level(logging.WARNING, logger="hindsight.llm"):
        server.script(openai_answer(json.dumps({"memories": answer})))
        hs.run_jobs()
    assert len(server.seen) == 1  # no retry for a bad item
    assert contents(hs) == [CELLO, NURSE]
    assert job_result(hs)["dropped"] == 4
    [row] = hs.usage(ALICE)
    assert (row.calls, row.failures, row.dropped, row.dropped_items) == (1, 0, 0, 4)
    [logged] = [r.getMessage() for r in caplog.records if "dropped as invalid" in r.message]
    assert "memories: 4 item(s)" in logged and "'opinion' is not one of" in logged


def test_below_the_confidence_threshold_nothing_is_kept_and_nothing_is_invalid(
    hs: Hindsight, server: FakeLLM
) -> None:
    hs.retain(ALICE, "I might move to Leeds, maybe.")
    server.script(openai_answer(json.dumps([item("User may move to Leeds.", confidence=0.5)])))
    hs.run_jobs()
    assert derived(hs) == []
    result = job_result(hs)
    assert (result["below_confidence"], result["dropped"]) == (1, 0)
    [row] = hs.usage(ALICE)
    assert row.dropped_items == 0


@pytest.mark.parametrize("answer", ["[]", '{"memories": []}', '```json\n{"items": []}\n```'])
def test_nothing_to_keep_stores_nothing_and_is_not_asked_again(
    hs: Hindsight, server: FakeLLM, answer: str
) -> None:
    hs.retain(ALICE, "Hello there!")
    server.script(openai_answer(answer))
    assert hs.run_jobs() == 1
    assert len(server.seen) == 1
    assert derived(hs) == [] and job_result(hs)["created"] == []
    [row] = hs.usage(ALICE)
    assert (row.calls, row.failures, row.dropped, row.dropped_items) == (1, 0, 0, 0)


def test_garbage_is_asked_again_once_then_the_job_fails_as_before(
    hs: Hindsight, server: FakeLLM
) -> None:
    hs.retain(ALICE, "I work as a nurse in Leeds.")
    server.script(openai_answer("I'd rather not."), openai_answer('{"note": "nothing here"}'))
    hs.run_jobs()
    assert len(server.seen) == 2
    assert "not JSON" in server.seen[1].body["messages"][-1]["content"]
    [job] = hs.jobs(ALICE).jobs
    assert job.state == "failed" and "holds none of the fields asked for" in (job.error or "")
    assert derived(hs) == []
    [row] = hs.usage(ALICE)
    assert (row.calls, row.failures, row.dropped) == (1, 1, 1)


def test_an_answer_of_bad_items_only_is_asked_again_and_its_items_counted(
    hs: Hindsight, server: FakeLLM
) -> None:
    hs.retain(ALICE, "I work as a nurse in Leeds.")
    server.script(
        openai_answer(json.dumps([{"kind": "fact"}, {"kind": "job", "content": NURSE}])),
        openai_answer(json.dumps([item(NURSE)])),
    )
    hs.run_jobs()
    assert len(server.seen) == 2
    quoted = server.seen[1].body["messages"][-1]["content"]
    assert "every item of the answer is invalid" in quoted and "missing 'content'" in quoted
    assert contents(hs) == [NURSE]
    [row] = hs.usage(ALICE)
    assert (row.calls, row.failures, row.dropped, row.dropped_items) == (1, 0, 0, 2)


def test_the_anthropic_tool_input_is_read_as_leniently(
    make: Callable[..., Hindsight], server: FakeLLM
) -> None:
    hs = make(llm_provider="anthropic", llm_base_url=server.url, llm_model="m")
    hs.retain(ALICE, "I work as a nurse in Leeds.")
    loose = [LOOSE, {"type": "fact", "content": "x", "confidence": 0.9}]  # too short
    server.script(anthropic_answer(tool=("memories", {"items": loose}), stop="tool_use"))
    hs.run_jobs()
    assert contents(hs) == [NURSE]
    [row] = hs.usage(ALICE)
    assert (row.calls, row.dropped_items) == (1, 1)


# -- the reader, for any answer -----------------------------------------------------------------
KINDS = st.sampled_from(["preference", "fact", "experience", "tool_result", "instruction"])
WORDS = st.text(alphabet="abcdefghij klm", min_size=3, max_size=40).filter(
    lambda t: len(t.strip()) >= 3
)
GOOD = st.fixed_dictionaries(
    {"kind": KINDS, "content": WORDS, "confidence": st.floats(0, 1), "turn": st.integers(0, 9)}
)
BAD = st.one_of(
    GOOD.map(lambda i: {**i, "kind": "opinion"}),
    GOOD.map(lambda i: {**i, "confidence": 2.5}),
    GOOD.map(lambda i: {k: v for k, v in i.items() if k != "content"}),
    GOOD.map(lambda i: {**i, "turn": -1}),
    st.just("not an object"),
    st.integers(),
)
NOISE = st.dictionaries(st.sampled_from(["reason", "id", "source", "score"]), st.integers())


def _loosen(i: dict[str, Any], synonym: str, noise: dict[str, Any], drop_turn: bool) -> Any:
    out = {**noise, **{k: v for k, v in i.items() if k != "kind"}, synonym: i["kind"]}
    if drop_turn:
        out.pop("turn", None)
    return out


def _wrap(items: list[Any], how: str) -> str:
    return {
        "object": json.dumps({"memories": items}),
        "bare": json.dumps(items),
        "items": json.dumps({"items": items}),
        "result": json.dumps({"result": {"memories": items}}),
        "fence": "```json\n" + json.dumps({"memories": items}) + "\n```",
        "prose": "Sure! " + json.dumps(items) + " That is all.",
    }[how]


@given(
    good=st.lists(GOOD, max_size=6),
    bad=st.lists(BAD, max_size=4),
    order=st.randoms(use_true_random=False),
    synonym=st.sampled_from(["kind", "type", "memory_type", "category"]),
    noise=NOISE,
    drop_turn=st.booleans(),
    how=st.sampled_from(["object", "bare", "items", "result", "fence", "prose"]),
)
def test_the_reader_keeps_every_good_item_and_counts_every_bad_one(
    good: list[dict[str, Any]],
    bad: list[Any],
    order: Any,
    synonym: str,
    noise: dict[str, Any],
    drop_turn: bool,
    how: str,
) -> None:
    """Whatever wraps them and however their fields are named: the good items come back
    in the schema's own shape and order, valid, and the bad are dropped, never more."""
    tagged = [("good", i) for i in good] + [("bad", b) for b in bad]
    order.shuffle(tagged)
    items = [_loosen(i, synonym, noise, drop_turn) if tag == "good" else i for tag, i in tagged]
    expected = [
        {k: v for k, v in i.items() if not (drop_turn and k == "turn")}
        for tag, i in tagged
        if tag == "good"
    ]
    text = _wrap(items, how)
    if bad and not good:
        with pytest.raises(ValueError, match="every item of the answer is invalid"):
            check_answer(text, SCHEMA, LENIENCY)
        return
    value = check_answer(text, SCHEMA, LENIENCY)
    assert value == {"memories": expected[: SCHEMA["properties"]["memories"]["maxItems"]]}


KEYS = st.sampled_from(
    ["memories", "items", "kind", "type", "content", "confidence", "turn", "result", "x"]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | WORDS | KINDS | GOOD,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=16,
)


@given(value=JSON)
def test_whatever_comes_back_is_valid_or_refused_never_junk(value: Any) -> None:
    """Any JSON a model may send: the reader returns an object every item of which is
    valid against the schema (the turn aside), or says why it cannot; nothing else."""
    try:
        read = check_answer(json.dumps(value), SCHEMA, LENIENCY)
    except ValueError:
        return
    assert validate(read, relax(SCHEMA, frozenset({"turn"}))) == []
    assert set(read) == {"memories"}
