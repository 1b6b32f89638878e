"""Access control on the REST API (and its /mcp mount), against a real server on loopback.

For every route the app has, a key scoped to user:alice tries to reach user:bob and
must fail without changing or revealing anything. A route added without a case here
fails ``test_every_route_has_a_case``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent
from servers import live_server
from starlette.routing import Mount, Route

from hindsight import (
    AuthenticationError,
    Client,
    Hindsight,
    PermissionDeniedError,
    Settings,
)
from hindsight.access import KeyRing
from hindsight.api import create_app
from hindsight.embed import Embeddings

ALICE, BOB = "user:alice", "user:bob"
ALICE_KEY = "alice-key-000000000001"
READER_KEY = "reader-key-00000000002"
ADMIN_KEY = "admin-key-000000000003"
TEAM_KEY = "team-key-0000000000004"
AUDITOR_KEY = "auditor-key-0000000005"
ROOT_KEY = "root-key-0000000000006"
KEYS = {
    "keys": [
        {"name": "alice", "key": ALICE_KEY, "read": [ALICE], "write": [ALICE], "review": True},
        {"name": "reader", "key": READER_KEY, "read": [BOB]},
        {"name": "admin", "key": ADMIN_KEY, "read": ["*"], "write": ["*"]},
        {"name": "team", "key": TEAM_KEY, "read": ["shared:*"], "write": [ALICE]},
        {"name": "auditor", "key": AUDITOR_KEY, "read": [BOB], "audit": True},
        {"name": "root", "key": ROOT_KEY, "read": ["*"], "audit": True},
    ]
}
# A code word, not digits: a number could turn up in a timestamp on /metrics.
CODE = "quokka"
SECRET = f"Bob's locker code is {CODE}."
UNKNOWN_ID = "m_0000000000000000000000000000"


@dataclass
class World:
    url: str
    app: FastAPI
    hs: Hindsight
    bob_id: str  # one of bob's memories
    bob_held: str  # one of bob's, held for review

    def http(self, key: str | None = ALICE_KEY) -> httpx.Client:
        headers = {} if key is None else {"authorization": f"Bearer {key}"}
        return httpx.Client(base_url=self.url, headers=headers)

    def bob(self) -> tuple[Any, ...]:
        """Everything of bob's that no failed call may change (a read's own bookkeeping,
        when a memory was last recalled and how often, aside: it is flushed on a timer)."""
        recalled = ("last_accessed_at", "access_count")
        return (
            [{k: v for k, v in m.items() if k not in recalled} for m in self.hs.export(BOB)],
            [
                (i.memory.id, i.memory.status, [c.id for c in i.conflicts])
                for i in self.hs.review_queue(BOB)
            ],
            self.hs.sessions(BOB),
            self.hs.window(BOB, "s1"),
        )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, embedder: Embeddings) -> Iterator[World]:
    settings = Settings(home=tmp_path_factory.mktemp("access"), sqlite_synchronous="OFF")
    with Hindsight(settings, embedder=embedder) as hs:
        bob_id = hs.retain(BOB, SECRET, session_id="s0").episodes[0]
        hs.observe(BOB, "s1", "I am thinking about a new bike.")
        hs.retain("shared:team", "The team meets on Mondays.")
        hs.retain(BOB, "I'm severely allergic to penicillin.")
        claim = "Pharmacy sync: Bob is no longer allergic to penicillin."
        bob_held = hs.retain(BOB, claim, source="tool").episodes[0]
        assert hs.get(bob_held).status.value == "pending_review"
        app = create_app(hs, keyring=KeyRing.parse(KEYS))
        with live_server(app, log_level="debug") as url:
            yield World(url, app, hs, bob_id, bob_held)


def denied(response: httpx.Response, status: int = 403) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    expected = {403: "PermissionDeniedError", 404: "NotFoundError"}[status]
    assert error["type"] == expected, error
    assert CODE not in response.text and "locker" not in response.text.lower()


def _unknown_id_answer(w: World, http: httpx.Client, method: str, memory_id: str) -> Any:
    body = {"confidence": 0.1} if method == "PATCH" else None
    response = http.request(method, f"/v1/memories/{memory_id}", json=body)
    denied(response, 404)
    return response.json()


def _by_id(method: str) -> Callable[[World, httpx.Client], None]:
    """An id outside the key's scope answers exactly as an id that does not exist."""

    def case(w: World, http: httpx.Client) -> None:
        for_bob = _unknown_id_answer(w, http, method, w.bob_id)
        for_nobody = _unknown_id_answer(w, http, method, UNKNOWN_ID)
        assert str(for_bob).replace(w.bob_id, "ID") == str(for_nobody).replace(UNKNOWN_ID, "ID")

    return case


