"""The embedded database: one SQLite file in WAL mode.

SQLite is the source of truth. The keyword index (:mod:`hindsight.store.keyword`)
and the local vector index (:mod:`hindsight.store.vectors.local`) are caches rebuilt
or caught up from ``keyword_log`` and ``vector_log`` whenever they are behind, so a
killed writer or another process never leaves rows and indexes disagreeing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hindsight.errors import StoreError
from hindsight.store.db import Connection, Database
from hindsight.store.migrations import SQLITE, migrate


class SQLiteDatabase(Database):
    """One connection to the file; several processes may share the file."""

    vector_backend = "local"
    by_key = "NOT INDEXED"  # look hits up by rowid, never scan an owner's rows

    def __init__(self, path: Path, *, synchronous: str = "NORMAL") -> None:
        super().__init__()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(path), isolation_level=None, check_same_thread=False, timeout=10.0
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA synchronous={synchronous}")
            self._conn.execute("PRAGMA foreign_keys=ON")
            migrate(self._migrating, SQLITE)
        except (OSError, sqlite3.DatabaseError) as exc:
            raise StoreError(f"cannot open the store at {path}: {exc}") from exc
        self.path = path

    def close(self) -> None:
        with self.lock:
            self._conn.close()

    @contextmanager
    def _begin(self, read_back: bool = True) -> Iterator[Connection]:
        with self.lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"the store is busy or unwritable: {exc}") from exc
            with self._ending():
                yield self._conn

    @contextmanager
    def _migrating(self) -> Iterator[Connection]:
        self._conn.execute("BEGIN IMMEDIATE")  # another process may be migrating too
        with self._ending():
            yield self._conn

    @contextmanager
    def _ending(self) -> Iterator[None]:
        """Commit what the block did, or roll it back."""
        try:
            yield
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.OperationalError as exc:
                raise StoreError(f"store query failed: {exc}") from exc

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        with self.lock:  # one connection, no write of this process in between
            yield

    def log_head(self, log: str) -> int:
        row = self.read("SELECT seq FROM sqlite_sequence WHERE name = ?", (log,))
        return int(row[0][0]) if row else 0

    def size_bytes(self) -> int:
        paths = (self.path, Path(f"{self.path}-wal"))
        return sum(p.stat().st_size for p in paths if p.exists())

    def describe(self) -> dict[str, Any]:
        return {"database": "sqlite", "path": str(self.path)}
