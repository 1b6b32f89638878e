"""The embedded store: one SQLite file in WAL mode, with in-memory keyword and vector indexes.

SQLite is the source of truth. The keyword index (:mod:`hindsight.store.keyword`)
and the vector index (:mod:`hindsight.store.vectors`) are caches rebuilt or caught
up from ``keyword_log`` and ``vector_log`` whenever they are behind, so a killed
writer or another process never leaves rows and indexes disagreeing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hindsight.errors import StoreError
from hindsight.models import Memory
from hindsight.store import files
from hindsight.store.base import Filter, TextIndexing
from hindsight.store.migrations import migrate
from hindsight.store.sql import Connection, SQLStore
from hindsight.store.vectors import VectorIndex


class SQLiteStore(SQLStore):
    """The default backend. Thread-safe; several processes may share the file."""

    _LOGS = ("vector_log", "keyword_log")
    _BY_KEY = "NOT INDEXED"  # look hits up by rowid, never scan an owner's rows

    def __init__(
        self,
        path: Path,
        *,
        index_dir: Path | None = None,
        hnsw_threshold: int = 20_000,
        synchronous: str = "NORMAL",
        text: TextIndexing | None = None,
        log_keep: int = 1_000_000,
        keyword_cache_docs: int | None = None,
        vector_cache_vectors: int | None = None,
    ) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(path), isolation_level=None, check_same_thread=False, timeout=10.0
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA synchronous={synchronous}")
            self._conn.execute("PRAGMA foreign_keys=ON")
            migrate(self._conn)
        except (OSError, sqlite3.DatabaseError) as exc:
            raise StoreError(f"cannot open the store at {path}: {exc}") from exc
        self.path = path
        if index_dir is not None and index_dir.is_dir():
            files.remove_leftovers(index_dir)  # of writers that died mid-write
        super().__init__(
            index_dir=index_dir,
            text=text,
            log_keep=log_keep,
            keyword_cache_docs=keyword_cache_docs,
        )
        self._hnsw_threshold = hnsw_threshold
        self._vector_cache = vector_cache_vectors
        self._index: VectorIndex | None = None

    def _bound(self, model_id: str, dimension: int) -> None:
        self._index = VectorIndex(
            self,
            dimension,
            directory=self._index_dir,
            hnsw_threshold=self._hnsw_threshold,
            max_vectors=self._vector_cache,
        )

    def close(self) -> None:
        # Saving keyword indexes catches them up from the store first: not under the
        # store's lock, which a search holding an index's lock may be waiting for.
        self._keywords.close()
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None
            self._conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"the store is busy or unwritable: {exc}") from exc
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def _hold(self, conn: Connection, owners: Sequence[str]) -> None:
        pass  # BEGIN IMMEDIATE took the file's one write lock

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.OperationalError as exc:
                raise StoreError(f"store query failed: {exc}") from exc

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        with self._lock:  # one connection, no write of this process in between
            yield

    def _log_head(self, log: str) -> int:
        row = self._read("SELECT seq FROM sqlite_sequence WHERE name = ?", (log,))
        return int(row[0][0]) if row else 0

    def _size_bytes(self) -> int:
        paths = (self.path, Path(f"{self.path}-wal"))
        return sum(p.stat().st_size for p in paths if p.exists())

    # -- vectors: rows in the file, searched by an index in this process ------------
    def _put_vector(
        self, conn: Connection, key: int, memory: Memory, vector: npt.NDArray[np.float32]
    ) -> None:
        self._check_vector(vector)
        blob = np.ascontiguousarray(vector, dtype="<f4").tobytes()
        conn.execute(
            "INSERT OR REPLACE INTO vectors (key, owner, model, dim, vec) VALUES (?, ?, ?, ?, ?)",
            (key, memory.owner, memory.embedding_model or "", self._dimension, blob),
        )
        conn.execute(
            "INSERT INTO vector_log (owner, key, op) VALUES (?, ?, 1)", (memory.owner, key)
        )

    def _drop_vector(self, conn: Connection, key: int, owner: str) -> None:
        conn.execute("DELETE FROM vectors WHERE key = ?", (key,))
        conn.execute("INSERT INTO vector_log (owner, key, op) VALUES (?, ?, 0)", (owner, key))

    def _forgot(self, owners: set[str]) -> None:
        # An owner with nothing left loses its index files too: no vectors of
        # forgotten memories stay on disk. A saved keyword index holds words of what was
        # forgotten: it goes (rewritten without them when this process flushes).
        for owner in owners:
            if self._index is not None and not self._read(
                "SELECT 1 FROM vectors WHERE owner = ? LIMIT 1", (owner,)
            ):
                self._index.drop(owner)
                self._keywords.drop(owner)
            else:
                self._keywords.drop_saved(owner)

    def vector_search(
        self, flt: Filter, query: npt.NDArray[np.float32], k: int
    ) -> list[tuple[str, float]]:
        index = self._index
        if index is None:
            raise StoreError("bind_embedding() must be called before searching vectors")

        def hits(n: int) -> tuple[list[tuple[int, float]], bool]:
            found = [index.search(owner, query, n) for owner in flt.owners]
            return [h for part in found for h in part], all(len(p) < n for p in found)

        return self._top_within(flt, k, hits)

    # -- VectorSource, for the index ---------------------------------------------
    def vector_snapshot(
        self, owner: str, after_key: int, limit: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        rows = self._read(
            "SELECT key, vec FROM vectors WHERE owner = ? AND key > ? ORDER BY key LIMIT ?",
            (owner, after_key, limit),
        )
        keys = np.fromiter((key for key, _ in rows), dtype=np.int64, count=len(rows))
        matrix = np.empty((len(rows), self._dimension or 0), dtype=np.float32)
        for i, (_, blob) in enumerate(rows):
            matrix[i] = np.frombuffer(blob, dtype="<f4")
        return keys, matrix

    def vector_changes(
        self, owner: str, after_seq: int
    ) -> tuple[list[tuple[int, int, npt.NDArray[np.float32] | None]], int] | None:
        with self._lock:
            if after_seq < self._pruned("vector_log"):
                return None  # the log no longer reaches back that far: rebuild
            head = self.vector_log_head()
            rows = self._read(
                "SELECT l.seq, l.key, l.op, v.vec FROM vector_log l "
                "LEFT JOIN vectors v ON v.key = l.key "
                "WHERE l.owner = ? AND l.seq > ? AND l.seq <= ? ORDER BY l.seq",
                (owner, after_seq, head),
            )
        changes: list[tuple[int, int, npt.NDArray[np.float32] | None]] = []
        for seq, key, op, blob in rows:
            vector = None
            if op == 1 and blob is not None:
                vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
            changes.append((seq, key, vector))
        return changes, head

    def vector_log_head(self) -> int:
        return self._log_head("vector_log")
