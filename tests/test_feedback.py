"""Feedback: use, not retrieval, reinforces; on every interface."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

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
from hindsight.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from hindsight.lifecycle.feedback import moved
from hindsight.mcpserver import create_server
from hindsight.models import Status

OWNER, OTHER = "user:alice", "user:omar"
UNKNOWN = "m_0000000000000000000000000000"
STRANGER = Principal("omar-app", read=(OTHER,), write=(OTHER,))


def fact(
    hs: Hindsight,
    text: str = "Alice works at the museum.",
    *,
    confidence: float = 0.5,
    source: str = "user",
) -> str:
    written = hs.retain(OWNER, text, kind="fact", source=source, confidence=confidence)
    return written.created[0]


def test_useful_raises_with_diminishing_steps_and_marks_use(hs: Hindsight) -> None:
    memory_id = fact(hs)
    assert hs.get(memory_id).used_at is None
    hs.recall(OWNER, "where does alice work?")
    assert hs.get(memory_id).confidence == 0.5  # being found is not being used
    seen = [0.5]
    for _ in range(3):
        marked = hs.feedback(memory_id, True)
        seen.append(marked.confidence)
        assert marked.used_at is not None and hs.get(memory_id) == marked
    steps = [b - a for a, b in itertools.pairwise(seen)]
    assert steps[0] > steps[1] > steps[2] > 0
    assert seen[1:] == pytest.approx([0.6, 0.68, 0.744])  # (1 - c) * 0.2 each time


def test_useful_never_passes_trust(hs: Hindsight) -> None:
    memory_id = fact(hs, confidence=0.3, source="agent")  # an agent's word: trust 0.7
    trust = hs.get(memory_id).trust
    assert trust == pytest.approx(0.7)
    for _ in range(40):
        confidence = hs.feedback(memory_id, True).confidence
        assert confidence <= trust
    assert confidence == pytest.approx(trust, abs=1e-3)
    # a key believed less than the memory cannot make it more believed than the key
    other = fact(hs, "Alice's brother is called Tom.", confidence=0.3)
    tool = Principal("tool-app", read=(OWNER,), write=(OWNER,), trust=0.5)
    for _ in range(40):
        assert hs.as_principal(tool).feedback(other, True).confidence <= 0.5
    assert hs.get(other).confidence == pytest.approx(0.5, abs=1e-3)
    hs.feedback(other, True)  # the local user's word counts more
    assert hs.get(other).confidence > 0.5


def test_not_useful_lowers_and_is_not_use(hs: Hindsight) -> None:
    memory_id = fact(hs, confidence=0.8)
    first = hs.feedback(memory_id, False)
    second = hs.feedback(memory_id, False)
    assert first.confidence == pytest.approx(0.64) and second.confidence == pytest.approx(0.512)
    assert second.used_at is None
    assert moved(0.0, cap=1.0, step=0.2, useful=False) == 0.0


def test_each_mark_is_audited(hs: Hindsight) -> None:
    memory_id = fact(hs)
    hs.feedback(memory_id, True)
    hs.as_principal(Principal("agent-x", read=(OWNER,), write=(OWNER,))).feedback(memory_id, False)
    entries = hs.audit(OWNER, action="feedback")
    assert [(e.principal, e.memory_ids, e.detail["useful"]) for e in entries] == [
        ("agent-x", (memory_id,), False),
        ("local", (memory_id,), True),
    ]
    assert entries[1].detail["confidence"] == [0.5, 0.6]
    marks = [(e.principal, e.what) for e in hs.history(memory_id).versions[0].events]
    assert marks[1:] == [("local", "marked useful"), ("agent-x", "marked not useful")]


def test_a_held_memory_takes_no_feedback_and_nothing_changes(hs: Hindsight) -> None:
    hs.retain(OWNER, "I'm severely allergic to penicillin.")
    claim = "Pharmacy sync: the patient is no longer allergic to penicillin."
    held = hs.retain(OWNER, claim, source="tool").episodes[0]
    before = hs.get(held)
    assert before.status is Status.PENDING_REVIEW
    for useful in (True, False):
        with pytest.raises(ConflictError, match="a reviewer decides on it"):
            hs.feedback(held, useful)
    assert hs.get(held) == before
    assert hs.audit(OWNER, action="feedback") == []
    hs.reject(held)
    with pytest.raises(ConflictError, match="is rejected"):
        hs.feedback(held, True)


def test_bad_input_unknown_ids_and_scopes(hs: Hindsight) -> None:
    memory_id = fact(hs)
    with pytest.raises(ValidationError, match="useful must be true or false"):
        hs.feedback(memory_id, "yes")  # type: ignore[arg-type]
    with pytest.raises(NotFoundError):
        hs.feedback(UNKNOWN, True)
    with pytest.raises(NotFoundError):  # another owner's id is an unknown id
        hs.as_principal(STRANGER).feedback(memory_id, True)
    with pytest.raises(PermissionDeniedError):
        hs.as_principal(Principal("reader", read=(OWNER,), write=())).feedback(memory_id, True)
    assert hs.get(memory_id).confidence == 0.5 and hs.audit(OWNER, action="feedback") == []


def test_the_step_is_a_setting(settings: Settings, embedder: Embeddings) -> None:
    with Hindsight(settings.model_copy(update={"feedback_step": 0.5}), embedder=embedder) as hs:
        assert hs.feedback(fact(hs), True).confidence == pytest.approx(0.75)
    with pytest.raises(ValueError, match="feedback_step"):
        Settings(feedback_step=0)


# -- interfaces ---------------------------------------------------------------------------------
@pytest.fixture
def api(hs: Hindsight) -> Iterator[TestClient]:
    with TestClient(
        create_app(hs, mcp=False), base_url="http://127.0.0.1", raise_server_exceptions=False
    ) as client:
        yield client


def test_rest_round_trip(hs: Hindsight, api: TestClient) -> None:
    memory_id = fact(hs)
    response = api.post(f"/v1/memories/{memory_id}/feedback", json={"useful": True})
    assert response.status_code == 200, response.text
    assert views.memory_from(response.json()) == hs.get(memory_id)
    assert response.json()["confidence"] == pytest.approx(0.6)
    down = api.post(f"/v1/memories/{memory_id}/feedback", json={"useful": False})
    assert down.json()["confidence"] == pytest.approx(0.48)
    for body, status in (({"useful": "maybe"}, 422), ({}, 422), ({"useful": True, "x": 1}, 422)):
        bad = api.post(f"/v1/memories/{memory_id}/feedback", json=body)
        assert bad.status_code == status and bad.json()["error"]["type"] == "ValidationError"
    missing = api.post(f"/v1/memories/{UNKNOWN}/feedback", json={"useful": True})
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFoundError"
    assert hs.get(memory_id).confidence == pytest.approx(0.48)


def test_mcp_round_trip(hs: Hindsight) -> None:
    memory_id = fact(hs)

    def call(principal: Principal | None, **arguments: object) -> object:
        server = create_server(hs, principal=None if principal is None else (lambda: principal))
        return anyio.run(server.call_tool, "memory_feedback", arguments).structured_content

    answer = call(None, memory_id=memory_id, useful=True)
    assert answer == {"ok": True, "id": memory_id, "confidence": pytest.approx(0.6)}
    for principal, mid in ((STRANGER, memory_id), (None, UNKNOWN)):
        with pytest.raises(ToolError, match=r"^NotFoundError: no memory with id"):
            call(principal, memory_id=mid, useful=True)
    assert hs.get(memory_id).confidence == pytest.approx(0.6)


def test_cli_round_trip(tmp_path: Path, embedder: Embeddings) -> None:
    home = tmp_path / "home"
    with Hindsight(Settings(home=home, sqlite_synchronous="OFF"), embedder=embedder) as hs:
        memory_id = fact(hs)

    def run(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(cli, ["--home", str(home), *args])
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result.stdout + result.stderr

    marked = json.loads(run("feedback", memory_id, "--useful", "--json"))
    assert marked["id"] == memory_id and marked["confidence"] == pytest.approx(0.6)
    assert marked["used_at"] is not None
    said = run("feedback", memory_id, "--not-useful")
    assert said.strip() == f"marked {memory_id} not useful: confidence 0.600 -> 0.480 (trust 1.00)"
    assert "give --useful or --not-useful" in run("feedback", memory_id, code=2)
    assert "no memory with id" in run("feedback", UNKNOWN, "--useful", code=3)
    with Hindsight(Settings(home=home, sqlite_synchronous="OFF"), embedder=embedder) as hs:
        assert hs.get(memory_id).confidence == pytest.approx(0.48)
