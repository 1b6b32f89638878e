"""DNS rebinding: a server without keys answers only requests meant for it, on every route."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from hindsight import Hindsight
from hindsight.access import KeyRing
from hindsight.api import create_app
from hindsight.api.hosts import HostPatterns

OWNER = "user:alice"
# every kind of route: a probe, a read, a write, the export stream, the docs, MCP
ROUTES = [
    ("GET", "/health"),
    ("GET", f"/v1/memories?owner={OWNER}"),
    ("POST", "/v1/memories"),
    ("GET", f"/v1/export?owner={OWNER}"),
    ("GET", "/docs"),
    ("GET", "/openapi.json"),
    ("POST", "/mcp/"),
]


@pytest.fixture
def trusted(hs: Hindsight) -> Iterator[TestClient]:
    hs.retain(OWNER, "My bank PIN is in the blue folder.")
    with TestClient(create_app(hs), base_url="http://127.0.0.1:8765") as client:
        yield client


@pytest.mark.embedded
@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize("host", ["attacker.example:8765", "attacker.example", "127.0.0.1.nip.io"])
def test_a_foreign_host_is_refused_on_every_route(
    trusted: TestClient, hs: Hindsight, method: str, path: str, host: str
) -> None:
    headers = {"Host": host, "Origin": f"http://{host}"}
    answer = trusted.request(method, path, headers=headers, json={"owner": OWNER, "content": "x"})
    assert answer.status_code == 421, answer.text
    assert answer.json()["error"]["type"] == "MisdirectedRequest"
    assert "blue folder" not in answer.text
    assert "access-control-allow-origin" not in answer.headers
    assert len(hs.list_memories(OWNER)) == 1  # the write did not happen


@pytest.mark.embedded
@pytest.mark.parametrize(
    "origin", ["http://attacker.example", "null", "file://", "http://127.0.0.1.evil"]
)
def test_a_foreign_origin_is_refused(trusted: TestClient, hs: Hindsight, origin: str) -> None:
    answer = trusted.post(
        "/v1/memories", headers={"Origin": origin}, json={"owner": OWNER, "content": "x"}
    )
    assert answer.status_code == 403 and "not accepted" in answer.json()["error"]["message"]
    assert len(hs.list_memories(OWNER)) == 1


@pytest.mark.embedded
@pytest.mark.parametrize(
    "host", ["127.0.0.1:8765", "localhost:8765", "LOCALHOST", "[::1]:8765", "127.0.0.1"]
)
def test_loopback_names_and_same_origin_pages_are_answered(trusted: TestClient, host: str) -> None:
    headers = {"Host": host, "Origin": f"http://{host}"}
    answer = trusted.get(f"/v1/memories?owner={OWNER}", headers=headers)
    assert answer.status_code == 200 and "blue folder" in answer.text


@pytest.mark.embedded
def test_allowed_hosts_are_a_setting_and_keys_lift_the_default(hs: Hindsight) -> None:
    named = Hindsight(
        hs.settings.model_copy(update={"allowed_hosts": ["memory.internal:*"]}),
        embedder=hs.embedder,
        store=hs.store,
    )
    with TestClient(create_app(named, mcp=False), base_url="http://memory.internal:80") as api:
        assert api.get("/health").status_code == 200
        assert api.get("/health", headers={"Host": "127.0.0.1"}).status_code == 421
    keys = KeyRing.parse({"keys": [{"name": "k", "key": "k" * 16, "read": ["*"]}]})
    with TestClient(create_app(hs, keyring=keys, mcp=False), base_url="http://api.example") as api:
        assert api.get("/health").status_code == 200  # a key, not the Host, guards the data
        assert api.get(f"/v1/memories?owner={OWNER}").status_code == 401


@given(st.from_regex(r"[a-z0-9.\-]{1,30}(:[0-9]{1,5})?", fullmatch=True))
def test_only_loopback_names_match_the_default(host: str) -> None:
    patterns = HostPatterns(["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*"])
    name = host.rpartition(":")[0] if ":" in host else host
    assert patterns.allows(host) == (name in ("127.0.0.1", "localhost"))
