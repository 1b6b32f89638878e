"""Query understanding: the LLM splits a question into sub-queries searched beside it,
against a real OpenAI-protocol server on loopback. A recall never fails or waits long
because of the model."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from llm_servers import FakeLLM, Reply, configured, error, openai_answer
from servers import live_server

from hindsight import Client, Hindsight, Settings
from hindsight.api import create_app
from hindsight.embed import Embeddings
from hindsight.errors import ValidationError

ALICE = "user:alice"
NOTES = [
    "Caroline's sister is called Dana.",
    "Caroline went hiking in the Alps last summer.",
    "Caroline loves painting landscapes.",
    "Dana adopted a greyhound named Bolt in March.",
    "The office moved to the third floor.",
]


@pytest.fixture
def hs(settings: Settings, server: FakeLLM, embedder: Embeddings) -> Iterator[Hindsight]:
    with Hindsight(
        configured(settings, server, llm_extract=False, llm_expand_timeout_seconds=5.0),
        embedder=embedder,
    ) as engine:
        for note in NOTES:
            engine.retain(ALICE, note, kind="fact")
        yield engine


def split(*queries: str, entities: tuple[str, ...] = ()) -> Reply:
    return openai_answer(json.dumps({"queries": list(queries), "entities": list(entities)}))


QUESTION = "What pet did Caroline's sister adopt?"


def test_sub_queries_are_searched_beside_the_question(hs: Hindsight, server: FakeLLM) -> None:
    plain = hs.recall(ALICE, QUESTION, k=5)
    assert server.seen == []  # no expansion unless asked
    assert all(set(r.explanation.channels) <= {"dense", "bm25"} for r in plain)
    server.script(split("Caroline's sister", "Dana adopted a pet", entities=("Caroline", "Dana")))
    expanded = hs.recall(ALICE, QUESTION, k=5, expand=True)
    [request] = server.seen
    assert request.body["response_format"]["json_schema"]["name"] == "search"
    assert QUESTION in request.body["messages"][-1]["content"]
    by_content = {r.memory.content: r for r in expanded}
    bolt = by_content["Dana adopted a greyhound named Bolt in March."]
    assert {"dense:2", "bm25:2"} <= set(bolt.explanation.channels)  # "Dana adopted a pet"
    assert "bm25:3" in by_content["Caroline's sister is called Dana."].explanation.channels
    assert set(list(by_content)[:2]) == {  # both hops first
        "Dana adopted a greyhound named Bolt in March.",
        "Caroline's sister is called Dana.",
    }
    hs.recall(ALICE, QUESTION, k=5, expand=True)
    assert len(server.seen) == 1  # the same question again: no second call
    [row] = hs.usage(ALICE)
    assert (row.operation, row.calls) == ("query", 1)


@pytest.mark.parametrize(
    "reply",
    [
        error(500, "overloaded"),
        error(400, "bad model"),
        Reply(drop=True),
        openai_answer("no idea"),
        openai_answer(json.dumps({"queries": "Dana", "entities": []})),
    ],
)
def test_a_failing_model_leaves_the_plain_recall(
    hs: Hindsight, server: FakeLLM, reply: Reply
) -> None:
    server.script(reply, reply)  # an invalid answer is asked about once more
    results = hs.recall(ALICE, QUESTION, k=5, expand=True)
    assert [r.memory.id for r in results] == [r.memory.id for r in hs.recall(ALICE, QUESTION, k=5)]
    assert all(set(r.explanation.channels) <= {"dense", "bm25"} for r in results)


def test_a_slow_model_is_not_waited_for(
    settings: Settings, server: FakeLLM, embedder: Embeddings
) -> None:
    every = configured(settings, server, llm_expand=True, llm_expand_timeout_seconds=0.3)
    server.script(Reply(body=split("Dana").body, delay=2.0))
    with Hindsight(every, embedder=embedder) as hs:
        hs.retain(ALICE, NOTES[0], kind="fact")
        started = time.monotonic()
        results = hs.recall(ALICE, QUESTION)
        assert time.monotonic() - started < 1.5
        assert [r.memory.content for r in results] == [NOTES[0]]


def test_expand_on_rest_and_the_client(hs: Hindsight, server: FakeLLM) -> None:
    server.script(split("Dana adopted a pet"))
    with live_server(create_app(hs, mcp=False)) as url, Client(url) as client:
        results = client.recall(ALICE, QUESTION, k=3, expand=True)
        assert len(server.seen) == 1
        assert any("dense:1" in r.explanation.channels for r in results)
    bad: Any = "yes"
    with pytest.raises(ValidationError, match="expand"):
        hs.recall(ALICE, QUESTION, expand=bad)


def test_a_bare_fenced_list_is_the_sub_queries(hs: Hindsight, server: FakeLLM) -> None:
    """A model that answers with its searches alone, in a fence: they are the queries
    (and no entities); a search too short to be one is dropped, the rest kept."""
    server.script(openai_answer('```json\n["Dana adopted a pet", "x"]\n```'))
    expanded = hs.recall(ALICE, QUESTION, k=5, expand=True)
    assert len(server.seen) == 1
    by_content = {r.memory.content: r for r in expanded}
    bolt = by_content["Dana adopted a greyhound named Bolt in March."]
    assert {"dense:1", "bm25:1"} <= set(bolt.explanation.channels)
    [row] = hs.usage(ALICE)
    assert (row.calls, row.dropped_items) == (1, 1)