def _by_id_at(method: str, action: str, **body: Any) -> Callable[[World, httpx.Client], None]:
    """As :func:`_by_id`, for a memory's sub-resource (``/v1/memories/{id}/action``)."""

    def case(w: World, http: httpx.Client) -> None:
        answers = []
        for memory_id in (w.bob_id, UNKNOWN_ID):
            response = http.request(method, f"/v1/memories/{memory_id}/{action}", json=body or None)
            denied(response, 404)
            answers.append(str(response.json()).replace(memory_id, "ID"))
        assert answers[0] == answers[1]

    return case


def _forget(w: World, http: httpx.Client) -> None:
    _by_id("DELETE")(w, http)
    denied(http.delete(f"/v1/memories/{w.bob_id}", params={"owner": ALICE}), 404)
    denied(http.delete(f"/v1/memories/{w.bob_id}", params={"owner": BOB}), 404)


def _import(w: World, http: httpx.Client) -> None:
    records = list(w.hs.export(BOB))
    own = {**records[0], "id": "m_alices0000000000000000000000", "owner": ALICE}
    fresh = {**records[0], "id": "m_planted000000000000000000000"}
    denied(http.post("/v1/import", json={"records": [own, fresh]}))
    assert w.hs.list_memories(ALICE) == []  # checked before anything was written


def _stats(w: World, http: httpx.Client) -> None:
    denied(http.get("/v1/stats", params={"owner": BOB}))
    denied(http.get("/v1/stats"))  # every owner at once includes bob


def _recall(w: World, http: httpx.Client) -> None:
    for owners in (BOB, [ALICE, BOB], {ALICE: 1.0, BOB: 0.1}):
        denied(http.post("/v1/recall", json={"owners": owners, "query": "locker code"}))


def _mcp(w: World, http: httpx.Client) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_search", {"owner": BOB, "query": "locker code"}),
        ("memory_write", {"owner": BOB, "content": "planted"}),
        ("memory_update", {"memory_id": w.bob_id, "content": "changed"}),
        ("memory_delete", {"memory_id": w.bob_id}),
        ("memory_feedback", {"memory_id": w.bob_id, "useful": True}),
        ("memory_history", {"memory_id": w.bob_id}),
        ("memory_pin", {"memory_id": w.bob_id}),
        ("memory_unpin", {"memory_id": w.bob_id}),
        ("memory_restore", {"memory_id": w.bob_id}),
        ("memory_summarize", {"owner": BOB, "session_id": "s1"}),
        ("memory_reflect", {"owner": BOB}),
        ("session_append", {"owner": BOB, "session_id": "s1", "content": "planted"}),
        ("session_window", {"owner": BOB, "session_id": "s1"}),
        ("memory_foresee", {"owner": BOB}),
        ("memory_entities", {"owner": BOB}),
        ("memory_entity", {"owner": BOB, "name": "Bob"}),
        ("memory_doctor", {}),  # every owner's vectors are counted, bob's too
    ]

    async def attempt() -> list[str]:
        headers = {"authorization": f"Bearer {ALICE_KEY}"}
        answers = []
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as h,
            McpClient(streamable_http_client(f"{w.url}/mcp/", http_client=h)) as mcp,
        ):
            for tool, arguments in calls:
                result = await mcp.call_tool(tool, arguments)
                assert result.is_error, (tool, result.structured_content)
                block = result.content[0]
                assert isinstance(block, TextContent)
                answers.append(block.text)
        return answers

    for text in anyio.run(attempt):
        assert text.startswith(("PermissionDeniedError:", "NotFoundError:")), text
        assert CODE not in text


def _decide(decision: str) -> Callable[[World, httpx.Client], None]:
    """Bob's held memory answers as an unknown id; alice's key cannot decide on it."""

    def case(w: World, http: httpx.Client) -> None:
        answers = []
        for memory_id in (w.bob_held, UNKNOWN_ID):
            body = {"forget": True} if decision == "reject" else None
            response = http.post(f"/v1/review/{memory_id}/{decision}", json=body)
            denied(response, 404)
            answers.append(str(response.json()).replace(memory_id, "ID"))
        assert answers[0] == answers[1]

    return case


def _review_queue(w: World, http: httpx.Client) -> None:
    denied(http.get("/v1/review", params={"owner": BOB}))
    denied(http.get("/v1/review"))  # every owner's queue includes bob's


