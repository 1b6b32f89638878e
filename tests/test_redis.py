"""Working memory in Redis: shared by servers, expired by Redis itself, clear errors.
(Every test that takes ``settings`` also runs with PostgreSQL and Redis: see conftest.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis
from conftest import start_redis
from fastapi.testclient import TestClient
from providers import TinyHash
from pydantic import ValidationError as SettingsError

from hindsight import Hindsight, Settings, StoreError
from hindsight.api import create_app
from hindsight.embed import Embeddings
from hindsight.store import Filter


@pytest.fixture
def shared(tmp_path: Path, database_url: str, redis_url: str) -> Settings:
    return Settings(home=tmp_path / "a", database_url=database_url, redis_url=redis_url)


def test_two_servers_share_sessions(shared: Settings, embedder: Embeddings, tmp_path: Path) -> None:
    other = shared.model_copy(update={"home": tmp_path / "b"})
    with Hindsight(shared, embedder=embedder) as a, Hindsight(other, embedder=embedder) as b:
        a.observe("user:alice", "s1", "I am planning a trip to Kyoto in April.")
        b.observe("user:alice", "s1", "Book a ryokan near the river.", role="user")
        assert [t.content for t in a.window("user:alice", "s1")] == [
            "I am planning a trip to Kyoto in April.",
            "Book a ryokan near the river.",
        ]
        assert [(s, n) for s, n, _ in b.sessions("user:alice")] == [("s1", 2)]
        assert a.stats("user:alice").working_turns == 2
        b.close_session("user:alice", "s1")  # consolidated into the shared database
        assert a.window("user:alice", "s1") == []
        assert a.store.count(Filter(owners=["user:alice"])) >= 2
        assert a.recall("user:alice", "Kyoto trip", k=3)


def test_redis_expires_a_session_by_itself(shared: Settings, embedder: Embeddings) -> None:
    settings = shared.model_copy(update={"wm_ttl_seconds": 60})
    with Hindsight(settings, embedder=embedder) as hs:
        hs.observe("user:alice", "s1", "one")
    with redis.Redis.from_url(shared.redis_url or "") as client:
        keys = client.keys("hindsight:wm:s:*")
        assert keys == [b"hindsight:wm:s:user:alice/s1"]
        assert 0 < client.ttl(keys[0]) <= 61  # no purge needed to free it


def test_forgetting_an_owner_clears_its_sessions_in_redis(
    shared: Settings, embedder: Embeddings
) -> None:
    with Hindsight(shared, embedder=embedder) as hs:
        hs.observe("user:alice", "s1", "I live in Paris.")
        hs.observe("user:bob", "s1", "I live in Rome.")
        hs.forget(owner="user:alice")
        assert hs.sessions("user:alice") == []
        assert [s for s, _, _ in hs.sessions("user:bob")] == ["s1"]


def test_an_unreachable_redis_is_one_clear_error(tmp_path: Path, database_url: str) -> None:
    settings = Settings(
        home=tmp_path / "h", database_url=database_url, redis_url="redis://127.0.0.1:1/0"
    )
    with pytest.raises(StoreError, match=r"working memory \(Redis\) failed") as caught:
        Hindsight(settings, embedder=TinyHash())
    assert "\n" not in str(caught.value)


def test_a_url_that_is_not_redis_is_refused() -> None:
    with pytest.raises(SettingsError, match="must be a Redis URL"):
        Settings(redis_url="http://localhost:6379")


def test_ready_says_503_when_redis_is_gone(
    tmp_path: Path, database_url: str, embedder: Embeddings, caplog: pytest.LogCaptureFixture
) -> None:
    server, url = start_redis(tmp_path)
    settings = Settings(home=tmp_path / "h", database_url=database_url, redis_url=url)
    try:
        with Hindsight(settings, embedder=embedder) as hs:
            api = TestClient(
                create_app(hs, mcp=False),
                base_url="http://127.0.0.1",
                raise_server_exceptions=False,
            )
            with api:
                assert api.get("/ready").status_code == 200
                server.terminate()
                server.wait(10)
                response = api.get("/ready")
                assert response.status_code == 503
                message = response.json()["error"]["message"]  # the cause is in the log
                incident = message.split("incident ")[1].split()[0]
                assert any(
                    incident in r.getMessage() and "Redis" in r.getMessage() for r in caplog.records
                )
    finally:
        server.kill()


def test_purge_drops_expired_turns_and_owners_redis_let_go(
    shared: Settings, embedder: Embeddings
) -> None:
    with Hindsight(shared, embedder=embedder) as hs:
        hs.observe("user:alice", "s1", "one")
        hs.observe("user:bob", "s1", "two")
        later = datetime.now(UTC) + timedelta(seconds=shared.wm_ttl_seconds + 1)
        with redis.Redis.from_url(shared.redis_url or "") as client:
            client.delete("hindsight:wm:o:user:bob", "hindsight:wm:s:user:bob/s1")  # expired
            assert hs.working.wm_purge_expired(later) == 1  # alice's turn, past its time
            assert client.smembers("hindsight:wm:owners") == {b"user:alice"}
            assert client.zcard("hindsight:wm:s:user:alice/s1") == 0


def test_a_redis_that_restarted_empty_is_said_once(
    tmp_path: Path, database_url: str, embedder: Embeddings
) -> None:
    """A restart without persistence empties working memory: the window must not answer
    [] as if nothing had been observed."""
    server, url = start_redis(tmp_path)
    settings = Settings(home=tmp_path / "h", database_url=database_url, redis_url=url)
    try:
        with Hindsight(settings, embedder=embedder) as hs:
            hs.observe("user:alice", "s1", "I am planning a trip to Kyoto.")
            server.terminate()
            server.wait(10)
            (tmp_path / "redis.sock").unlink(missing_ok=True)
            server, _ = start_redis(tmp_path)  # the same socket, nothing in it
            with pytest.raises(StoreError, match="working memory in Redis was lost"):
                hs.window("user:alice", "s1")
            assert hs.window("user:alice", "s1") == []  # said once; kept again from now
            hs.observe("user:alice", "s1", "Book a ryokan.")
            assert [t.content for t in hs.window("user:alice", "s1")] == ["Book a ryokan."]
    finally:
        server.terminate()
        server.wait(10)
