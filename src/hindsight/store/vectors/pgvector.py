"""Vectors in a pgvector column, searched by PostgreSQL.

Exactly for owners under ``hnsw_threshold`` memories (as the embedded store searches
them), else through an HNSW index when the planner finds that cheaper; an HNSW pass
that a filter leaves short of ``k`` is redone exactly, so a narrow filter never loses
results. The filter is applied in the same query, joined on the memories.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg

from hindsight.errors import StoreError
from hindsight.store.db import Connection, Database
from hindsight.store.postgres import PostgresDatabase, first_line
from hindsight.store.records import Filter
from hindsight.store.rows import filter_sql
from hindsight.store.vectors.base import Rows, Vector, checked

_EF_SEARCH = 200  # HNSW's candidate list by default, enough for recall's 100 candidates


class PgVectors:
    """The PostgreSQL store's vectors (a :class:`~hindsight.store.vectors.VectorBackend`)."""

    logs: tuple[str, ...] = ()  # the database searches the rows themselves

    def __init__(self, db: Database, *, hnsw_threshold: int = 20_000, ef: int = _EF_SEARCH) -> None:
        if not isinstance(db, PostgresDatabase):
            raise StoreError("pgvector keeps its vectors in a PostgreSQL database")
        self._db = db
        self._hnsw_threshold = hnsw_threshold
        self._ef = int(ef)  # HINDSIGHT_HNSW_EF
        self._dimension: int | None = None
        db.configure(f"SET hnsw.ef_search = {self._ef}")  # pgvector's, when it loads

    def bind(self, model_id: str, dimension: int) -> None:
        """Keep one HNSW index, on this dimension (a cast: the column has none)."""
        self._dimension = dimension
        name = f"vectors_hnsw_{dimension}"
        with self._db.tx() as conn:
            PostgresDatabase.lock_schema(conn)  # servers starting
            rebinding = conn.execute("SELECT 1 FROM meta WHERE key = 'rebinding'").fetchone()
            for (other,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
                "AND tablename = 'vectors' AND indexname LIKE 'vectors_hnsw_%%' "
                "AND indexname != ?",
                (name,),
            ).fetchall():
                conn.execute(f'DROP INDEX IF EXISTS "{other}"')
            if not rebinding:  # vectors of another dimension would fail the cast
                conn.execute(
                    f"CREATE INDEX IF NOT EXISTS {name} ON vectors "
                    f"USING hnsw ((vec::vector({dimension})) vector_cosine_ops)"
                )

    def put(self, conn: Connection, key: int, owner: str, model: str, vector: Vector) -> None:
        conn.execute(
            "INSERT INTO vectors (key, owner, model, dim, vec) VALUES (?, ?, ?, ?, ?::vector) "
            "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, model = excluded.model, "
            "dim = excluded.dim, vec = excluded.vec",
            (key, owner, model, self._dimension, _text(checked(vector, self._dimension))),
        )

    def drop(self, conn: Connection, key: int, owner: str) -> None:
        conn.execute("DELETE FROM vectors WHERE key = ?", (key,))

    def forgot(self, owners: Collection[str]) -> set[str]:
        return set()  # nothing held outside the database

    def count(self, owner: str | None = None) -> int:
        cond, params = ("WHERE owner = ?", (owner,)) if owner is not None else ("", ())
        return int(self._db.read(f"SELECT count(*) FROM vectors {cond}", params)[0][0])

    def warm(self, owner: str) -> None:
        pass  # searched in the database: nothing held in the process

    def close(self) -> None:
        pass  # the database is the store's to close

    def search(self, flt: Filter, query: Vector, k: int, rows: Rows) -> list[tuple[str, float]]:
        ef = min(1000, max(self._ef, 2 * k))  # HNSW's candidate list: twice what is asked
        exact = self.searched_exactly(flt, rows)  # before a connection is taken: no wait holds one
        try:
            with self._db.reading() as conn:  # a read replica's in a recall, if one is set
                if exact:
                    found = conn.execute(*self.query(flt, query, k, exact=True)).fetchall()
                else:
                    hnsw = self.query(flt, query, k, exact=False)
                    if ef == self._ef:  # the connection's own setting: one round trip
                        found = conn.execute(*hnsw).fetchall()
                    else:
                        with conn.raw.transaction():
                            conn.execute("SELECT set_config('hnsw.ef_search', ?, true)", (str(ef),))
                            found = conn.execute(*hnsw).fetchall()
                    if len(found) < k:  # an HNSW pass the filter thinned: redo it exactly
                        found = conn.execute(*self.query(flt, query, k, exact=True)).fetchall()
        except psycopg.Error as exc:
            raise StoreError(f"vector search failed: {first_line(exc)}") from exc
        return [(mid, float(sim)) for mid, sim in found]

    def query(
        self, flt: Filter, query: npt.NDArray[np.float32], k: int, *, exact: bool
    ) -> tuple[str, tuple[Any, ...]]:
        """The nearest ``k`` vectors within ``flt``, as SQL and its parameters; ``exact``
        orders by an expression no index serves ("distance + 0"), so the database
        compares every row the filter lets by.

        The owners are restricted on both tables, so the planner may start from either
        owner index (on memories alone it read every vector before the join: 3.6 ms
        against 2.0 for a LoCoMo owner; on vectors alone it scanned every memory of a
        100-owner store: 23 ms against 2.5).
        """
        dim = self._dimension
        if dim is None:
            raise StoreError("bind_embedding() must be called before searching vectors")
        where, params = filter_sql(flt)
        among, owners = self._db.among(flt.owners)
        where, params = f"v.owner {among} AND {where}", [*owners, *params]
        distance = f"v.vec::vector({dim}) <=> ?::vector({dim})"
        order = f"({distance}) + 0" if exact else distance
        sql = (
            f"SELECT m.id, 1 - ({distance}) FROM vectors v JOIN memories m ON m.rowid = v.key "
            f"WHERE {where} AND v.dim = ? ORDER BY {order} LIMIT ?"
        )
        q = _text(query)
        return sql, (q, *params, dim, q, k)

    def searched_exactly(self, flt: Filter, rows: Rows) -> bool:
        """Whether a vector search within ``flt`` goes exact from the start: its owners
        are under ``hnsw_threshold`` memories together, as the embedded store searches
        them. Their sizes are what the store last counted (the keyword index: no query);
        an owner it does not hold yet takes the HNSW path, redone exactly if it comes
        back short."""
        sizes = [rows.known_size(owner) for owner in flt.owners]
        return None not in sizes and sum(s or 0 for s in sizes) < self._hnsw_threshold


def _text(vector: npt.NDArray[np.float32]) -> str:
    """pgvector's text form, which needs no client-side adapter."""
    return "[" + ",".join(map(str, np.asarray(vector, dtype=np.float32).tolist())) + "]"
