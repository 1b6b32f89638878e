"""One migration runner for both databases; the records existing stores hold stay valid.

Also: the SQL working memory shares the store's database and closes in either order.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from hindsight import Settings
from hindsight.store import open_store, open_working
from hindsight.store.migrations import POSTGRES, SQLITE, Migration

pytestmark = pytest.mark.backends  # each database's migrations

# sha256 of each released migration's SQL, as the stores before this runner applied
# them: editing one would leave existing databases with another schema than new ones.
RELEASED = {
    "sqlite": {
        1: "43b9a983e232caaa247e9f0617ae01e026231ac982b63a135ad209affa75812a",
        2: "2d853c19ebe7ac1fea2474703d5fa88d7489196bd8da7eb6444d65d274f812de",
        3: "97842f47da345fd48663776428854181627f496becfd21d20d414d72dba77d91",
        4: "8b106ade64395e5c4a9ce6abc7c1dd6b3991bcb96978a0e6aaf0eb65d3182bc8",
    },
    "postgres": {
        1: "7a0f7107f1601c98e91bffb1bf8ade1b6e8734d78648edea9d5fabfa4c02fbfa",
        2: "097b5cf33acf831b6f483ba5809fc72ba080ef17b7e3dfbe554016e9282e725f",
    },
}


@pytest.mark.parametrize(("name", "migrations"), [("sqlite", SQLITE), ("postgres", POSTGRES)])
def test_released_migrations_are_unchanged_and_numbered_in_order(
    name: str, migrations: list[Migration]
) -> None:
    assert [v for v, _ in migrations] == list(range(1, len(migrations) + 1))
    digests = {v: hashlib.sha256(sql.encode()).hexdigest() for v, sql in migrations}
    assert {v: digests[v] for v in RELEASED[name]} == RELEASED[name]


def _versions(settings: Settings) -> list[tuple[int, float]]:
    store = open_store(settings)
    try:
        rows = store.db.read(  # type: ignore[attr-defined]
            "SELECT version, applied_at FROM schema_migrations ORDER BY version"
        )
        return [(int(v), float(at)) for v, at in rows]
    finally:
        store.close()


def test_a_store_records_its_versions_once(settings: Settings) -> None:
    first = _versions(settings)
    expected = SQLITE if settings.database_url is None else POSTGRES
    assert [v for v, _ in first] == [v for v, _ in expected]
    assert _versions(settings) == first  # reopened: nothing applied again


@pytest.mark.embedded
def test_a_file_the_previous_runner_left_at_version_2_is_brought_up_to_date(
    settings: Settings,
) -> None:
    """What the SQLite runner before this one wrote: its table, versions 1 and 2."""
    path: Path = settings.database_path
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        for version, sql in SQLITE[:2]:
            for statement in (part.strip() for part in sql.split(";")):
                if statement:
                    db.execute(statement)
            db.execute("INSERT INTO schema_migrations VALUES (?, 1.0)", (version,))
        db.execute("INSERT INTO meta VALUES ('marker', 'kept')")
    db.close()
    assert _versions(settings)[:2] == [(1, 1.0), (2, 1.0)]
    assert [v for v, _ in _versions(settings)] == [v for v, _ in SQLITE]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'marker'").fetchone() == ("kept",)
        assert db.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'memories_superseded'"
        ).fetchone()
    db.close()


@pytest.mark.parametrize("working_first", [True, False])
def test_the_sql_working_memory_closes_in_either_order(
    settings: Settings, working_first: bool
) -> None:
    store = open_store(settings)
    working = open_working(settings, store)
    assert working.wm_count() == 0
    closing = [working.close, store.close] if working_first else [store.close, working.close]
    for close in closing:
        close()


def test_the_audit_index_is_filled_from_the_log_it_finds(settings: Settings) -> None:
    """A store whose log predates ``audit_refs`` gets it filled from the entries: what a
    memory's history reads by id is all there, recalls aside."""
    from conftest import execute_sql

    from hindsight import Hindsight

    with Hindsight(settings) as hs:
        old = hs.retain("user:m", "I live in Paris.", session_id="s1").created[0]
        new = hs.retain("user:m", "I moved to Berlin.", session_id="s2").created[0]
        hs.recall("user:m", "where?")
        hs.forget(owner="user:m", session_id="s2")
        events = hs.store.audit_about("user:m", [old, new], limit=100)
    assert "forget" in {e.action for e in events} and len(events) >= 3
    version = 9 if settings.database_url is None else 7
    execute_sql(settings, "DELETE FROM audit_refs")
    execute_sql(settings, f"DELETE FROM schema_migrations WHERE version = {version}")
    execute_sql(settings, "DROP TABLE audit_refs")
    with Hindsight(settings) as hs:
        again = hs.store.audit_about("user:m", [old, new], limit=100)
    assert [e.seq for e in again] == [e.seq for e in events]
    assert "recall" not in {e.action for e in again}