def _audit(w: World, http: httpx.Client) -> None:
    for params in ({"owner": BOB}, {}, {"owner": ALICE}):  # alice's key is no audit key
        response = http.get("/v1/audit", params=params)
        denied(response)
        assert "may not read the audit log" in response.json()["error"]["message"]


def _usage(w: World, http: httpx.Client) -> None:
    denied(http.get("/v1/usage", params={"owner": BOB}))
    denied(http.get("/v1/usage"))  # every owner's usage includes bob's


def _owners(w: World, http: httpx.Client) -> None:
    response = http.get("/v1/owners")
    assert response.status_code == 200 and set(response.json()["owners"]) <= {ALICE}
    assert BOB not in response.text


def _jobs(w: World, http: httpx.Client) -> None:
    denied(http.get("/v1/jobs", params={"owner": BOB}))
    denied(http.get("/v1/jobs"))  # every owner's queue includes bob's


def _console(w: World, http: httpx.Client) -> None:
    """The console, signed in with alice's key (its cookie): every page and change of
    bob's is refused, and none shows his memory."""
    http.cookies.set("hindsight_key", ALICE_KEY)
    token = http.get("/ui/").cookies.get("hindsight_csrf") or ""
    http.cookies.set("hindsight_csrf", token)
    for path in (
        f"/ui/memories?owner={BOB}",
        f"/ui/memory?id={w.bob_id}",
        f"/ui/recall?owner={BOB}&q=locker+code",
        f"/ui/sessions?owner={BOB}",
        f"/ui/review?owner={BOB}",
        f"/ui/audit?owner={BOB}",
        f"/ui/forget?owner={BOB}",
        f"/ui/audit.jsonl?owner={BOB}",
        f"/ui/llm?owner={BOB}",
        f"/ui/recall?owner={ALICE}&q=locker+code&also={BOB}",
    ):
        response = http.get(path)
        assert response.status_code in (400, 403, 404), path
        assert CODE not in response.text and "penicillin" not in response.text, path
    for path, form in (
        ("/ui/memory/forget", {"id": w.bob_id}),
        ("/ui/memory/edit", {"id": w.bob_id, "content": "changed"}),
        ("/ui/memory/pin", {"id": w.bob_id}),
        ("/ui/memory/feedback", {"id": w.bob_id, "useful": "yes"}),
        ("/ui/forget", {"owner": BOB}),
        ("/ui/sessions/consolidate", {"owner": BOB, "sid": "s1"}),
        ("/ui/sessions/close", {"owner": BOB, "sid": "s1"}),
        ("/ui/review/decide", {"id": w.bob_held, "decision": "approve"}),
        ("/ui/llm/retry", {"owner": BOB}),
    ):
        response = http.post(path, data={**form, "csrf": token})
        assert response.status_code in (400, 403, 404), path
        assert CODE not in response.text, path
    assert CODE not in http.get("/ui/").text


def _post(path: str, **body: Any) -> Callable[[World, httpx.Client], None]:
    return lambda w, http: denied(http.post(path, json=body))


def _get(path: str, **params: Any) -> Callable[[World, httpx.Client], None]:
    return lambda w, http: denied(http.get(path, params=params))


# operation id (or mount name) -> how alice's key tries to reach bob
CASES: dict[str, Callable[[World, httpx.Client], None]] = {
    "retain": _post("/v1/memories", owner=BOB, content="planted"),
    "recall": _recall,
    "get": _by_id("GET"),
    "list_memories": _get("/v1/memories", owner=BOB),
    "update": _by_id("PATCH"),
    "forget": _forget,
    "forget_owner": _post("/v1/forget", owner=BOB),
    "feedback": _by_id_at("POST", "feedback", useful=True),
    "history": _by_id_at("GET", "history"),
    "export": _get("/v1/export", owner=BOB),
    "import_records": _import,
    "stats": _stats,
    "owners": _owners,
    "observe": _post("/v1/sessions/s1/turns", owner=BOB, content="planted"),
    "window": _get("/v1/sessions/s1/turns", owner=BOB),
    "sessions": _get("/v1/sessions", owner=BOB),
    "consolidate": _post("/v1/sessions/s1/consolidate", owner=BOB),
    "close_session": _post("/v1/sessions/s1/close", owner=BOB),
    "summarize": _post("/v1/sessions/s1/summarize", owner=BOB),
    "reflect": _post("/v1/reflect", owner=BOB),
    "review_queue": _review_queue,
    "approve": _decide("approve"),
    "reject": _decide("reject"),
    "audit": _audit,
    "verify_audit": _get("/v1/audit/verify"),
    "usage": _usage,
    "jobs": _jobs,
    "doctor": _get("/v1/doctor"),  # every owner's vectors are counted, bob's too
    "pin": _by_id_at("POST", "pin"),
    "unpin": _by_id_at("DELETE", "pin"),
    "restore": _by_id_at("POST", "restore"),
    "maintain": _post("/v1/maintain"),  # a pass over every owner needs a key for all
    "foresee": _get("/v1/foresight", owner=BOB),
    "entities": _get("/v1/entities", owner=BOB),
    "entity": _get("/v1/entities/Bob", owner=BOB),
    "mcp": _mcp,
    "console": _console,
}
# Routes open to every caller, with why; each is checked to reveal no owner's data.
PUBLIC: dict[str, str] = {
    "health": "liveness probe; touches no data",
    "ready": "readiness probe; lists an owner no one has",
    "metrics": "request counts and latencies per operation; no owners in labels",
    "/openapi.json": "the schema",
    "/docs": "the schema, rendered",
    "docs-assets": "the rendered docs' script, style and icon, from the package",
}


