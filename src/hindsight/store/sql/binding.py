"""Which embedding model made a SQL store's vectors (``meta``), and remaking them with
another: the :class:`~hindsight.store.base.Binding` part of the store."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from hindsight.errors import EmbeddingMismatchError, StoreError
from hindsight.models import Memory
from hindsight.store.rows import M_COLUMNS
from hindsight.store.sql.core import SQLCore


class SQLBinding(SQLCore):
    """The embedding model a store is bound to, and re-embedding."""

    def bind_embedding(self, model_id: str, dimension: int, *, rebind: bool = False) -> None:
        with self.db.tx() as conn:
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            bound = (rows.get("embedding_model"), rows.get("dimension"))
            if bound == (None, None) or (rebind and bound != (model_id, str(dimension))):
                settings = [("embedding_model", model_id), ("dimension", str(dimension))]
                if bound != (None, None):  # vectors of the old model remain until remade
                    settings.append(("rebinding", "1"))
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    settings,
                )
            elif bound != (model_id, str(dimension)):
                raise EmbeddingMismatchError(
                    f"this store holds vectors of {bound[0]} ({bound[1]}-d), not {model_id} "
                    f"({dimension}-d); run 'hindsight reembed' to remake them with {model_id}"
                )
            elif "rebinding" in rows and not rebind:
                raise EmbeddingMismatchError(
                    f"re-embedding this store with {model_id} was interrupted; run "
                    "'hindsight reembed' to finish it"
                )
        self._dimension = dimension
        self._model = model_id
        self.vectors.bind(model_id, dimension)

    def embedding_binding(self) -> tuple[str, int] | None:
        keys = "('embedding_model', 'dimension')"
        rows = dict(self.db.read(f"SELECT key, value FROM meta WHERE key IN {keys}"))
        if "embedding_model" not in rows or "dimension" not in rows:
            return None
        return str(rows["embedding_model"]), int(rows["dimension"])

    def stale_vectors(self, limit: int) -> list[Memory]:
        return self._memories(
            self.db.read(
                f"SELECT {M_COLUMNS} FROM memories m JOIN vectors v ON v.key = m.rowid "
                "WHERE v.model != ? OR v.dim != ? ORDER BY m.rowid LIMIT ?",
                (self._model, self._dimension, limit),
            )
        )

    def replace_vectors(self, pairs: Sequence[tuple[Memory, npt.NDArray[np.float32]]]) -> None:
        keys: set[int] = set()
        with self.db.tx() as conn:
            for memory, vector in pairs:
                row = conn.execute(
                    "UPDATE memories SET embedding_model = ? WHERE id = ? RETURNING rowid",
                    (memory.embedding_model, memory.id),
                ).fetchone()
                if row is not None:  # forgotten meanwhile: nothing to remake
                    self._put_vector(conn, row[0], memory, vector)
                    keys.add(row[0])
            self._texts.reindex(conn, keys)  # and the keyword text, as this version derives it
        self._wrote()

    def vector_versions(self) -> dict[tuple[str, int], int]:
        rows = self.db.read("SELECT model, dim, count(*) FROM vectors GROUP BY model, dim")
        return {(str(model), int(dim)): int(n) for model, dim, n in rows}

    def finish_rebind(self) -> None:
        if self.stale_vectors(1):
            raise StoreError("vectors of another model remain; re-embed them first")
        with self.db.tx() as conn:
            conn.execute("DELETE FROM meta WHERE key = 'rebinding'")
        if self._model is not None and self._dimension is not None:
            self.vectors.bind(self._model, self._dimension)  # its index, on every vector
