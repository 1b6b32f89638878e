"""``hindsight doctor``: the configuration, the store's embedding versions and whether each
endpoint answers, on every interface; real loopback servers for the endpoints, closed
ports for the ones that are down, and never a key in what any interface shows."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from embed_servers import MODEL, EmbeddingServer, embedding_server, over_http
from fastapi.testclient import TestClient
from llm_servers import FakeLLM, configured, openai_answer
from pydantic import SecretStr
from servers import live_server

from hindsight import Client, EmbeddingMismatchError, Hindsight, Settings
from hindsight.access import KeyRing, Principal
from hindsight.api import create_app
from hindsight.cli import cli
from hindsight.doctor import diagnose, public_url
from hindsight.embed import Embeddings
from hindsight.errors import PermissionDeniedError
from hindsight.jobs import scheduled as hindsight_jobs
from hindsight.mcpserver import create_server

EMBED_KEY = "sk-embed-0123456789"
LLM_KEY = "sk-llm-0123456789"
RERANK_KEY = "rk-rerank-0123456789"
PASSWORD = "hunter2-pass"
SECRETS = (EMBED_KEY, LLM_KEY, RERANK_KEY, PASSWORD, "admin:")


@pytest.fixture
def http(embedder: Embeddings) -> Iterator[EmbeddingServer]:
    with embedding_server(embedder, key=EMBED_KEY) as server:
        yield server


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _remote(settings: Settings, http: EmbeddingServer, **more: Any) -> Settings:
    return over_http(settings, http, embedding_api_key=SecretStr(EMBED_KEY), **more)


def _env(settings: Settings) -> dict[str, str]:
    """``settings`` as the environment variables the CLI reads."""
    env = {"HINDSIGHT_SQLITE_SYNCHRONOUS": "OFF"}
    for name, value in settings.model_dump(exclude_defaults=True).items():
        if name == "home" or value is None:
            continue
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        env[f"HINDSIGHT_{name.upper()}"] = value if isinstance(value, str) else json.dumps(value)
    return env


def _cli(settings: Settings, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["--home", str(settings.home), "doctor", *args], env=_env(settings)
    )
    return result.exit_code, result.output


# -- the library ------------------------------------------------------------------------------
@pytest.mark.backends
def test_a_local_engine_reports_its_parts_and_one_current_version(hs: Hindsight) -> None:
    hs.retain("user:alice", "I love jazz. My sister lives in Lyon.")
    found = hs.doctor()
    embedding = found["embedding"]
    assert found["ok"] and embedding["check"]["ok"] and embedding["check"]["error"] is None
    assert embedding["provider"] == "minilm" and not embedding["remote"]
    assert embedding["bound"] == {"model": hs.embedder.model_id, "dimension": 384}
    assert embedding["versions"] == [
        {
            "model": hs.embedder.model_id,
            "dimension": 384,
            "memories": hs.stats().memories,
            "current": True,
        }
    ]
    assert embedding["to_embed"] == 0 and not embedding["switch_pending"]
    assert found["reranker"] == {
        "name": "none",
        "model": None,
        "base_url": None,
        "model_dir": None,
        "check": None,
    }
    assert found["llm"]["provider"] == "none" and found["llm"]["check"] is None
    store = found["store"]
    if hs.settings.database_url is None:
        assert store["database"] == "sqlite" and store["path"] == str(hs.settings.database_path)
        assert store["vectors"] == "local"
    else:
        assert store["database"] == "postgresql" and store["vectors"] == "pgvector"
        assert store["replicas"] == [] and "@" not in store["host"]
    offline = hs.doctor(check_endpoints=False)
    assert offline["ok"] and offline["embedding"]["check"] is None


def test_it_needs_a_caller_that_reads_every_owner(hs: Hindsight) -> None:
    alice = hs.as_principal(Principal("alice", read=("user:alice",), write=("user:alice",)))
    with pytest.raises(PermissionDeniedError, match="every owner"):
        alice.doctor()


@pytest.mark.backends
def test_counts_follow_a_switch_of_model_version_by_version(
    settings: Settings, http: EmbeddingServer, embedder: Embeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Hindsight(settings, embedder=embedder) as hs:
        for text in ("I love jazz.", "My sister lives in Lyon.", "I play the cello."):
            hs.retain("user:alice", text)
        total = hs.stats().memories
    remote = _remote(settings, http)
    with pytest.raises(EmbeddingMismatchError):
        Hindsight(remote)  # the engine refuses the new model; the doctor does not
    found = diagnose(remote)
    embedding = found["embedding"]
    assert found["ok"] and embedding["check"]["ok"]
    assert embedding["model"] == f"openai:{MODEL}" and embedding["dimension"] == 384
    assert embedding["versions"] == [
        {"model": embedder.model_id, "dimension": 384, "memories": total, "current": False}
    ]
    assert embedding["to_embed"] == total and embedding["switch_pending"]

    # a re-embedding stopped after its first batch of one: a vector of each version
    monkeypatch.setattr(hindsight_jobs, "REEMBED_BATCH", 1)

    def stop(done: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        hindsight_jobs.reembed(remote, progress=stop)
    embedding = diagnose(remote, check_endpoints=False)["embedding"]
    assert embedding["versions"] == [
        {"model": embedder.model_id, "dimension": 384, "memories": total - 1, "current": False},
        {"model": f"openai:{MODEL}", "dimension": 384, "memories": 1, "current": True},
    ]
    assert embedding["to_embed"] == total - 1 and embedding["switch_pending"]
    assert embedding["bound"] == {"model": f"openai:{MODEL}", "dimension": 384}

    hindsight_jobs.reembed(remote)
    with Hindsight(remote) as hs:
        embedding = hs.doctor()["embedding"]
    assert embedding["versions"] == [
        {"model": f"openai:{MODEL}", "dimension": 384, "memories": total, "current": True}
    ]
    assert embedding["to_embed"] == 0 and not embedding["switch_pending"]


def test_a_stopped_endpoint_is_reported_with_its_error(
    settings: Settings, http: EmbeddingServer
) -> None:
    remote = _remote(settings, http)
    with Hindsight(remote) as hs:
        hs.retain("user:alice", "I love jazz.")
        http.stop()
        hs.retain("user:alice", "I play the cello every Sunday.")  # its vectors wait
        found = hs.doctor()
    check = found["embedding"]["check"]
    assert not found["ok"] and not check["ok"] and "cannot connect" in check["error"]
    assert check["ms"] < 5_000 and "\n" not in check["error"]
    assert found["embedding"]["to_embed"] >= 1  # the outage's backlog
    assert found["embedding"]["dimension"] == 384  # known from the store

    code, out = _cli(remote, "--json")
    assert code == 1 and not json.loads(out)["embedding"]["check"]["ok"]
    code, out = _cli(remote)
    assert code == 1 and "FAILS" in out and "cannot connect" in out
    code, out = _cli(remote, "--offline")
    assert code == 0 and "FAILS" not in out and "openai:all-minilm" in out


def test_an_llm_that_answers_and_a_reranker_that_does_not(
    settings: Settings, embedder: Embeddings, server: FakeLLM
) -> None:
    server.script(openai_answer("OK"))
    rerank = f"http://127.0.0.1:{closed_port()}"
    options = {"reranker.http": {"base_url": rerank, "model": "r"}}  # over the settings'
    with Hindsight(
        configured(settings, server, reranker="http", provider_options=options),
        embedder=embedder,
    ) as hs:
        found = hs.doctor()
    llm, reranker = found["llm"], found["reranker"]
    assert llm["check"]["ok"] and llm["model"] == "m" and llm["base_url"] == server.url + "/v1"
    (seen,) = server.seen
    assert seen.path == "/v1/chat/completions" and seen.body["max_tokens"] == 1
    assert reranker["name"] == "http" and reranker["model"] == "r"
    assert reranker["base_url"] == rerank and not reranker["check"]["ok"]
    assert "cannot reach" in reranker["check"]["error"] and not found["ok"]


def test_a_qdrant_server_that_does_not_answer(settings: Settings) -> None:
    pytest.importorskip("qdrant_client")
    url = f"http://qdrant:{PASSWORD}@127.0.0.1:{closed_port()}"
    found = diagnose(settings.model_copy(update={"vector_backend": "qdrant", "qdrant_url": url}))
    store = found["store"]
    assert store["vectors"] == "qdrant" and store["qdrant_url"] == url.replace(
        f"qdrant:{PASSWORD}@", ""
    )
    assert not store["check"]["ok"] and not found["ok"] and PASSWORD not in json.dumps(found)


@pytest.mark.parametrize(
    ("env", "setting"),
    [
        ({"HINDSIGHT_LLM_PROVIDER": "nope"}, "HINDSIGHT_LLM_PROVIDER"),
        ({"HINDSIGHT_EMBEDDING_PROVIDER": "nope"}, "HINDSIGHT_EMBEDDING_PROVIDER"),
        ({"HINDSIGHT_RERANKER": "http"}, "HINDSIGHT_RERANK_BASE_URL"),
        ({"HINDSIGHT_VECTOR_BACKEND": "qdrant"}, "HINDSIGHT_QDRANT_URL"),
        ({"HINDSIGHT_EMBEDDING_TIMEOUT_SECONDS": "-1"}, "HINDSIGHT_EMBEDDING_TIMEOUT_SECONDS"),
    ],
)
def test_a_bad_setting_is_one_error_naming_it(
    tmp_path: Path, env: dict[str, str], setting: str
) -> None:
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "doctor"], env=env)
    assert result.exit_code == 2 and setting in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:p@host:8080/v1?key=x#f", "http://host:8080/v1"),
        ("https://host/v1", "https://host/v1"),
        ("http://user@[::1]:6333", "http://[::1]:6333"),
        (None, None),
    ],
)
def test_a_url_is_shown_without_its_credentials(url: str | None, shown: str | None) -> None:
    assert public_url(url) == shown


# -- never a key, on any interface ------------------------------------------------------------
@pytest.mark.embedded
def test_no_interface_shows_a_key_or_password(
    settings: Settings, http: EmbeddingServer, embedder: Embeddings
) -> None:
    down = closed_port()
    secret = _remote(
        settings,
        http,
        llm_provider="openai",
        llm_base_url=f"http://admin:{PASSWORD}@127.0.0.1:{down}/v1",
        llm_model="m",
        llm_api_key=SecretStr(LLM_KEY),
        llm_max_retries=0,
        reranker="http",
        rerank_base_url=f"http://admin:{PASSWORD}@127.0.0.1:{down}",
        rerank_api_key=SecretStr(RERANK_KEY),
    )
    shown: list[str] = []
    with Hindsight(secret) as hs:
        hs.retain("user:alice", "I love jazz.")
        found = hs.doctor()
        assert found["embedding"]["check"]["ok"] and not found["llm"]["check"]["ok"]
        assert found["llm"]["base_url"] == f"http://127.0.0.1:{down}/v1"
        shown.append(json.dumps(found))
        shown.append(json.dumps(diagnose(secret)))
        shown += [_cli(secret)[1], _cli(secret, "--json")[1]]
        app = create_app(hs, mcp=False)
        with TestClient(app, base_url="http://127.0.0.1") as api:
            response = api.get("/v1/doctor")
            assert response.status_code == 200 and not response.json()["ok"]
            shown.append(response.text)
        with live_server(app) as url, Client(url) as client:
            shown.append(json.dumps(client.doctor(check_endpoints=False)))
        tool = anyio.run(create_server(hs).call_tool, "memory_doctor", {})
        shown.append(json.dumps(tool.structured_content))
    for text in shown:
        assert "127.0.0.1" in text
        for value in SECRETS:
            assert value not in text


def test_rest_needs_a_key_that_reads_every_owner(hs: Hindsight) -> None:
    keys = KeyRing.parse(
        {
            "keys": [
                {"name": "admin", "key": "admin-key-0123456789", "read": ["*"]},
                {"name": "alice", "key": "alice-key-0123456789", "write": ["user:alice"]},
            ]
        }
    )
    with TestClient(create_app(hs, keyring=keys, mcp=False)) as api:
        denied = api.get("/v1/doctor", headers={"Authorization": "Bearer alice-key-0123456789"})
        assert denied.status_code == 403
        found = api.get(
            "/v1/doctor?check_endpoints=false",
            headers={"Authorization": "Bearer admin-key-0123456789"},
        )
        assert found.status_code == 200 and found.json()["embedding"]["check"] is None
