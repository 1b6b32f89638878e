"""A write sent again under its request_id stores nothing twice, on every interface."""

from __future__ import annotations

import time

import pytest

from hindsight import ConflictError, Hindsight, Kind, ValidationError
from hindsight.access import Principal
from hindsight.jobs import prune_requests

pytestmark = pytest.mark.backends  # request keys kept in the write's transaction

OWNER = "user:alice"
TURNS = [
    {"role": "user", "content": "I live in Lisbon."},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "I love fado."},
]


def test_a_retried_retain_stores_nothing_twice(hs: Hindsight) -> None:
    first = hs.retain(OWNER, messages=TURNS, session_id="s1", request_id="req-1")
    again = hs.retain(OWNER, messages=TURNS, session_id="s1", request_id="req-1")
    assert again == first and len(first.episodes) == 3 and first.created
    assert len(hs.list_memories(OWNER, kinds=[Kind.EPISODE])) == 3
    one = hs.retain(OWNER, "I keep bees.", request_id="req-2")
    assert hs.retain(OWNER, "I keep bees.", request_id="req-2") == one
    assert hs.stats(OWNER).memories == len(first.episodes) + len(first.created) + 1
    # without a key, the same message is a new turn (as before)
    hs.retain(OWNER, "I keep bees.")
    assert hs.stats(OWNER).memories == len(first.episodes) + len(first.created) + 2


def test_a_key_sent_with_another_request_is_a_conflict(hs: Hindsight) -> None:
    hs.retain(OWNER, "I keep bees.", request_id="req-1")
    before = hs.stats(OWNER)
    with pytest.raises(ConflictError, match="used for another request"):
        hs.retain(OWNER, "I keep wasps.", request_id="req-1")
    assert hs.stats(OWNER) == before


def test_keys_are_each_callers_own_and_each_owners(hs: Hindsight) -> None:
    app = hs.as_principal(Principal("app", read=(OWNER,), write=(OWNER,)))
    mine = hs.retain(OWNER, "I keep bees.", request_id="same")
    theirs = app.retain(OWNER, "I keep bees.", request_id="same")
    assert theirs.episodes != mine.episodes  # another caller: another request
    other = hs.retain("user:bob", "I keep bees.", request_id="same")
    assert other.episodes != mine.episodes


def test_a_retried_import_imports_once(hs: Hindsight) -> None:
    hs.retain("user:bob", "I keep bees.")
    records = list(hs.export("user:bob"))
    for r in records:
        r["owner"] = OWNER
        r["id"] = r["id"].replace("m_", "m_0")
    first = hs.import_records(records, request_id="imp-1")
    assert first == {"imported": len(records), "skipped": 0, "held": 0}
    assert hs.import_records(records, request_id="imp-1") == first  # as first answered
    assert hs.import_records(records) == {"imported": 0, "skipped": len(records), "held": 0}


@pytest.mark.backends("sqlite")
@pytest.mark.parametrize("key", ["", "has space", "x" * 129, 7, "é"])
def test_a_bad_key_is_refused(hs: Hindsight, key: object) -> None:
    with pytest.raises(ValidationError, match="request_id must be"):
        hs.retain(OWNER, "I keep bees.", request_id=key)  # type: ignore[arg-type]
    assert hs.stats(OWNER).memories == 0


def test_keys_are_forgotten_after_their_ttl(hs: Hindsight) -> None:
    hs.retain(OWNER, "I keep bees.", request_id="req-1")
    assert prune_requests(hs) == 0  # a day is not over
    hs.settings = hs.settings.model_copy(update={"request_ttl_seconds": 1})
    time.sleep(1.1)
    assert prune_requests(hs) == 1
    hs.retain(OWNER, "I keep bees.", request_id="req-1")  # a new request now
    assert len(hs.list_memories(OWNER, kinds=[Kind.EPISODE])) == 2


@pytest.mark.backends("sqlite")
@pytest.mark.embedded
def test_rest_takes_an_idempotency_key(hs: Hindsight) -> None:
    from fastapi.testclient import TestClient

    from hindsight.api import create_app

    with TestClient(create_app(hs, mcp=False), base_url="http://127.0.0.1") as api:
        body = {"owner": OWNER, "content": "I live in Lisbon."}
        first = api.post("/v1/memories", json=body, headers={"Idempotency-Key": "k1"})
        again = api.post("/v1/memories", json=body, headers={"Idempotency-Key": "k1"})
        assert first.status_code == again.status_code == 200 and first.json() == again.json()
        other = api.post(
            "/v1/memories", json={**body, "content": "x"}, headers={"Idempotency-Key": "k1"}
        )
        assert other.status_code == 409 and "another request" in other.text
        bad = api.post("/v1/memories", json=body, headers={"Idempotency-Key": "a b"})
        assert bad.status_code == 400
    assert len(hs.list_memories(OWNER, kinds=[Kind.EPISODE])) == 1


@pytest.mark.backends("sqlite")
@pytest.mark.embedded
def test_the_cli_takes_a_request_id(hs: Hindsight) -> None:
    from click.testing import CliRunner

    from hindsight.cli import cli

    hs.close()
    home = ["--home", str(hs.settings.home)]
    for _ in range(2):
        done = CliRunner().invoke(
            cli, [*home, "retain", "--owner", OWNER, "--request-id", "c1", "I keep bees."]
        )
        assert done.exit_code == 0, done.output
    listed = CliRunner().invoke(cli, [*home, "list", "--owner", OWNER, "--json"])
    assert listed.output.count('"kind": "episode"') == 1


def test_a_retried_observe_keeps_the_turn_once(hs: Hindsight) -> None:
    assert hs.observe(OWNER, "s1", "I am planning a trip to Kyoto.", request_id="o-1") is None
    assert hs.observe(OWNER, "s1", "I am planning a trip to Kyoto.", request_id="o-1") is None
    assert [t.content for t in hs.window(OWNER, "s1")] == ["I am planning a trip to Kyoto."]
    # a retry after the first call moved the window still keeps nothing twice
    result = hs.observe(OWNER, "s1", "No, I said Osaka, not Kyoto.", request_id="o-2")
    assert result is not None and hs.window(OWNER, "s1") == []
    assert hs.observe(OWNER, "s1", "No, I said Osaka, not Kyoto.", request_id="o-2") is None
    assert hs.window(OWNER, "s1") == []
    episodes = hs.list_memories(OWNER, kinds=[Kind.EPISODE])
    assert sorted(e.content for e in episodes) == [
        "I am planning a trip to Kyoto.",
        "No, I said Osaka, not Kyoto.",
    ]
    with pytest.raises(ConflictError, match="another request"):
        hs.observe(OWNER, "s1", "Something else.", request_id="o-1")
