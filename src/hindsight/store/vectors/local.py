"""Vectors as rows of the SQLite file, searched by an index in this process.

Each put or drop writes the ``vectors`` row and appends to ``vector_log`` in the
store's transaction; the :class:`~hindsight.store.vectors.index.VectorIndex` (exact
for owners under ``hnsw_threshold`` vectors, usearch HNSW above) catches up from the
log before it searches, so writes of other processes and crashes are seen.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from hindsight.errors import EmbeddingMismatchError, StoreError
from hindsight.store.vectors.base import Rows, Vector, checked
from hindsight.store.vectors.index import Change, VectorIndex

if TYPE_CHECKING:
    from hindsight.store.db import Connection, Database
    from hindsight.store.records import Filter


class LocalVectors:
    """The embedded store's vectors (a :class:`~hindsight.store.vectors.VectorBackend`,
    and the :class:`~hindsight.store.vectors.index.VectorSource` of its index)."""

    logs: tuple[str, ...] = ("vector_log",)

    def __init__(
        self,
        db: Database,
        *,
        directory: Path | None = None,
        hnsw_threshold: int = 20_000,
        max_vectors: int | None = None,
    ) -> None:
        if db.vector_backend != "local":
            raise StoreError(
                "the local vector backend keeps its vectors in the embedded SQLite store; "
                "with HINDSIGHT_DATABASE_URL use pgvector, qdrant or qdrant-edge"
            )
        self._db = db
        self._directory = directory
        self._hnsw_threshold = hnsw_threshold
        self._max_vectors = max_vectors
        self._dimension: int | None = None
        self._index: VectorIndex | None = None

    def bind(self, model_id: str, dimension: int) -> None:
        if self._index is not None and self._index.dimension == dimension:
            return  # the vectors it holds are caught up from the log as they are remade
        self.close()
        self._dimension = dimension
        self._index = VectorIndex(
            self,
            dimension,
            directory=self._directory,
            hnsw_threshold=self._hnsw_threshold,
            max_vectors=self._max_vectors,
        )

    def put(self, conn: Connection, key: int, owner: str, model: str, vector: Vector) -> None:
        blob = np.ascontiguousarray(checked(vector, self._dimension), dtype="<f4").tobytes()
        conn.execute(
            "INSERT OR REPLACE INTO vectors (key, owner, model, dim, vec) VALUES (?, ?, ?, ?, ?)",
            (key, owner, model, self._dimension, blob),
        )
        conn.execute("INSERT INTO vector_log (owner, key, op) VALUES (?, ?, 1)", (owner, key))

    def drop(self, conn: Connection, key: int, owner: str) -> None:
        conn.execute("DELETE FROM vectors WHERE key = ?", (key,))
        conn.execute("INSERT INTO vector_log (owner, key, op) VALUES (?, ?, 0)", (owner, key))

    def search(self, flt: Filter, query: Vector, k: int, rows: Rows) -> list[tuple[str, float]]:
        index = self._index
        if index is None:
            raise StoreError("bind_embedding() must be called before searching vectors")

        def hits(
            n: int, among: Collection[int] | None = None
        ) -> tuple[list[tuple[int, float]], bool]:
            found = [index.search(owner, query, n, among) for owner in flt.owners]
            return [h for part in found for h in part], all(len(p) < n for p in found)

        return rows.within(flt, k, hits)

    def forgot(self, owners: Collection[str]) -> set[str]:
        # An owner with nothing left loses its index files too, and one with vectors
        # left its saved exact index: no vectors of forgotten memories stay there.
        gone = set()
        for owner in owners:
            if self._index is None:
                continue
            if self._db.read("SELECT 1 FROM vectors WHERE owner = ? LIMIT 1", (owner,)):
                self._index.drop_saved(owner)
            else:
                self._index.drop(owner)
                gone.add(owner)
        return gone

    def count(self, owner: str | None = None) -> int:
        cond, params = ("WHERE owner = ?", (owner,)) if owner is not None else ("", ())
        return int(self._db.read(f"SELECT count(*) FROM vectors {cond}", params)[0][0])

    def warm(self, owner: str) -> None:
        if self._index is not None:
            self._index.count(owner)  # loads or builds the owner's index, caught up

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    @property
    def index(self) -> VectorIndex | None:
        """The in-process index, once bound."""
        return self._index

    # -- VectorSource, for the index ---------------------------------------------
    def vector_snapshot(
        self, owner: str, after_key: int, limit: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        rows = self._db.read(
            "SELECT key, vec FROM vectors WHERE owner = ? AND key > ? ORDER BY key LIMIT ?",
            (owner, after_key, limit),
        )
        keys = np.fromiter((key for key, _ in rows), dtype=np.int64, count=len(rows))
        dimension = self._dimension or 0
        blobs = [blob for _, blob in rows]
        if any(len(blob) != 4 * dimension for blob in blobs):
            raise EmbeddingMismatchError(f"a stored vector is not of {dimension} float32s")
        # One buffer for the page, not one array a row (most of a rebuild's time).
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").astype(np.float32)
        return keys, matrix.reshape(len(rows), dimension)

    def vector_changes(self, owner: str, after_seq: int) -> tuple[list[Change], int] | None:
        with self._db.snapshot():
            if after_seq < self._db.pruned("vector_log"):
                return None  # the log no longer reaches back that far: rebuild
            head = self.vector_log_head()
            rows = self._db.read(
                "SELECT l.seq, l.key, l.op, v.vec FROM vector_log l "
                "LEFT JOIN vectors v ON v.key = l.key "
                "WHERE l.owner = ? AND l.seq > ? AND l.seq <= ? ORDER BY l.seq",
                (owner, after_seq, head),
            )
        changes: list[Change] = []
        for seq, key, op, blob in rows:
            vector = None
            if op == 1 and blob is not None:
                vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
            changes.append((seq, key, vector))
        return changes, head

    def vector_log_head(self) -> int:
        return self._db.log_head("vector_log")
