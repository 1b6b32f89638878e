"""LLM calls accounted per owner and operation in the store (SQLite and PostgreSQL), the
daily budget, and usage on the library, the CLI, REST and the client.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from llm_servers import FakeLLM, error, openai_answer
from servers import live_server

from hindsight import Client, Hindsight, Settings
from hindsight.access import KeyRing, Principal
from hindsight.api import create_app
from hindsight.cli import cli
from hindsight.embed import Embeddings
from hindsight.errors import (
    LLMBudgetError,
    LLMOutputError,
    LLMTransportError,
    LLMUnavailableError,
    PermissionDeniedError,
    ValidationError,
)
from hindsight.llm import Message
from hindsight.store import UsageRow

ALICE, BOB = "user:alice", "user:bob"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
ASK = [Message("user", "I live in Paris.")]
PRICES = {"m": {"prompt": 1.0, "completion": 2.0}}  # USD per million tokens


def llm_settings(settings: Settings, server: FakeLLM, **more: Any) -> Settings:
    return settings.model_copy(
        update={
            "llm_provider": "openai",
            "llm_base_url": server.url + "/v1",
            "llm_model": "m",
            "llm_models": {"summarize": "small"},
            "llm_retry_base_seconds": 0.01,
            "llm_max_retries": 2,
            "llm_prices": PRICES,
            **more,
        }
    )


@pytest.fixture
def hs(
    settings: Settings, server: FakeLLM, embedder: Embeddings, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Hindsight]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with Hindsight(llm_settings(settings, server), embedder=embedder) as engine:
        yield engine


def seed(hs: Hindsight, server: FakeLLM) -> None:
    """Alice: one clean answer, one after a retry, one dropped; Bob: a 429 retried, 500s."""
    city = json.dumps({"city": "Paris"})
    server.script(
        openai_answer(city, prompt_tokens=30, completion_tokens=12),
        openai_answer(json.dumps(SCHEMA), prompt_tokens=10, completion_tokens=40),
        openai_answer(city, prompt_tokens=60, completion_tokens=9),
        openai_answer("not json", prompt_tokens=5, completion_tokens=1),
        openai_answer("still not", prompt_tokens=5, completion_tokens=1),
        error(429, "slow down", **{"Retry-After": "0"}),
        openai_answer("A summary.", prompt_tokens=100, completion_tokens=20),
        *[error(500, "boom")] * 3,
    )
    assert hs.llm.structured(ALICE, "extract", ASK, SCHEMA).value == {"city": "Paris"}
    assert hs.llm.structured(ALICE, "extract", ASK, SCHEMA).attempts == 2
    with pytest.raises(LLMOutputError):
        hs.llm.structured(ALICE, "extract", ASK, SCHEMA)
    assert hs.llm.complete(BOB, "summarize", ASK).retries == 1
    with pytest.raises(LLMTransportError):
        hs.llm.complete(BOB, "summarize", ASK)
    assert server.replies == type(server.replies)()  # every reply was asked for


EXPECTED = [
    UsageRow(
        owner=ALICE,
        operation="extract",
        model="m",
        calls=3,
        failures=1,
        retries=0,
        dropped=1,
        prompt_tokens=110,
        completion_tokens=63,
        cost=(110 * 1.0 + 63 * 2.0) / 1e6,
    ),
    UsageRow(
        owner=BOB,
        operation="summarize",
        model="small",
        calls=2,
        failures=1,
        retries=3,
        dropped=0,
        prompt_tokens=100,
        completion_tokens=20,
        cost=None,  # "small" has no price
    ),
]


def _approx(rows: list[UsageRow]) -> list[UsageRow]:
    """The rows with costs rounded (a sum of floats in SQL)."""
    return [replace(r, cost=None if r.cost is None else round(r.cost, 12)) for r in rows]


@pytest.mark.backends
def test_every_call_is_accounted_by_owner_operation_and_model(
    hs: Hindsight, server: FakeLLM
) -> None:
    before = datetime.now(UTC)
    seed(hs, server)
    assert _approx(hs.usage()) == _approx(EXPECTED)
    assert _approx(hs.usage(ALICE)) == _approx(EXPECTED[:1])
    assert hs.usage(BOB, since=before.isoformat()) == hs.usage(BOB)
    assert hs.usage(since=datetime.now(UTC) + timedelta(seconds=1)) == []
    # each operation asked for its own model
    assert [s.body["model"] for s in server.seen] == ["m"] * 5 + ["small"] * 5
    with pytest.raises(ValidationError, match="invalid since"):
        hs.usage(since="yesterday-ish")
    with pytest.raises(ValidationError, match="unknown operation"):
        hs.llm.complete(ALICE, "gossip", ASK)


@pytest.mark.backends
def test_the_daily_budget_defers_work_before_anything_is_sent(
    settings: Settings, server: FakeLLM, embedder: Embeddings
) -> None:
    with Hindsight(
        llm_settings(settings, server, llm_daily_token_budget=50), embedder=embedder
    ) as hs:
        server.script(*[openai_answer("ok") for _ in range(4)])  # 18 tokens each
        for _ in range(2):
            hs.llm.complete(ALICE, "query", ASK)
        assert not hs.llm.over_budget(ALICE)
        hs.llm.complete(ALICE, "query", ASK)
        assert hs.llm.over_budget(ALICE)
        with pytest.raises(LLMBudgetError, match="tomorrow"):
            hs.llm.complete(ALICE, "query", ASK)
        assert len(server.seen) == 3  # the deferred call sent nothing...
        assert hs.usage(ALICE)[0].calls == 3  # ...and was not counted
        assert not hs.llm.over_budget(BOB)  # a budget is each owner's own
        hs.llm.complete(BOB, "query", ASK)


def test_without_an_llm_nothing_is_sent_or_counted(
    settings: Settings, embedder: Embeddings
) -> None:
    with Hindsight(settings, embedder=embedder) as hs:
        assert not hs.llm.configured
        with pytest.raises(LLMUnavailableError):
            hs.llm.structured(ALICE, "extract", ASK, SCHEMA)
        assert hs.usage() == []
        assert not hs.llm.over_budget(ALICE)


@pytest.mark.backends
def test_a_caller_reads_only_the_usage_of_owners_it_may_read(
    hs: Hindsight, server: FakeLLM
) -> None:
    seed(hs, server)
    alice = hs.as_principal(Principal("alice", read=(ALICE,), write=(ALICE,)))
    assert [r.owner for r in alice.usage(ALICE)] == [ALICE]
    with pytest.raises(PermissionDeniedError):
        alice.usage(BOB)
    with pytest.raises(PermissionDeniedError):
        alice.usage()


def test_usage_on_the_cli(
    hs: Hindsight, server: FakeLLM, settings: Settings, tmp_path: Path
) -> None:
    seed(hs, server)
    env = {"HINDSIGHT_SQLITE_SYNCHRONOUS": "OFF"}
    if settings.database_url is not None:
        env["HINDSIGHT_DATABASE_URL"] = settings.database_url
    if settings.redis_url is not None:
        env["HINDSIGHT_REDIS_URL"] = settings.redis_url

    def run(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(cli, ["--home", str(settings.home), *args], env=env)
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result.stdout if code == 0 else result.stderr

    data = json.loads(run("usage", "--json"))
    assert [r["owner"] for r in data["usage"]] == [ALICE, BOB]
    first = data["usage"][0]
    assert (first["prompt_tokens"], first["completion_tokens"]) == (110, 63)
    assert (first["calls"], first["failures"], first["dropped"]) == (3, 1, 1)
    total = data["total"]
    assert (total["prompt_tokens"], total["completion_tokens"], total["calls"]) == (210, 83, 5)
    assert total["cost"] == pytest.approx((110 + 126) / 1e6)
    only_bob = json.loads(run("usage", "--owner", BOB, "--json"))["usage"]
    assert [(r["owner"], r["model"], r["cost"]) for r in only_bob] == [(BOB, "small", None)]
    table = run("usage").splitlines()
    assert table[0].split() == [
        "owner", "operation", "model", "calls", "failed", "retries", "dropped", "dropped_items",
        "prompt", "completion", "cost",
    ]  # fmt: skip
    assert table[1].split() == [
        ALICE, "extract", "m", "3", "1", "0", "1", "0", "110", "63", "$0.0002",
    ]  # fmt: skip
    assert table[2].split() == [
        BOB, "summarize", "small", "2", "1", "3", "0", "0", "100", "20", "-",
    ]  # fmt: skip
    assert table[3].split()[0] == "total"
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert run("usage", "--since", future) == "no LLM calls\n"
    err = run("usage", "--since", "soonish", code=2)
    assert err.startswith("error: invalid since") and err.count("\n") == 1


def test_usage_on_rest_and_the_client(hs: Hindsight, server: FakeLLM) -> None:
    seed(hs, server)
    with live_server(create_app(hs, mcp=False)) as url:
        with Client(url) as client:
            assert client.usage() == hs.usage()
            assert client.usage(ALICE) == hs.usage(ALICE)
            assert client.usage(since=datetime.now(UTC) + timedelta(seconds=5)) == []
        body = httpx.get(f"{url}/v1/usage", params={"owner": BOB}).json()
        assert body["usage"][0]["prompt_tokens"] == 100
        assert body["usage"][0]["completion_tokens"] == 20
        assert body["total"]["calls"] == 2
        bad = httpx.get(f"{url}/v1/usage", params={"since": "nope"})
        assert bad.status_code == 400
        assert bad.json()["error"]["type"] == "ValidationError"


@pytest.mark.embedded
def test_rest_usage_stays_within_the_keys_scope(hs: Hindsight, server: FakeLLM) -> None:
    seed(hs, server)
    keys = KeyRing.parse(
        {
            "keys": [
                {"name": "alice", "key": "alice-key-000000000001", "read": [ALICE]},
                {"name": "admin", "key": "admin-key-000000000003", "read": ["*"]},
            ]
        }
    )
    with live_server(create_app(hs, keyring=keys, mcp=False)) as url:
        alice = {"authorization": "Bearer alice-key-000000000001"}
        mine = httpx.get(f"{url}/v1/usage", params={"owner": ALICE}, headers=alice)
        assert [r["owner"] for r in mine.json()["usage"]] == [ALICE]
        for params in ({"owner": BOB}, {}):
            denied = httpx.get(f"{url}/v1/usage", params=params, headers=alice)
            assert denied.status_code == 403
            assert "summarize" not in denied.text
        with Client(url, "admin-key-000000000003") as admin:
            assert admin.usage() == hs.usage()
