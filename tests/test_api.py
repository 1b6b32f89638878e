"""The REST API route by route (FastAPI's TestClient, in-process), and ``hindsight serve``."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from click.testing import CliRunner
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from mcp import Client as McpClient
from mcp import StdioServerParameters

from hindsight import Hindsight, Settings, ValidationError
from hindsight.access import Principal
from hindsight.api import create_app, is_loopback, keyring_for
from hindsight.cli import cli
from hindsight.embed import Embeddings

OWNER = "user:alice"
Response = httpx.Response | httpx2.Response  # TestClient answers with httpx2's


@pytest.fixture
def api(hs: Hindsight) -> Iterator[TestClient]:
    with TestClient(
        create_app(hs, mcp=False), base_url="http://127.0.0.1", raise_server_exceptions=False
    ) as client:
        yield client


def ok(response: Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def error(response: Response, status: int, type_: str, *needles: str) -> str:
    """Check an error answer's status and body; returns its message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"type", "message"}, body
    assert body["error"]["type"] == type_, body
    message: str = body["error"]["message"]
    assert "Traceback" not in response.text
    for needle in needles:
        assert needle in message, message
    return message


def retain(api: TestClient, content: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = ok(
        api.post("/v1/memories", json={"owner": OWNER, "content": content, **extra})
    )
    return body


# -- long-term memory -------------------------------------------------------------------------
def test_retain_get_update_forget(api: TestClient, hs: Hindsight) -> None:
    kept = retain(api, "I live in Paris and I love jazz.", session_id="s1", metadata={"a": 1})
    assert kept["episodes"] and kept["created"]
    episode = ok(api.get(f"/v1/memories/{kept['episodes'][0]}"))
    assert episode["content"] == "I live in Paris and I love jazz."
    assert episode["owner"] == OWNER and episode["provenance"]["session_id"] == "s1"
    assert episode == json.loads(json.dumps(ok(api.get(f"/v1/memories/{episode['id']}"))))

    changed = ok(api.patch(f"/v1/memories/{episode['id']}", json={"confidence": 0.5}))
    assert changed["confidence"] == 0.5 and changed["content"] == episode["content"]
    assert changed["metadata"] == episode["metadata"]  # fields not given stay as they were
    assert hs.get(episode["id"]).confidence == 0.5

    receipt = ok(api.delete(f"/v1/memories/{episode['id']}"))
    assert receipt["deleted_ids"] == [episode["id"]]
    assert receipt["count"] == 1 + len(receipt["derived_ids"])
    error(api.get(f"/v1/memories/{episode['id']}"), 404, "NotFoundError", episode["id"])


def test_retain_a_conversation_and_one_memory_of_a_kind(api: TestClient) -> None:
    messages = [
        {"role": "user", "content": "My favourite colour is green.", "speaker": "Alice"},
        {"role": "assistant", "content": "Noted."},
    ]
    assert len(retain(api, None, messages=messages)["episodes"]) == 2  # type: ignore[arg-type]
    fact = retain(api, "Alice has a cat named Tom.", kind="fact", confidence=0.9)
    assert fact["created"] and not fact["episodes"]
    assert ok(api.get(f"/v1/memories/{fact['created'][0]}"))["kind"] == "fact"


def test_recall_explains_and_searches_weighted_owners(api: TestClient) -> None:
    retain(api, "I live in Paris and I love jazz.")
    ok(
        api.post(
            "/v1/memories", json={"owner": "shared:team", "content": "The team meets on Mondays."}
        )
    )
    found = ok(
        api.post("/v1/recall", json={"owners": OWNER, "query": "where does she live?", "k": 3})
    )["results"]
    assert 0 < len(found) <= 3 and "Paris" in found[0]["memory"]["content"]
    assert set(found[0]["explanation"]) == {
        "channels",
        "fused",
        "boosts",
        "owner_weight",
        "final",
        "confidence",
        "unavailable",  # channels this recall went without: none
        "rerank",  # the rerank step: null without a reranker
    }
    assert found[0]["explanation"]["unavailable"] == []
    assert found[0]["explanation"]["rerank"] is None
    both = ok(
        api.post(
            "/v1/recall",
            json={"owners": {OWNER: 1.0, "shared:team": 0.5}, "query": "when does the team meet"},
        )
    )["results"]
    assert {r["memory"]["owner"] for r in both} == {OWNER, "shared:team"}
    team = next(r for r in both if r["memory"]["owner"] == "shared:team")
    assert team["explanation"]["owner_weight"] == 0.5


def test_recall_resolves_named_days_in_the_askers_time_zone(api: TestClient) -> None:
    retain(api, "I went hiking in the Alps.", observed_at="2023-04-30T20:00:00Z")
    for zone, boost in ((None, 1.0), ("Asia/Tokyo", 2.0)):  # 1 May already in Tokyo
        body = {"owners": OWNER, "query": "hiking in May 2023", "k": 1, "timezone": zone}
        (found,) = ok(api.post("/v1/recall", json=body))["results"]
        assert found["explanation"]["boosts"]["time"] == boost


def test_list_is_paginated_with_next_links(api: TestClient) -> None:
    for i in range(5):
        retain(api, f"Note number {i} about gardening.", kind="fact")
    seen: list[str] = []
    url: str | None = "/v1/memories?owner=user:alice&kind=fact&limit=2"
    pages = 0
    while url is not None:
        page = ok(api.get(url))
        seen += [m["id"] for m in page["memories"]]
        assert page["limit"] == 2 and len(page["memories"]) <= 2
        url, pages = page["next"], pages + 1
        if url is not None:
            assert page["next_offset"] == page["offset"] + 2
    assert len(seen) == len(set(seen)) == 5 and pages == 3


def test_forget_an_owners_session_with_a_receipt(api: TestClient, hs: Hindsight) -> None:
    retain(api, "I play chess on Sundays.", session_id="s1")
    keep = retain(api, "I work as a nurse.", session_id="s2")
    receipt = ok(api.post("/v1/forget", json={"owner": OWNER, "session_id": "s1"}))
    assert receipt["deleted_ids"] and receipt["criteria"]["session_id"] == "s1"
    assert {m.provenance.session_id for m in hs.list_memories(OWNER)} == {"s2"}
    assert hs.get(keep["episodes"][0]).content == "I work as a nurse."


def test_forget_an_owners_memories_by_source_and_by_writer(api: TestClient, hs: Hindsight) -> None:
    retain(api, "I love jazz.")
    tool = retain(api, "Tool weather returned: sunny.", source="tool")
    receipt = ok(api.post("/v1/forget", json={"owner": OWNER, "source": "tool"}))
    assert set(tool["episodes"]) <= set(receipt["deleted_ids"])
    assert receipt["criteria"]["source"] == "tool"
    assert {m.provenance.source.value for m in hs.list_memories(OWNER)} == {"user"}
    nobody = ok(api.post("/v1/forget", json={"owner": OWNER, "principal": "crawler"}))
    assert nobody["deleted_ids"] == [] and nobody["criteria"]["principal"] == "crawler"
    error(api.post("/v1/forget", json={"owner": OWNER, "source": "robot"}), 400, "ValidationError")


def test_recall_results_carry_their_provenance(api: TestClient) -> None:
    retain(api, "Tool weather returned: sunny in Lisbon.", source="tool")
    (hit,) = ok(api.post("/v1/recall", json={"owners": OWNER, "query": "weather", "k": 1}))[
        "results"
    ]
    memory = hit["memory"]
    assert memory["provenance"]["source"] == "tool" and memory["trust"] < 1.0
    assert memory["flags"] == [] and "sunny in Lisbon" in memory["content"]


# -- the review queue and the audit log ---------------------------------------------------------
TRUTH = "I'm severely allergic to penicillin."
CLAIM = "Pharmacy sync: the patient is no longer allergic to penicillin."


def test_review_queue_then_approve_and_reject(api: TestClient, hs: Hindsight) -> None:
    retain(api, TRUTH)
    agent = hs.as_principal(Principal("agent", read=(OWNER,), write=(OWNER,)))
    claim = agent.retain(OWNER, CLAIM, source="tool").episodes[0]  # the local user reviews it
    page = ok(api.get("/v1/review", params={"owner": OWNER}))
    assert page["limit"] == 50 and page["offset"] == 0 and page["next_offset"] is None
    item = next(i for i in page["items"] if i["memory"]["id"] == claim)
    assert item["memory"]["status"] == "pending_review" and item["memory"]["review"]["reason"]
    assert item["conflicts"] and all("allergic" in c["content"] for c in item["conflicts"])
    assert page["items"] == ok(api.get("/v1/review"))["items"]  # the only owner
    one = ok(api.get("/v1/review", params={"owner": OWNER, "limit": 1}))
    assert len(one["items"]) == 1 and one["next_offset"] == 1

    # what this caller wrote is not its to approve: 403, and it stays held
    mine = retain(api, CLAIM, source="tool", session_id="s9")["episodes"][0]
    error(api.post(f"/v1/review/{mine}/approve"), 403, "PermissionDeniedError", "wrote")
    assert hs.get(mine).status.value == "pending_review"
    approved = ok(api.post(f"/v1/review/{claim}/approve"))["memories"]
    assert approved[0]["id"] == claim and approved[0]["status"] == "active"
    assert hs.get(claim).status.value == "active"
    error(api.post(f"/v1/review/{claim}/approve"), 400, "ValidationError", "not held")
    error(api.post("/v1/review/m_0000nothing/reject"), 404, "NotFoundError")

    kept = retain(api, "Sync: the patient is no longer allergic to penicillin.", source="tool")
    rejected = ok(api.post(f"/v1/review/{kept['episodes'][0]}/reject"))["memories"]
    assert rejected[0]["status"] == "rejected"  # on_reject keeps it by default
    gone = retain(api, "Update: the patient is not allergic to penicillin.", source="tool")
    receipt = ok(api.post(f"/v1/review/{gone['episodes'][0]}/reject", json={"forget": True}))
    assert gone["episodes"][0] in receipt["deleted_ids"] and receipt["id"].startswith("r_")
    bad = api.post("/v1/review/m_0000nothing/reject", json={"forget": "maybe"})
    error(bad, 422, "ValidationError", "body.forget")


def test_audit_pages_back_and_verifies(api: TestClient) -> None:
    for i in range(3):
        retain(api, f"Note {i}: the garden needs water.")
    everything = ok(api.get("/v1/audit", params={"owner": OWNER}))
    assert [e["action"] for e in everything["entries"]] == ["retain"] * 3
    assert everything["next_before_seq"] is None
    seen, before = [], None
    while True:
        params = {"owner": OWNER, "limit": 2, **({} if before is None else {"before_seq": before})}
        page = ok(api.get("/v1/audit", params=params))
        seen += page["entries"]
        before = page["next_before_seq"]
        if before is None:
            break
    assert seen == everything["entries"]
    assert ok(api.get("/v1/audit", params={"action": "forget"}))["entries"] == []
    assert (
        ok(api.get("/v1/audit", params={"principal": "local", "limit": 1}))["entries"]
        == (everything["entries"][:1])
    )
    error(api.get("/v1/audit", params={"since": "soon"}), 400, "ValidationError", "since")
    assert ok(api.get("/v1/audit/verify")) == {"entries": 3, "intact": True, "broken_at": None}


def test_export_streams_json_lines_that_import_reads(api: TestClient, hs: Hindsight) -> None:
    retain(api, "I live in Paris and I love jazz.")
    response = api.get("/v1/export", params={"owner": OWNER})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    records = [json.loads(line) for line in response.text.splitlines()]
    assert records == list(hs.export(OWNER))
    assert ok(api.post("/v1/import", json={"records": records})) == {
        "imported": 0,
        "skipped": len(records),
        "held": 0,
    }
    ok(api.post("/v1/forget", json={"owner": OWNER}))
    assert ok(api.post("/v1/import", json={"records": records}))["imported"] == len(records)
    assert sorted(m["id"] for m in hs.export(OWNER)) == sorted(r["id"] for r in records)


def test_import_checks_every_record_first(api: TestClient, hs: Hindsight) -> None:
    retain(api, "I live in Paris.")
    records = list(hs.export(OWNER))
    ok(api.post("/v1/forget", json={"owner": OWNER}))
    bad = [*records, {**records[0], "id": "m_other", "kind": "nonsense"}]
    error(api.post("/v1/import", json={"records": bad}), 400, "ValidationError", "kind")
    error(
        api.post("/v1/import", json={"records": [*records, {"content": "x"}]}),
        400,
        "ValidationError",
        f"record {len(records) + 1}",
        "owner",
    )
    assert list(hs.export(OWNER)) == []


def test_stats_of_an_owner_and_of_all(api: TestClient) -> None:
    retain(api, "I live in Paris.")
    mine = ok(api.get("/v1/stats", params={"owner": OWNER}))
    assert mine["memories"] >= 1 and mine["by_kind"]["episode"] == 1 and mine["dimension"] == 384
    assert ok(api.get("/v1/stats"))["owners"] == 1


# -- working memory -----------------------------------------------------------------------------
def test_working_memory_turns_window_sessions_and_close(api: TestClient, hs: Hindsight) -> None:
    turn = {"owner": OWNER, "content": "I am planning a trip to Rome.", "speaker": "Alice"}
    first = ok(api.post("/v1/sessions/s1/turns", json=turn))
    assert first == {"consolidated": False, "retained": None}
    ok(api.post("/v1/sessions/s1/turns", json={**turn, "role": "assistant", "content": "Nice!"}))
    window = ok(api.get("/v1/sessions/s1/turns", params={"owner": OWNER}))["turns"]
    assert [t["role"] for t in window] == ["user", "assistant"]
    assert window[0]["speaker"] == "Alice" and window[0]["session_id"] == "s1"
    assert ok(api.get("/v1/sessions", params={"owner": OWNER}))["sessions"] == [
        {"session_id": "s1", "turns": 2, "tokens": sum(t["tokens"] for t in window)}
    ]
    closed = ok(api.post("/v1/sessions/s1/close", json={"owner": OWNER}))
    assert len(closed["episodes"]) == 2
    assert hs.window(OWNER, "s1") == []
    ok(api.post("/v1/sessions/s2/turns", json=turn))
    assert len(ok(api.post("/v1/sessions/s2/consolidate", json={"owner": OWNER}))["episodes"]) == 1


def test_a_correction_moves_the_window_at_once(api: TestClient) -> None:
    turn = {"owner": OWNER, "content": "No, that's wrong: I live in Lyon, not Paris."}
    moved = ok(api.post("/v1/sessions/s1/turns", json=turn))
    assert moved["consolidated"] and moved["retained"]["episodes"]


def test_summarize_and_reflect(api: TestClient, hs: Hindsight) -> None:
    for text in ("I live in Paris.", "I love jazz.", "I work as a nurse at night."):
        ok(api.post("/v1/sessions/s1/turns", json={"owner": OWNER, "content": text}))
    hs.consolidate(OWNER, "s1")
    summary = ok(api.post("/v1/sessions/s1/summarize", json={"owner": OWNER}))
    assert summary["owner"] == OWNER and summary["kind"] == "summary"
    assert hs.get(summary["id"]).content == summary["content"]
    written = ok(api.post("/v1/reflect", json={"owner": OWNER, "session_id": "s1"}))["memories"]
    assert all(m["owner"] == OWNER for m in written)
    assert [hs.get(m["id"]).id for m in written] == [m["id"] for m in written]


# -- errors: mapped once, naming the problem, changing nothing ---------------------------------
@pytest.mark.parametrize(
    ("method", "path", "body", "status", "needle"),
    [
        ("post", "/v1/memories", {"owner": "alice", "content": "x"}, 400, "invalid owner 'alice'"),
        ("post", "/v1/memories", {"owner": OWNER, "content": "  "}, 400, "content is empty"),
        ("post", "/v1/memories", {"owner": OWNER}, 400, "give exactly one of content"),
        (
            "post",
            "/v1/memories",
            {"owner": OWNER, "content": "x", "kind": "x"},
            400,
            "invalid kind",
        ),
        ("post", "/v1/memories", {"owner": OWNER, "content": 3}, 422, "body.content"),
        ("post", "/v1/memories", {"owner": OWNER, "text": "x"}, 422, "body.text"),
        ("post", "/v1/recall", {"owners": OWNER, "query": "x", "k": 0}, 400, "k must be"),
        ("post", "/v1/recall", {"owners": [], "query": "x"}, 400, "at least one owner"),
        ("post", "/v1/recall", {"owners": {OWNER: -1}, "query": "x"}, 400, "weight of owner"),
        ("post", "/v1/recall", {"owners": OWNER, "query": "x", "since": "soon"}, 400, "since"),
        ("post", "/v1/recall", {"owners": OWNER, "query": "x", "timezone": "X"}, 400, "timezone"),
        ("patch", "/v1/memories/m_1", {}, 400, "nothing to update"),
        ("post", "/v1/forget", {"owner": OWNER, "since": "x"}, 400, "invalid since"),
        ("post", "/v1/sessions/s 1/turns", {"owner": OWNER, "content": "x"}, 400, "session id"),
        (
            "post",
            "/v1/sessions/s1/turns",
            {"owner": OWNER, "content": "x", "role": "x"},
            422,
            "role",
        ),
        ("post", "/v1/import", {"records": [{"owner": OWNER}]}, 400, "record 1: missing field"),
        ("get", "/v1/memories?owner=user:alice&limit=0", None, 400, "limit must be"),
        ("get", "/v1/memories?owner=user:alice&offset=-1", None, 422, "query.offset"),
        ("get", "/v1/memories?owner=user:alice&status=gone", None, 400, "invalid status"),
        ("get", "/v1/memories", None, 422, "query.owner: Field required"),
    ],
)
def test_bad_input_is_a_clear_error_and_changes_nothing(
    api: TestClient,
    hs: Hindsight,
    method: str,
    path: str,
    body: dict[str, Any] | None,
    status: int,
    needle: str,
) -> None:
    retain(api, "I live in Paris.")
    before = (list(hs.export(OWNER)), hs.sessions(OWNER))
    response = api.request(method.upper(), path, json=body)
    error(response, status, "ValidationError", needle)
    assert (list(hs.export(OWNER)), hs.sessions(OWNER)) == before


def test_a_misspelt_query_parameter_is_refused(api: TestClient) -> None:
    response = api.get("/v1/memories", params={"owner": OWNER, "kinds": "fact"})
    error(response, 422, "ValidationError", "query.kinds: Extra inputs are not permitted")
    error(api.get("/v1/stats", params={"ownr": OWNER}), 422, "ValidationError", "query.ownr")


def test_unknown_ids_routes_and_methods(api: TestClient) -> None:
    error(api.get("/v1/memories/m_nope"), 404, "NotFoundError", "no memory with id 'm_nope'")
    error(api.patch("/v1/memories/m_nope", json={"confidence": 1}), 404, "NotFoundError")
    error(api.delete("/v1/memories/m_nope"), 404, "NotFoundError")
    error(api.get("/v2/anything"), 404, "NotFoundError", "no route GET /v2/anything")
    error(api.put("/v1/recall"), 405, "MethodNotAllowed", "PUT")


def test_forget_one_checks_the_owner_when_given(api: TestClient, hs: Hindsight) -> None:
    kept = retain(api, "I live in Paris.")["episodes"][0]
    error(api.delete(f"/v1/memories/{kept}", params={"owner": "user:bob"}), 404, "NotFoundError")
    assert hs.get(kept).id == kept
    ok(api.delete(f"/v1/memories/{kept}", params={"owner": OWNER}))


def test_a_body_over_the_limit_is_413_before_it_is_parsed(
    settings: Settings, embedder: Embeddings
) -> None:
    settings.max_request_bytes = 1_000
    with (
        Hindsight(settings, embedder=embedder) as hs,
        TestClient(create_app(hs, mcp=False), base_url="http://127.0.0.1") as api,
    ):
        big = {"owner": OWNER, "content": "x" * 2_000}
        error(api.post("/v1/memories", json=big), 413, "RequestTooLarge", "1000 bytes")

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            yield json.dumps(big).encode()

        error(api.post("/v1/memories", content=chunks()), 413, "RequestTooLarge")
        assert hs.stats().memories == 0
        retain(api, "small enough")  # the server still answers


def test_a_slow_store_is_a_503_naming_the_timeout(settings: Settings, embedder: Embeddings) -> None:
    settings.request_timeout_seconds = 1e-9
    with (
        Hindsight(settings, embedder=embedder) as hs,
        TestClient(create_app(hs, mcp=False), base_url="http://127.0.0.1") as api,
    ):
        response = api.post("/v1/recall", json={"owners": OWNER, "query": "anything"})
        error(response, 503, "StoreTimeoutError", "did not answer within")
        assert response.headers["retry-after"] == "1"
        error(api.get("/ready"), 503, "StoreTimeoutError")
        assert ok(api.get("/health")) == {"status": "ok"}


@pytest.mark.backends
def test_the_server_deletes_expired_working_memory(
    settings: Settings, embedder: Embeddings
) -> None:
    settings.wm_ttl_seconds = 1
    settings.wm_purge_interval_seconds = 0.05
    with Hindsight(settings, embedder=embedder) as hs:
        hs.observe(OWNER, "s1", "a turn that will expire")
        assert hs.stats().working_turns == 1
        with TestClient(create_app(hs, mcp=False), base_url="http://127.0.0.1"):
            deadline = time.monotonic() + 10
            while hs.stats().working_turns and time.monotonic() < deadline:
                time.sleep(0.05)
        assert hs.stats().working_turns == 0


@pytest.mark.embedded  # a closed PostgreSQL connection is a StoreError: 503, tested below
def test_an_unexpected_failure_is_a_plain_500_and_ready_says_503(
    settings: Settings, embedder: Embeddings
) -> None:
    hs = Hindsight(settings, embedder=embedder)
    with TestClient(
        create_app(hs, mcp=False), base_url="http://127.0.0.1", raise_server_exceptions=False
    ) as api:
        assert ok(api.get("/ready")) == {"status": "ok"}
        hs.store.close()  # the database goes away under the server
        message = error(api.get("/v1/stats", params={"owner": OWNER}), 500, "InternalError")
        assert "server log" in message
        error(api.get("/ready"), 503, "StoreError", "the store is unavailable")


# -- probes, metrics, OpenAPI -------------------------------------------------------------------
def test_metrics_count_and_time_each_operation(api: TestClient) -> None:
    retain(api, "I live in Paris.")
    retain(api, "I love jazz.")
    api.get("/v1/memories/m_nope")
    text = api.get("/metrics").text
    assert (
        'hindsight_http_requests_total{method="POST",operation="retain",status="200"} 2.0' in text
    )
    assert 'hindsight_http_requests_total{method="GET",operation="get",status="404"} 1.0' in text
    assert 'hindsight_http_request_duration_seconds_count{operation="retain"} 2.0' in text
    assert 'hindsight_http_request_duration_seconds_bucket{le="+Inf",operation="retain"}' in text


def test_openapi_has_stable_operation_ids_and_models(api: TestClient) -> None:
    schema = ok(api.get("/openapi.json"))
    operations = {
        op["operationId"]: op for path in schema["paths"].values() for op in path.values()
    }
    app = api.app
    assert isinstance(app, FastAPI)
    routes = {r.operation_id for r in app.routes if isinstance(r, APIRoute)}
    assert set(operations) == routes
    for name, op in operations.items():
        success = op["responses"]["200"]["content"]
        assert any("schema" in c for c in success.values()), name
        if name not in {"health", "metrics"}:
            assert op["responses"]["503"]["content"]["application/json"]["schema"]["$ref"].endswith(
                "/ErrorBody"
            ), name
    assert "bearer" in json.dumps(schema["components"]["securitySchemes"]).lower()


# -- who may connect: keys on beyond loopback ---------------------------------------------------
def test_loopback_and_key_requirements(tmp_path: Path) -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.5", "example.com"))
    settings = Settings(home=tmp_path)
    assert keyring_for(settings, host="127.0.0.1") is None
    with pytest.raises(ValidationError, match=r"beyond loopback.*HINDSIGHT_API_KEYS_FILE"):
        keyring_for(settings, host="0.0.0.0")
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [{"name": "a", "key": "k" * 16, "read": ["user:a"]}]}))
    settings.api_keys_file = keys
    for host in ("127.0.0.1", "0.0.0.0"):
        ring = keyring_for(settings, host=host)
        assert ring is not None and ring.authenticate("k" * 16).name == "a"


