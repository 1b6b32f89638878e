"""Shared fixtures: a fresh store per test, the real local model loaded once.

A test that takes ``settings`` (or ``hs``) gets a store on a ``backend``, by this rule:

- **By default, SQLite only**: the embedded file. Most behaviour (interfaces and their
  output, validation, access checks, the guard's judgement, extraction, time words,
  foresight, the integrations) is the same whatever holds the rows, and is tested once.
- **Every backend where the marker** ``@pytest.mark.backends`` **says so** (on a test, or
  as a module's ``pytestmark``): SQLite; a real PostgreSQL server with pgvector (from the
  ``pgserver`` package, started once per run; each test gets a schema of its own); and
  that PostgreSQL with working memory and the recall cache in a real Redis (Debian's
  ``redis-server``). Mark what depends on the store: its contract
  (``test_store.py``), SQL, migrations, transactions, concurrency, crash safety, working
  memory, the recall cache, the audit log, the job queue, keyword and vector search.
  ``@pytest.mark.backends("sqlite", "postgres")`` names a subset; the marker nearest
  the test wins, so a test in a marked module can narrow it (``backends("sqlite")``).
- A test about the SQLite file itself is marked ``embedded``: SQLite only, whatever its
  module says.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Final
from urllib.parse import quote

import pytest
from llm_servers import FakeLLM, fake_llm

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings, registry

BACKENDS: Final = ("sqlite", "postgres", "postgres+redis")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run a test on the backends its ``backends`` marker names (see the module docstring)."""
    marker = metafunc.definition.get_closest_marker("backends")
    if "backend" not in metafunc.fixturenames or marker is None:
        return
    if metafunc.definition.get_closest_marker("embedded"):
        return
    names = marker.args or BACKENDS
    if tuple(names) == ("sqlite",):
        return  # as unmarked
    unknown = set(names) - set(BACKENDS)
    if unknown:
        raise pytest.UsageError(f"unknown backends {sorted(unknown)}: choose from {BACKENDS}")
    metafunc.parametrize("backend", names, indirect=True)


@pytest.fixture(scope="session")
def embedder() -> Embeddings:
    return registry.create("minilm", Settings())


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A libpq URL of a real PostgreSQL server with pgvector, up for the whole run."""
    run = tmp_path_factory.mktemp("run")
    os.environ.setdefault("XDG_RUNTIME_DIR", str(run))  # pgserver keeps its lock there
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import pgserver

    server = pgserver.get_server(tmp_path_factory.mktemp("pgdata"), cleanup_mode="stop")
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    return str(server.get_uri())


@pytest.fixture
def database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh, empty schema on the test server, as a URL whose search path is it."""
    import psycopg

    base = request.getfixturevalue("postgres_server")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    yield f"{base}&options={quote(f'-csearch_path={schema},public')}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A real Redis server (Debian's redis-server) on a Unix socket; its process and URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("no redis-server: apt-get install redis-server (.ci/run does)")
    socket = directory / "redis.sock"
    server = subprocess.Popen(
        [binary, "--port", "0", "--unixsocket", str(socket), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not socket.exists():
        if time.monotonic() > deadline or server.poll() is not None:
            server.kill()
            pytest.fail("redis-server did not start")
        time.sleep(0.02)
    return server, f"unix://{socket}"


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a Redis server up for the whole run."""
    server, url = start_redis(tmp_path_factory.mktemp("redis"))
    yield url
    server.terminate()
    server.wait(10)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """The test server, emptied for this test."""
    import redis

    with redis.Redis.from_url(redis_server) as client:
        client.flushall()
    return redis_server


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """The backend this run of the test is on: ``sqlite`` unless it is marked ``backends``."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def settings(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> Settings:
    # Durability is not what most tests test; crash tests set their own.
    url = request.getfixturevalue("database_url") if "postgres" in backend else None
    redis = request.getfixturevalue("redis_url") if "redis" in backend else None
    return Settings(
        home=tmp_path / "home", sqlite_synchronous="OFF", database_url=url, redis_url=redis
    )


def execute_sql(settings: Settings, sql: str) -> None:
    """Run one statement on a test's store behind the engine's back, whatever its backend."""
    if settings.database_url is None:
        with sqlite3.connect(settings.database_path) as db:
            db.execute(sql)
        db.close()
    else:
        import psycopg

        with psycopg.connect(settings.database_url, autocommit=True) as conn:
            conn.execute(sql)


@pytest.fixture
def hs(settings: Settings, embedder: Embeddings) -> Iterator[Hindsight]:
    with Hindsight(settings, embedder=embedder) as engine:
        yield engine


@pytest.fixture
def server() -> Iterator[FakeLLM]:
    """A model outside the project, faked at its seam: a real HTTP server on loopback that
    speaks the OpenAI and Anthropic protocols (see llm_servers)."""
    with fake_llm() as fake:
        yield fake


# -- the framework adapters (hindsight.integrations): the embedded engine, or a Client of a
# real server on a loopback port over the same store
@pytest.fixture(scope="module")
def adapter_engine(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embeddings
) -> Iterator[Hindsight]:
    settings = Settings(home=tmp_path_factory.mktemp("adapter"), sqlite_synchronous="OFF")
    with Hindsight(settings, embedder=embedder) as hs:
        yield hs


@pytest.fixture(scope="module")
def adapter_url(adapter_engine: Hindsight) -> Iterator[str]:
    from servers import live_server

    from hindsight.api import create_app

    with live_server(create_app(adapter_engine)) as base:
        yield base


@pytest.fixture(params=["embedded", "client"])
def adapter_memory(request: pytest.FixtureRequest, adapter_engine: Hindsight) -> Iterator[object]:
    """The engine itself, or a Client of a server over it; every owner forgotten after."""
    from hindsight import Client

    if request.param == "embedded":
        yield adapter_engine
    else:
        with Client(request.getfixturevalue("adapter_url")) as client:
            yield client
    for owner in adapter_engine.owners():
        adapter_engine.forget(owner=owner)
