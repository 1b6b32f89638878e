"""A memory's history: the chain of its versions, who changed what and when, on every
interface, on every backend."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from mcp.server.mcpserver.exceptions import ToolError

from hindsight import Hindsight, Settings, views
from hindsight.access import Principal
from hindsight.api import create_app
from hindsight.cli import cli
from hindsight.embed import Embeddings
from hindsight.errors import NotFoundError, PermissionDeniedError
from hindsight.lifecycle.history import History
from hindsight.mcpserver import create_server

pytestmark = pytest.mark.backends  # versions, derivations and the audit log

OWNER, OTHER = "user:alice", "user:omar"
MOVES = ("I live in Paris.", "I moved to Berlin.", "I moved to Rome.")
EDITOR = Principal("editor-app", read=(OWNER,), write=(OWNER,))
READER = Principal("reader-app", read=(OWNER,), write=())
STRANGER = Principal("omar-app", read=(OTHER,), write=(OTHER,))


def moves(hs: Hindsight, owner: str = OWNER) -> list[str]:
    """Paris -> Berlin -> Rome: the ids of the three facts, oldest first."""
    ids = []
    for text in MOVES:
        created = hs.retain(owner, text).created
        assert len(created) == 1, created
        ids.append(created[0])
    return ids


def events(h: History, memory_id: str) -> list[tuple[str | None, str]]:
    (version,) = [v for v in h.versions if v.memory.id == memory_id]
    return [(e.principal, e.what) for e in version.events]


def test_every_version_gives_the_same_chain_oldest_first(hs: Hindsight) -> None:
    paris, berlin, rome = moves(hs)
    chains = [hs.history(mid) for mid in (paris, berlin, rome)]
    for asked, h in zip((paris, berlin, rome), chains, strict=True):
        assert h.memory_id == asked
        assert [v.memory.id for v in h.versions] == [paris, berlin, rome]
        assert h.current is not None and h.current.id == rome
    versions = [v.memory for v in chains[0].versions]
    assert [m.content for m in versions] == [
        "User lives in Paris",
        "User moved to Berlin",
        "User moved to Rome",
    ]
    assert [m.superseded_by for m in versions] == [berlin, rome, None]
    assert versions[0].valid_to is not None and versions[1].valid_to is not None
    assert versions[2].valid_to is None
    assert versions[0].valid_to <= versions[1].valid_to
    assert events(chains[0], paris) == [("local", "created"), ("local", "superseded")]
    assert events(chains[0], berlin) == [("local", "created"), ("local", "superseded")]
    assert events(chains[0], rome) == [("local", "created")]
    (superseded,) = [e for e in chains[0].versions[0].events if e.what == "superseded"]
    assert superseded.detail == {"superseded_by": berlin}
    # a memory nothing superseded is a chain of one
    episode = hs.retain(OWNER, "I love jazz.").episodes[0]
    assert [v.memory.id for v in hs.history(episode).versions] == [episode]


def test_an_update_by_another_key_shows_who(hs: Hindsight) -> None:
    paris, berlin, _ = moves(hs)
    hs.as_principal(EDITOR).update(berlin, content="User moved to Berlin, Germany")
    h = hs.history(paris)
    assert ("editor-app", "changed") in events(h, berlin)
    assert h.versions[1].memory.content == "User moved to Berlin, Germany"
    # a reader of the owner may read the history; a key for another owner finds no memory
    assert hs.as_principal(READER).history(paris).versions[0].memory.id == paris
    with pytest.raises(NotFoundError):
        hs.as_principal(STRANGER).history(paris)
    with pytest.raises(NotFoundError):
        hs.history("m_0000000000000000000000000000")


def test_a_review_decision_shows(hs: Hindsight) -> None:
    hs.retain(OWNER, "I'm severely allergic to penicillin.")
    claim = "Pharmacy sync: the patient is no longer allergic to penicillin."
    held = hs.retain(OWNER, claim, source="tool").episodes[0]
    reviewer = Principal("pharmacist", read=(OWNER,), write=(OWNER,), review=True)
    hs.as_principal(reviewer).approve(held)
    h = hs.history(held)
    assert ("pharmacist", "approved") in events(h, held)
    assert events(h, held)[0] == ("local", "created")


def test_without_an_audit_log_the_rows_tell_what_they_can(
    settings: Settings, embedder: Embeddings
) -> None:
    quiet = settings.model_copy(update={"audit": False})
    with Hindsight(quiet, embedder=embedder) as hs:
        paris, _, _ = moves(hs)
        hs.retain(OWNER, "I'm severely allergic to penicillin.")
        claim = "Pharmacy sync: the patient is no longer allergic to penicillin."
        held = hs.retain(OWNER, claim, source="tool").episodes[0]
        hs.reject(held)
        assert hs.audit(OWNER) == []
        assert events(hs.history(paris), paris) == [("local", "created"), ("local", "superseded")]
        assert events(hs.history(held), held) == [("local", "created"), ("local", "rejected")]


def test_a_forgotten_version_is_gone_and_its_receipt_named(hs: Hindsight) -> None:
    paris, berlin, rome = moves(hs)
    receipt = hs.forget(rome)
    assert receipt.restored_ids == [berlin]
    h = hs.history(paris)
    assert [v.memory.id for v in h.versions] == [paris, berlin]
    (again,) = [e for e in h.versions[1].events if e.what == "current again"]
    assert again.action == "forget" and again.detail == {"receipt": receipt.id}
    # the audit log still says what superseded it then, though that is gone now
    (was,) = [e for e in h.versions[1].events if e.what == "superseded"]
    assert was.detail == {"superseded_by": rome}
    # forgetting a middle version closes the chain over it
    paris2, berlin2, rome2 = moves(hs, OTHER)
    hs.forget(berlin2)
    assert [v.memory.id for v in hs.history(rome2).versions] == [paris2, rome2]


def test_history_names_only_the_owners_own_events(hs: Hindsight) -> None:
    _, berlin, _ = moves(hs)
    moves(hs, OTHER)  # the same story, told by another owner
    hs.recall(OWNER, "where does she live?")
    h = hs.history(berlin)
    allowed = {"superseded_by", "receipt", "useful", "confidence", "request_id", "held"}
    for version in h.versions:
        for e in version.events:
            assert e.memory_id == version.memory.id and e.action != "recall"
            assert set(e.detail) <= allowed
    said = views.dumps(views.history(h))
    other_ids = {m.id for m in hs.list_memories(OTHER, include_history=True)}
    assert not any(mid in said for mid in other_ids)
    told = views.dumps([views.history_event(e) for v in h.versions for e in v.events])
    episodes = {m.id for m in hs.list_memories(OWNER, kinds=["episode"])}
    assert not any(mid in told for mid in episodes)  # the entries' other ids stay in the log


# -- interfaces ---------------------------------------------------------------------------------
@pytest.fixture
def api(hs: Hindsight) -> Iterator[TestClient]:
    with TestClient(
        create_app(hs, mcp=False), base_url="http://127.0.0.1", raise_server_exceptions=False
    ) as client:
        yield client


@pytest.mark.backends("sqlite")
def test_rest_round_trip(hs: Hindsight, api: TestClient) -> None:
    paris, berlin, rome = moves(hs)
    response = api.get(f"/v1/memories/{rome}/history")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["memory_id"] == rome
    assert [v["memory"]["id"] for v in body["versions"]] == [paris, berlin, rome]
    assert body["versions"][0]["events"][1]["what"] == "superseded"
    assert views.history_from(body) == hs.history(rome)
    missing = api.get("/v1/memories/m_0000000000000000000000000000/history")
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFoundError"


def test_cli_round_trip(tmp_path: Path, embedder: Embeddings) -> None:
    home = tmp_path / "home"
    with Hindsight(Settings(home=home, sqlite_synchronous="OFF"), embedder=embedder) as hs:
        paris, berlin, rome = moves(hs)
        expected = views.history(hs.history(berlin))

    def run(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(cli, ["--home", str(home), *args])
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result.stdout

    assert json.loads(run("history", berlin, "--json")) == expected
    table = run("history", berlin)
    lines = table.splitlines()
    assert lines[0].startswith(f" 1. {paris}  active, superseded  valid ") and "Paris" in lines[1]
    assert any(line.startswith(f" 3. {rome}") and ".. now" in line for line in lines)
    assert "superseded  (superseded by " in table and "<- asked" in table
    assert "NotFoundError" not in run("history", "m_nope", code=3)


def _mcp(hs: Hindsight, principal: Principal | None, **arguments: Any) -> Any:
    server = create_server(hs, principal=None if principal is None else (lambda: principal))
    result = anyio.run(server.call_tool, "memory_history", arguments)
    return result.structured_content


@pytest.mark.backends("sqlite")
def test_mcp_round_trip(hs: Hindsight) -> None:
    paris, berlin, rome = moves(hs)
    answer = _mcp(hs, None, memory_id=paris)
    assert [v["id"] for v in answer["versions"]] == [paris, berlin, rome]
    assert answer["versions"][0]["valid_to"] is not None
    assert answer["versions"][0]["events"][1] == {
        "at": answer["versions"][0]["events"][1]["at"],
        "who": "local",
        "what": "superseded",
    }
    for principal, memory_id in ((STRANGER, paris), (None, "m_0000000000000000000000000000")):
        with pytest.raises(ToolError, match=r"^NotFoundError: no memory with id"):
            _mcp(hs, principal, memory_id=memory_id)
    with pytest.raises(PermissionDeniedError):
        hs.as_principal(READER).feedback(paris, True)  # reading is not writing
    # what the guard holds is kept from agents: its history shows no text
    hs.retain(OWNER, "I'm severely allergic to penicillin.")
    claim = "Pharmacy sync: the patient is no longer allergic to penicillin."
    held = hs.retain(OWNER, claim, source="tool").episodes[0]
    (version,) = _mcp(hs, None, memory_id=held)["versions"]
    assert version["status"] == "pending_review" and version["content"] is None
    assert "penicillin" not in json.dumps(version)


def test_history_lists_what_was_derived_from_the_memory(hs: Hindsight) -> None:
    turn = hs.retain("user:alice", "I live in Paris and I love jazz.", session_id="s1")
    h = hs.history(turn.episodes[0])
    assert {m.id for m in h.derived} == set(turn.created)
    assert all(m.provenance.derived_from == turn.episodes for m in h.derived)
    assert hs.history(turn.created[0]).derived == []  # a fact: nothing drawn from it
    assert views.history_from(views.history(h)).derived == h.derived  # and over the wire


def test_an_owners_stats_count_its_memories_by_month_learnt_and_kind(hs: Hindsight) -> None:
    hs.retain("user:alice", "I live in Paris and I love jazz.")
    stats = hs.stats("user:alice")
    [(month, kinds)] = stats.by_month.items()
    assert len(month) == 7 and month[4] == "-" and kinds == stats.by_kind
    assert sum(kinds.values()) == stats.memories
    assert stats.by_month_status == {month: stats.by_status}
