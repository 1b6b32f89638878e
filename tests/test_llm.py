"""The LLM providers against real loopback servers that speak OpenAI's and Anthropic's
protocols: each request's shape, structured output and its fallbacks, retries, timeouts.

Accounting in the store, and usage on every interface: ``test_llm_usage.py``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llm_servers import FakeLLM, Reply, anthropic_answer, error, fake_llm, openai_answer

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings
from hindsight.errors import (
    LLMOutputError,
    LLMRequestError,
    LLMTimeoutError,
    LLMTransportError,
    LLMTruncatedError,
    LLMUnavailableError,
    ValidationError,
)
from hindsight.llm import LLM, Message, registry
from hindsight.llm.structured import check_schema, parse_json, validate

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "minLength": 1},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                },
                "required": ["content", "confidence"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["facts"],
    "additionalProperties": False,
}
GOOD = {"facts": [{"content": "Alice lives in Paris.", "confidence": 0.9}]}
ASK = [Message("user", "I live in Paris.")]


def make(
    server: FakeLLM, tmp_path: Path, provider: str = "openai", **settings: Any
) -> Iterator[LLM]:
    base = server.url + "/v1" if provider == "openai" else server.url
    llm = registry.create(
        provider,
        Settings(
            home=tmp_path,
            llm_provider=provider,
            llm_base_url=base,
            llm_model="m",
            llm_retry_base_seconds=0.01,
            **settings,
        ),
    )
    try:
        yield llm
    finally:
        llm.close()


@pytest.fixture
def openai(server: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LLM]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai")
    yield from make(server, tmp_path, llm_max_retries=2)


@pytest.fixture
def anthropic(server: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LLM]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    yield from make(server, tmp_path, "anthropic", llm_max_retries=2)


# -- the seam --------------------------------------------------------------------------------
def test_the_default_is_no_llm_and_every_call_says_so(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    assert settings.llm_provider == "none"
    assert {"none", "openai", "anthropic"} <= set(registry.names())
    llm = registry.create(settings.llm_provider, settings)
    with pytest.raises(LLMUnavailableError, match="HINDSIGHT_LLM_PROVIDER"):
        llm.text("hello")
    with pytest.raises(LLMUnavailableError):
        llm.structured(ASK, SCHEMA)
    with pytest.raises(ValidationError, match="unknown LLM provider"):
        registry.create("nope", settings)
    with pytest.raises(ValidationError, match="takes no options"):
        registry.create("none", settings, {"model": "x"})


def test_the_key_is_read_when_the_provider_is_made_and_never_shown(
    server: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-vendor-variable")
    settings = Settings(
        home=tmp_path, llm_provider="openai", llm_base_url=server.url + "/v1", llm_model="m"
    )
    llm = registry.create("openai", settings)
    server.script(openai_answer("hi"))
    assert llm.text("hello").text == "hi"
    assert server.seen[-1].headers["authorization"] == "Bearer sk-from-vendor-variable"
    llm.close()
    own = Settings(
        home=tmp_path,
        llm_provider="openai",
        llm_base_url=server.url + "/v1",
        llm_api_key="sk-hindsight-own",
    )
    monkeypatch.setenv("HINDSIGHT_LLM_API_KEY", "sk-hindsight-env")
    assert Settings(home=tmp_path).llm_api_key is not None  # read from the environment
    llm = registry.create("openai", own)
    server.script(openai_answer("hi"))
    llm.text("hello")
    assert server.seen[-1].headers["authorization"] == "Bearer sk-hindsight-own"
    for shown in (repr(own), str(own), repr(llm), repr(Settings(home=tmp_path))):
        assert "sk-" not in shown, shown
    llm.close()


def test_a_key_less_local_server_gets_no_authorization(
    server: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HINDSIGHT_LLM_API_KEY", raising=False)
    for llm in make(server, tmp_path):
        server.script(openai_answer("hi"))
        llm.text("hello")
    assert "authorization" not in server.seen[0].headers


# -- OpenAI chat completions -----------------------------------------------------------------
def test_openai_structured_answer_and_the_requests_shape(openai: LLM, server: FakeLLM) -> None:
    server.script(openai_answer(json.dumps(GOOD), prompt_tokens=30, completion_tokens=12))
    result = openai.structured(
        [Message("system", "Extract facts."), *ASK], SCHEMA, name="facts", max_tokens=300
    )
    assert result.value == GOOD
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (30, 12)
    assert (result.attempts, result.retries, result.format) == (1, 0, "json_schema")
    [seen] = server.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer sk-test-openai"
    assert seen.headers["content-type"] == "application/json"
    assert seen.body["model"] == "m"
    assert seen.body["max_tokens"] == 300
    assert seen.body["temperature"] == 0.0
    assert seen.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "facts", "schema": SCHEMA},
    }
    assert seen.body["messages"] == [
        {"role": "system", "content": "Extract facts."},
        {"role": "user", "content": "I live in Paris."},
    ]


@pytest.mark.parametrize(
    "answer",
    [
        "<think>The user says {they live} in Paris.</think>" + json.dumps(GOOD),
        "<think>reasoning that never ends, then the answer " + json.dumps(GOOD),
        "the server dropped the opening tag { </think>\n" + json.dumps(GOOD),
        "```json\n" + json.dumps(GOOD, indent=2) + "\n```",
        "<thinking>a</thinking>Here it is:\n```\n" + json.dumps(GOOD) + "\n```\nDone.",
        "Sure! " + json.dumps(GOOD) + " Hope that helps {:",
    ],
)
def test_reasoning_blocks_fences_and_prose_are_stripped(
    openai: LLM, server: FakeLLM, answer: str
) -> None:
    server.script(openai_answer(answer))
    assert openai.structured(ASK, SCHEMA).value == GOOD
    assert len(server.seen) == 1


def test_a_schema_echoed_back_is_sent_back_once_with_the_error(
    openai: LLM, server: FakeLLM
) -> None:
    server.script(
        openai_answer(json.dumps(SCHEMA), prompt_tokens=10, completion_tokens=40),
        openai_answer(json.dumps(GOOD), prompt_tokens=60, completion_tokens=9),
    )
    result = openai.structured(ASK, SCHEMA)
    assert result.value == GOOD
    assert result.attempts == 2
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (70, 49)
    retry = server.seen[1].body["messages"]
    assert retry[:1] == [{"role": "user", "content": "I live in Paris."}]
    assert retry[1] == {"role": "assistant", "content": json.dumps(SCHEMA)}
    assert retry[2]["role"] == "user"
    assert "repeats the JSON schema" in retry[2]["content"]


def test_an_invalid_answer_is_retried_quoting_what_is_wrong(openai: LLM, server: FakeLLM) -> None:
    bad = {"facts": [{"content": "Alice lives in Paris.", "confidence": 3}]}
    server.script(openai_answer(json.dumps(bad)), openai_answer(json.dumps(GOOD)))
    assert openai.structured(ASK, SCHEMA).value == GOOD
    quoted = server.seen[1].body["messages"][-1]["content"]
    assert "$.facts[0].confidence: 3 is above the maximum 1" in quoted


def test_malformed_json_twice_is_dropped_and_its_tokens_kept_on_the_error(
    openai: LLM, server: FakeLLM
) -> None:
    server.script(
        openai_answer('{"facts": [{"content": "Alice', completion_tokens=4),
        openai_answer("I cannot help with that.", completion_tokens=6),
        openai_answer(json.dumps(GOOD)),  # never asked for
    )
    with pytest.raises(LLMOutputError, match="dropped after a retry") as caught:
        openai.structured(ASK, SCHEMA)
    assert not isinstance(caught.value, LLMTruncatedError)
    assert len(server.seen) == 2
    assert (caught.value.prompt_tokens, caught.value.completion_tokens) == (22, 10)


def test_a_truncated_answer_is_a_failure_and_is_not_parsed_or_retried(
    openai: LLM, server: FakeLLM
) -> None:
    # a cut-off answer may still parse ('{"facts": []}' cut after the list): never read it
    server.script(openai_answer('{"facts": []}', finish="length"), openai_answer("{}"))
    with pytest.raises(LLMTruncatedError, match="cut off") as caught:
        openai.structured(ASK, SCHEMA, max_tokens=5)
    assert len(server.seen) == 1
    assert caught.value.completion_tokens == 7
    server.replies.clear()
    server.script(openai_answer("half a sent", finish="length"))
    with pytest.raises(LLMTruncatedError):
        openai.text("hello")


def test_a_server_that_rejects_schemas_is_asked_in_json_mode_and_remembered(
    openai: LLM, server: FakeLLM
) -> None:
    server.script(
        error(400, "response_format.type 'json_schema' is not supported by this model"),
        openai_answer(json.dumps(GOOD)),
        openai_answer(json.dumps(GOOD)),
    )
    result = openai.structured(ASK, SCHEMA)
    assert (result.value, result.format) == (GOOD, "json_object")
    assert openai.json_schema is False
    first, fallback = server.seen
    assert first.body["response_format"]["type"] == "json_schema"
    assert fallback.body["response_format"] == {"type": "json_object"}
    system = fallback.body["messages"][0]
    assert system["role"] == "system" and json.dumps(SCHEMA, indent=1) in system["content"]
    assert fallback.body["messages"][1:] == first.body["messages"]
    # remembered: the next call goes straight to JSON mode
    assert openai.structured(ASK, SCHEMA).format == "json_object"
    assert len(server.seen) == 3
    assert server.seen[2].body["response_format"] == {"type": "json_object"}


def test_another_4xx_is_final_and_not_retried(openai: LLM, server: FakeLLM) -> None:
    server.script(error(401, "invalid api key"), openai_answer(json.dumps(GOOD)))
    with pytest.raises(LLMRequestError, match=r"refused the request \(401\): invalid api key"):
        openai.structured(ASK, SCHEMA)
    assert len(server.seen) == 1
    assert openai.json_schema is True  # not a schema problem


def test_429_waits_as_retry_after_says_then_succeeds(openai: LLM, server: FakeLLM) -> None:
    server.script(error(429, "slow down", **{"Retry-After": "1"}), openai_answer("hi"))
    started = time.monotonic()
    answer = openai.text("hello")
    assert time.monotonic() - started >= 1.0
    assert (answer.text, answer.retries) == ("hi", 1)
    assert len(server.seen) == 2


def test_500s_until_the_retries_run_out(openai: LLM, server: FakeLLM) -> None:
    server.script(*[error(503, "overloaded")] * 3, openai_answer("never"))
    with pytest.raises(LLMTransportError, match="503 on every one of 3 tries") as caught:
        openai.text("hello")
    assert caught.value.retries == 2
    assert len(server.seen) == 3


def test_a_server_that_does_not_answer_in_time_is_a_timeout(
    server: FakeLLM, tmp_path: Path
) -> None:
    server.script(Reply(delay=0.8), Reply(delay=0.8), openai_answer("late"))
    for llm in make(server, tmp_path, llm_timeout_seconds=0.2, llm_max_retries=1):
        with pytest.raises(LLMTimeoutError, match=r"no answer within 0\.2 s") as caught:
            llm.text("hello")
        assert isinstance(caught.value, TimeoutError)
        assert caught.value.retries == 1
    assert len(server.seen) == 2


def test_a_server_that_dies_mid_call_is_retried_then_given_up(
    openai: LLM, server: FakeLLM, tmp_path: Path
) -> None:
    server.script(Reply(drop=True), openai_answer("again"))
    answer = openai.text("hello")
    assert (answer.text, answer.retries) == ("again", 1)
    server.script(*[Reply(drop=True)] * 3)
    with pytest.raises(LLMTransportError, match="cannot reach") as caught:
        openai.text("hello")
    assert caught.value.retries == 2
    assert len(server.seen) == 5


def test_a_server_that_is_gone_is_a_transport_error(tmp_path: Path) -> None:
    with fake_llm() as gone:
        pass  # stopped: its port refuses connections
    for llm in make(gone, tmp_path, llm_max_retries=1):
        with pytest.raises(LLMTransportError, match="cannot reach"):
            llm.text("hello")


def test_calls_in_flight_are_bounded_per_provider(server: FakeLLM, tmp_path: Path) -> None:
    server.script(*[Reply(openai_answer("x").body, delay=0.15) for _ in range(6)])
    for llm in make(server, tmp_path, llm_concurrency=2):
        threads = [threading.Thread(target=llm.text, args=("hello",)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(server.seen) == 6
    assert server.most_in_flight == 2


# -- Anthropic Messages ----------------------------------------------------------------------
def test_anthropic_structured_answer_through_a_forced_tool(anthropic: LLM, server: FakeLLM) -> None:
    server.script(anthropic_answer(tool=("facts", GOOD), stop="tool_use"))
    result = anthropic.structured(
        [Message("system", "Extract facts."), *ASK], SCHEMA, name="facts", max_tokens=200
    )
    assert result.value == GOOD
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (13, 5)
    [seen] = server.seen
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == "sk-ant-test"
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers
    assert seen.body["model"] == "m"
    assert seen.body["max_tokens"] == 200
    assert seen.body["system"] == "Extract facts."
    assert seen.body["messages"] == [{"role": "user", "content": "I live in Paris."}]
    assert seen.body["tools"] == [
        {"name": "facts", "description": "Record the answer.", "input_schema": SCHEMA}
    ]
    assert seen.body["tool_choice"] == {"type": "tool", "name": "facts"}


def test_anthropic_text_skips_thinking_and_a_cut_off_answer_fails(
    anthropic: LLM, server: FakeLLM
) -> None:
    server.script(anthropic_answer(text="Paris."), anthropic_answer(text="Par", stop="max_tokens"))
    assert anthropic.text("where?").text == "Paris."
    assert "tools" not in server.seen[0].body
    with pytest.raises(LLMTruncatedError):
        anthropic.text("where?")
    server.script(anthropic_answer(tool=("answer", GOOD), stop="max_tokens"))
    with pytest.raises(LLMTruncatedError):
        anthropic.structured(ASK, SCHEMA)


def test_anthropic_invalid_tool_input_is_retried_then_dropped(
    anthropic: LLM, server: FakeLLM
) -> None:
    bad = {"facts": [{"content": ""}]}
    server.script(
        anthropic_answer(tool=("answer", bad), stop="tool_use"),
        anthropic_answer(tool=("answer", bad), stop="tool_use"),
    )
    with pytest.raises(LLMOutputError, match="missing 'confidence'") as caught:
        anthropic.structured(ASK, SCHEMA)
    assert caught.value.prompt_tokens == 26
    retry = server.seen[1].body["messages"]
    assert retry[1] == {"role": "assistant", "content": json.dumps(bad)}
    assert "shorter than 1 characters" in retry[2]["content"]


def test_anthropic_server_rejecting_tools_is_asked_with_the_schema_in_the_prompt(
    anthropic: LLM, server: FakeLLM
) -> None:
    server.script(
        error(400, "tools: this model does not support tool use"),
        anthropic_answer(text="<think>ok</think>" + json.dumps(GOOD)),
    )
    result = anthropic.structured(ASK, SCHEMA)
    assert (result.value, result.format) == (GOOD, "json_object")
    fallback = server.seen[1].body
    assert "tools" not in fallback and "tool_choice" not in fallback
    assert json.dumps(SCHEMA, indent=1) in fallback["system"]


def test_anthropic_needs_a_model(server: FakeLLM, tmp_path: Path) -> None:
    llm = registry.create(
        "anthropic", Settings(home=tmp_path, llm_base_url=server.url, llm_api_key="k")
    )
    with pytest.raises(ValidationError, match="needs a model"):
        llm.text("hello")
    llm.close()
    assert server.seen == []


# -- the parser and the schema subset --------------------------------------------------------
def test_schemas_outside_the_checked_subset_are_refused() -> None:
    check_schema(SCHEMA)
    with pytest.raises(ValidationError, match="unsupported keywords: \\['pattern'\\]"):
        check_schema({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}})
    with pytest.raises(ValidationError, match="unknown type"):
        check_schema({"type": "dict"})


def test_the_validator_names_each_problem_by_path() -> None:
    assert validate(GOOD, SCHEMA) == []
    assert validate({"facts": [{"content": "x", "confidence": True}], "more": 1}, SCHEMA) == [
        "$.facts[0].confidence: expected number, got bool",
        "$: unexpected property 'more'",
    ]
    assert validate({"n": 1.5}, {"type": "object", "properties": {"n": {"type": "integer"}}})
    assert validate("x", {"type": ["string", "null"]}) == []
    assert validate(float("nan"), {"type": "number"}) == ["$: nan is not a finite number"]


# strings without the characters that open a reasoning block or a fence
TEXT = st.text(alphabet=st.characters(blacklist_characters="<`"), max_size=20)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


@given(
    value=st.dictionaries(TEXT, JSON_VALUES, max_size=5),
    thinking=st.text(max_size=40).filter(lambda t: "<" not in t and "`" not in t),
    wrap=st.sampled_from(["plain", "think", "open-think", "fence", "prose"]),
)
def test_an_object_survives_whatever_wraps_it(
    value: dict[str, Any], thinking: str, wrap: str
) -> None:
    text = json.dumps(value)
    wrapped = {
        "plain": text,
        "think": f"<think>{thinking}</think>\n{text}",
        "open-think": f"<think>\n{text}",
        "fence": f"```json\n{text}\n```",
        "prose": f"Here you go:\n{text}\nThat is all.",
    }[wrap]
    assert parse_json(wrapped) == value


def test_a_provider_registered_through_the_registry_gets_the_conveniences(
    tmp_path: Path, embedder: Embeddings
) -> None:
    from providers import Scripted

    Scripted.answers.extend(['{"facts": "no"}', json.dumps(GOOD)])
    settings = Settings(home=tmp_path, llm_provider="scripted", sqlite_synchronous="OFF")
    with Hindsight(settings, embedder=embedder) as hs:
        assert hs.llm.structured("user:a", "extract", ASK, SCHEMA).value == GOOD
        [row] = hs.usage()
    assert (row.calls, row.prompt_tokens, row.completion_tokens) == (1, 20, 10)
    first, retry = Scripted.requests[-2:]
    assert first.format == "json_schema" and first.schema == SCHEMA
    assert "expected array, got str" in retry.messages[-1].content


def test_the_usage_table_is_the_next_migration_of_each_database() -> None:
    from hindsight.store.migrations import LLM_USAGE, POSTGRES, SQLITE

    assert SQLITE[7] == (8, LLM_USAGE.format(real="REAL"))
    assert POSTGRES[5] == (6, LLM_USAGE.format(real="DOUBLE PRECISION"))


def test_a_4xx_that_json_mode_does_not_cure_is_raised_and_not_remembered(
    openai: LLM, server: FakeLLM
) -> None:
    server.script(
        error(400, "tool_choice is not allowed with this model"),
        error(400, "tool_choice is not allowed with this model"),
    )
    with pytest.raises(LLMRequestError, match="tool_choice"):
        openai.structured(ASK, SCHEMA)
    assert len(server.seen) == 2
    assert openai.json_schema is True
