"""Shared fixtures: a fresh store per test, the real local model loaded once.

Tests that take ``settings`` (or ``hs``) run on both backends: the embedded SQLite
file, and a real PostgreSQL server with pgvector (from the ``pgserver`` package,
started once per run; each test gets a schema of its own). A test that is about
the SQLite file itself is marked ``embedded``.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings, registry


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "embedded: about the SQLite store only")


@pytest.fixture(scope="session")
def embedder() -> Embeddings:
    return registry.create("minilm")


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


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres" and request.node.get_closest_marker("embedded"):
        pytest.skip("about the SQLite file")
    return str(request.param)


@pytest.fixture
def settings(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> Settings:
    # Durability is not what most tests test; crash tests set their own.
    url = request.getfixturevalue("database_url") if backend == "postgres" else None
    return Settings(home=tmp_path / "home", sqlite_synchronous="OFF", database_url=url)


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