def test_serve_beyond_loopback_without_keys_is_a_clear_startup_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HINDSIGHT_API_KEYS_FILE", raising=False)
    home = tmp_path / "home"
    result = CliRunner().invoke(cli, ["--home", str(home), "serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: listening on 0.0.0.0 (beyond loopback) requires")
    assert result.stderr.count("\n") == 1
    monkeypatch.setenv("HINDSIGHT_API_KEYS_FILE", str(tmp_path / "missing.json"))
    result = CliRunner().invoke(cli, ["--home", str(home), "serve"])
    assert result.exit_code == 2 and "cannot read API key file" in result.stderr


def test_hindsight_mcp_serves_the_official_client_over_stdio(tmp_path: Path) -> None:
    env = {**os.environ, "HINDSIGHT_SQLITE_SYNCHRONOUS": "OFF"}
    command = ["-m", "hindsight", "--home", str(tmp_path), "mcp"]
    server = StdioServerParameters(command=sys.executable, args=command, env=env)

    async def session() -> tuple[set[str], Any, Any]:
        async with McpClient(server) as mcp:
            tools = {tool.name for tool in (await mcp.list_tools()).tools}
            wrote = await mcp.call_tool("memory_write", {"owner": OWNER, "content": "I love jazz."})
            found = await mcp.call_tool("memory_search", {"owner": OWNER, "query": "music"})
            return tools, wrote, found

    tools, wrote, found = anyio.run(session)
    assert {"memory_write", "memory_search", "session_append"} <= tools
    assert not wrote.is_error and not found.is_error
    results = found.structured_content["results"]
    assert "jazz" in results[0]["content"]
    with Hindsight(Settings(home=tmp_path, sqlite_synchronous="OFF")) as hs:
        assert [m.content for m in hs.list_memories(OWNER, kinds=["episode"])] == ["I love jazz."]


def test_hindsight_serve_runs_a_real_server(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "HINDSIGHT_SQLITE_SYNCHRONOUS": "OFF"}
    env.pop("HINDSIGHT_API_KEYS_FILE", None)
    command = [sys.executable, "-m", "hindsight", "--home", str(tmp_path), "serve"]
    proc = subprocess.Popen(
        [*command, "--port", str(port)], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/ready").status_code == 200:
                    break
            time.sleep(0.1)
        assert proc.poll() is None, "the server exited"
        kept = ok(
            httpx.post(f"{base}/v1/memories", json={"owner": OWNER, "content": "Hi, I'm Al."})
        )
        assert ok(httpx.get(f"{base}/v1/memories/{kept['episodes'][0]}"))["owner"] == OWNER
        assert "hindsight_http_requests_total" in httpx.get(f"{base}/metrics").text
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert "access control off" in stderr and "Traceback" not in stderr


@pytest.mark.embedded
def test_docs_work_offline_and_head_answers_like_get(api: TestClient) -> None:
    page = api.get("/docs")
    assert page.status_code == 200 and "SwaggerUIBundle" in page.text
    assert "//" not in page.text.replace("http://127.0.0.1", "")  # no CDN, no other host
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"):
        assert f"/docs/assets/{asset}" in page.text
        assert api.get(f"/docs/assets/{asset}").status_code == 200
    for path in ("/health", "/ready", f"/v1/memories?owner={OWNER}"):
        got, head = api.get(path), api.head(path)
        assert head.status_code == got.status_code == 200 and head.content == b""
        assert head.headers["content-type"] == got.headers["content-type"]
    assert api.head("/v1/recall").status_code == 405  # HEAD is GET's: a POST route has none