def _route_names(app: FastAPI) -> set[str]:
    names = set()
    for route in app.routes:
        if isinstance(route, APIRoute):
            names.add(str(route.operation_id or route.name))
        elif isinstance(route, Mount):
            names.add(str(route.name))
        elif isinstance(route, Route):
            names.add(route.path)
        else:
            raise AssertionError(f"a route of an unknown type: {route!r}")
    return names


def test_every_route_has_a_case(world: World) -> None:
    assert _route_names(world.app) == set(CASES) | set(PUBLIC)
    assert not set(CASES) & set(PUBLIC)


@pytest.mark.parametrize("operation", sorted(CASES))
def test_a_key_for_alice_cannot_reach_bob(world: World, operation: str) -> None:
    before = world.bob()
    with world.http(ALICE_KEY) as http:
        CASES[operation](world, http)
    assert world.bob() == before
    assert world.hs.get(world.bob_id).content == SECRET


@pytest.mark.parametrize("path", ["/health", "/ready", "/metrics", "/openapi.json", "/docs"])
def test_public_routes_reveal_no_owner(world: World, path: str) -> None:
    with world.http(None) as http:
        response = http.get(path)
    assert response.status_code == 200
    assert BOB not in response.text and CODE not in response.text


# -- who is let in -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("authorization", "message"),
    [
        (None, "an API key is required"),
        ("Bearer wrong-key-0000000000", "the API key is not valid"),
        (f"Basic {ALICE_KEY}", "an API key is required"),
        ("Bearer", "an API key is required"),
        (f"Bearer {ALICE_KEY} {ALICE_KEY}", "an API key is required"),  # not one token
    ],
)
def test_a_missing_or_wrong_key_is_401(
    world: World, authorization: str | None, message: str
) -> None:
    headers = {} if authorization is None else {"authorization": authorization}
    for method, path in [("GET", "/v1/memories?owner=user:alice"), ("GET", "/v1/stats")]:
        response = httpx.request(method, world.url + path, headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        error = response.json()["error"]
        assert error["type"] == "AuthenticationError" and error["message"].startswith(message)
    assert httpx.post(world.url + "/mcp/", json={}, headers=headers).status_code == 401


def test_keys_are_never_logged(world: World, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "wrong-key-but-secret-123"
    with world.http(ALICE_KEY) as http:
        http.get("/v1/memories", params={"owner": ALICE})
        http.get(f"/v1/memories/{world.bob_id}")
    with world.http(wrong) as http:
        http.get("/v1/stats")
    assert caplog.records, "the server logged nothing: the check would prove nothing"
    assert ALICE_KEY not in caplog.text and wrong not in caplog.text


# -- what each key may do -------------------------------------------------------------------------
def test_a_key_does_everything_for_its_own_owner(world: World) -> None:
    with Client(world.url, api_key=ALICE_KEY) as alice:
        mid = alice.retain(ALICE, "I prefer window seats.", kind="preference").created[0]
        assert alice.recall(ALICE, "seat preference")[0].memory.id == mid
        assert alice.update(mid, content="I prefer aisle seats.").content == "I prefer aisle seats."
        assert [r["id"] for r in alice.export(ALICE)] == [mid]
        alice.observe(ALICE, "trip", "Going to Rome.")
        assert [t.content for t in alice.window(ALICE, "trip")] == ["Going to Rome."]
        alice.forget(owner=ALICE)
        assert alice.list_memories(ALICE) == []


def test_the_client_raises_the_access_errors(world: World) -> None:
    with (
        Client(world.url, api_key=ALICE_KEY) as alice,
        pytest.raises(PermissionDeniedError, match="key 'alice' may not read owner 'user:bob'"),
    ):
        alice.recall([ALICE, BOB], "locker")
    with Client(world.url) as nobody, pytest.raises(AuthenticationError, match="required"):
        nobody.stats(ALICE)


def test_a_read_only_key_reads_but_cannot_change(world: World) -> None:
    before = world.bob()
    with Client(world.url, api_key=READER_KEY) as reader:
        assert reader.get(world.bob_id).content == SECRET
        assert reader.recall(BOB, "locker code")[0].memory.id == world.bob_id
        assert len(list(reader.export(BOB))) == len(before[0])
        message = "key 'reader' may not write owner 'user:bob'"
        for call in (
            lambda: reader.update(world.bob_id, content="changed"),
            lambda: reader.forget(world.bob_id),
            lambda: reader.retain(BOB, "planted"),
            lambda: reader.observe(BOB, "s1", "planted"),
            lambda: reader.close_session(BOB, "s1"),
        ):
            with pytest.raises(PermissionDeniedError, match=message):
                call()
        with pytest.raises(PermissionDeniedError, match="may not read every owner"):
            reader.stats()
    assert world.bob() == before


def test_prefix_scopes_and_several_owners(world: World) -> None:
    with Client(world.url, api_key=TEAM_KEY) as team:
        found = team.recall({"shared:team": 1.0, ALICE: 1.0}, "when does the team meet")
        assert found[0].memory.owner == "shared:team"
        with pytest.raises(PermissionDeniedError, match="may not write owner 'shared:team'"):
            team.retain("shared:team", "planted")
    with Client(world.url, api_key=ADMIN_KEY) as admin:
        assert admin.stats().owners >= 2
        assert admin.get(world.bob_id).content == SECRET


# -- the review queue and the audit log ---------------------------------------------------------
def test_deciding_needs_write_on_the_owner_and_reading_the_log_an_audit_key(world: World) -> None:
    before = world.bob()
    with world.http(READER_KEY) as reader:  # reads bob, writes nothing
        queue = reader.get("/v1/review", params={"owner": BOB})
        assert queue.status_code == 200
        assert world.bob_held in [i["memory"]["id"] for i in queue.json()["items"]]
        for decision in ("approve", "reject"):
            response = reader.post(f"/v1/review/{world.bob_held}/{decision}")
            assert response.status_code == 403, response.text
            assert response.json()["error"] == {
                "type": "PermissionDeniedError",
                "message": "key 'reader' may not write owner 'user:bob'",
            }
        denied(reader.get("/v1/audit", params={"owner": BOB}))  # reads bob, but no audit key
    assert world.bob() == before
    with world.http(AUDITOR_KEY) as auditor:
        entries = auditor.get("/v1/audit", params={"owner": BOB})
        assert entries.status_code == 200 and entries.json()["entries"]
        assert {e["owner"] for e in entries.json()["entries"]} == {BOB}
        denied(auditor.get("/v1/audit"))  # every owner: needs a key that reads them all
        denied(auditor.get("/v1/audit", params={"owner": ALICE}))
        denied(auditor.get("/v1/audit/verify"))
    with world.http(ROOT_KEY) as root:
        check = root.get("/v1/audit/verify")
        assert check.status_code == 200 and check.json()["intact"] is True
        assert root.get("/v1/audit").status_code == 200
        denied(root.post(f"/v1/review/{world.bob_held}/approve"))  # reads all, writes none


def test_a_reviewer_key_decides_and_the_log_names_it(world: World) -> None:
    with Client(world.url, api_key=ALICE_KEY) as alice:
        alice.retain(ALICE, "I live in Lisbon.")
        claim = alice.retain(ALICE, "Alice no longer lives in Lisbon.", source="tool")
        held = claim.episodes[0]
        assert held in [i.memory.id for i in alice.review_queue(ALICE)]
        with pytest.raises(PermissionDeniedError, match="wrote"):  # not the writer's to release
            alice.approve(held)
        (decided, *_) = alice.reject(held, forget=False)  # type: ignore[misc]  # it may withdraw
        assert decided.status.value == "rejected" and decided.review.decided_by == "alice"
    with Client(world.url, api_key=ROOT_KEY) as root:
        reviews = root.audit(ALICE, principal="alice", action="review")
        assert reviews and held in reviews[0].memory_ids
