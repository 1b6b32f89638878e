"""Vectors searched by Qdrant, kept joined to their rows by an outbox.

The row store stays the source of truth. A put or drop writes the ``vectors`` row (the
vector's bytes, as the ``local`` backend keeps them) and appends to ``vector_log`` in
the store's own transaction, so a write is acknowledged only once its row, its vector
and the outbox entry are committed together. Qdrant is then brought up to the log
(:meth:`QdrantVectors.catch_up`, before every search and after a forget): each entry
is replayed as the row now stands (a vector there: upsert; none: delete), so a replay
is idempotent, a kill -9 or an outage loses nothing acknowledged (the entry waits), and
no point outlives its row. How far Qdrant has applied the log is kept in the store's
``meta`` table (``qdrant_applied:<collection>``), written after Qdrant acknowledged.
A collection made anew (a wiped shard, a new server) or a log pruned past that mark is
reconciled whole from the rows (:meth:`QdrantVectors.repair`).

Each embedding model and dimension has its own collection
(``<qdrant_collection>-<model>-<dim>``). A point's id is its memory's row key; its
payload holds the memory's id, owner, namespace, kind, status, observed time and
model. Searches filter by owner, kind and observed time inside the engine (fields no
later write changes) and the store checks the rest of the filter on the rows, as for
the other backends. A memory's query hints are part of the text its one vector embeds
(as for ``local`` and ``pgvector``), so they are searched too.

One gap is known: a writer that searches inside its own transaction after writing
vectors (none does today: a write plans, with its searches, before it writes) would
apply its uncommitted entries; if it then rolled back, ``hindsight vectors check``
reports the difference and ``--repair`` fixes it.

On qdrant-edge, HNSW is built only when asked and the build blocks the process: a
catch-up that leaves ``optimize_after`` or more points outside the index builds it
then (``hindsight vectors optimize`` builds it at any time). A Qdrant server indexes
by itself.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from hindsight.errors import StoreError, VectorsUnavailableError
from hindsight.store.rows import chunks
from hindsight.store.vectors.base import Rows, Vector, checked
from hindsight.store.vectors.qdrant_engines import Engine, Point, Where

if TYPE_CHECKING:
    from hindsight.store.db import Connection, Database
    from hindsight.store.records import Filter

Connect = Callable[[str, int], Engine]
"""Opens an engine's collection of this name and dimension, made if missing."""

_log = logging.getLogger("hindsight.store.vectors.qdrant")
_PAGE = 1_000  # log entries (and points) applied per Qdrant call: batched upserts


@dataclass(slots=True)
class Report:
    """Vectors out of step with their rows: ``missing`` (memory ids whose vector Qdrant
    lacks) and ``orphaned`` (point ids, row keys, that no row of the model has)."""

    missing: list[str] = field(default_factory=list)
    orphaned: list[int] = field(default_factory=list)
    repaired: bool = False

    @property
    def clean(self) -> bool:
        return not self.missing and not self.orphaned


def collection_name(prefix: str, model_id: str, dimension: int) -> str:
    """One collection a model version: ``hindsight-minilm-l6-v2-int8-384``."""
    slug = re.sub(r"[^a-z0-9]+", "-", model_id.lower()).strip("-") or "model"
    return f"{prefix}-{slug}-{dimension}"


class QdrantVectors:
    """Vectors in Qdrant, the store's rows their source (a
    :class:`~hindsight.store.vectors.VectorBackend`)."""

    logs: tuple[str, ...] = ("vector_log",)

    def __init__(
        self,
        db: Database,
        connect: Connect,
        *,
        prefix: str = "hindsight",
        ef: int = 200,
        optimize_after: int = 20_000,
    ) -> None:
        self._db = db
        self._connect = connect
        self._prefix = prefix
        self._ef = ef
        self._optimize_after = optimize_after
        self._pg = db.vector_backend == "pgvector"  # vectors.vec is pgvector's type there
        self._lock = threading.Lock()  # one catch-up at a time in this process
        self._engine: Engine | None = None
        self._collection: str | None = None
        self._model: str | None = None
        self._dimension: int | None = None
        self._seen: int | None = None  # the log's head as last applied by this process
        self.builds = 0  # the engine's optimize() calls by this process
        self.build_seconds = 0.0  # and the time they took

    # -- VectorBackend ---------------------------------------------------------------
    def bind(self, model_id: str, dimension: int) -> None:
        name = collection_name(self._prefix, model_id, dimension)
        if name == self._collection:
            return
        self.close()
        engine = self._connect(name, dimension)  # raises when it cannot be opened
        self._engine, self._collection = engine, name
        self._seen = None
        self._model, self._dimension = model_id, dimension
        if getattr(engine, "made", False):
            self._set_applied(-1)  # a new collection: reconciled whole from the rows

    def put(self, conn: Connection, key: int, owner: str, model: str, vector: Vector) -> None:
        vec = checked(vector, self._dimension)
        value: Any = _text(vec) if self._pg else np.ascontiguousarray(vec, dtype="<f4").tobytes()
        cast = "?::vector" if self._pg else "?"
        conn.execute(
            f"INSERT INTO vectors (key, owner, model, dim, vec) VALUES (?, ?, ?, ?, {cast}) "
            "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, model = excluded.model, "
            "dim = excluded.dim, vec = excluded.vec",
            (key, owner, model, self._dimension, value),
        )
        self._log(conn, key, owner, 1)

    def drop(self, conn: Connection, key: int, owner: str) -> None:
        conn.execute("DELETE FROM vectors WHERE key = ?", (key,))
        self._log(conn, key, owner, 0)

    def _log(self, conn: Connection, key: int, owner: str, op: int) -> None:
        self._db.log_order(conn)  # entries commit in seq order (PostgreSQL)
        conn.execute("INSERT INTO vector_log (owner, key, op) VALUES (?, ?, ?)", (owner, key, op))

    def search(self, flt: Filter, query: Vector, k: int, rows: Rows) -> list[tuple[str, float]]:
        engine = self._bound()
        self.catch_up()
        vector = np.asarray(query, dtype=np.float32).tolist()
        base = Where(
            owners=list(flt.owners),
            kinds=[kind.value for kind in flt.kinds] if flt.kinds else None,
            since=flt.since.timestamp() if flt.since else None,
            until=flt.until.timestamp() if flt.until else None,
        )

        def hits(
            n: int, among: Collection[int] | None = None
        ) -> tuple[list[tuple[int, float]], bool]:
            where = base if among is None else replace(base, among=list(among))
            found = engine.search(vector, n, where, max(self._ef, n))
            return found, len(found) < n

        return rows.within(flt, k, hits)

    def forgot(self, owners: Collection[str]) -> set[str]:
        self._try_catch_up()  # the forgotten memories' points go now if Qdrant is up
        return set()  # nothing held in this process's files

    def count(self, owner: str | None = None) -> int:
        cond, params = ("WHERE owner = ?", (owner,)) if owner is not None else ("", ())
        return int(self._db.read(f"SELECT count(*) FROM vectors {cond}", params)[0][0])

    def warm(self, owner: str) -> None:
        self._try_catch_up()

    def _try_catch_up(self) -> None:
        """Catch up if Qdrant is up; else the entries wait for the next try."""
        try:
            self.catch_up()
        except VectorsUnavailableError as exc:
            _log.warning("vectors not caught up yet: %s", exc)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = self._collection = None

    # -- the outbox ---------------------------------------------------------------------
    def catch_up(self) -> int:
        """Apply the log entries Qdrant has not seen; returns how many. Raises
        :class:`~hindsight.errors.VectorsUnavailableError` if Qdrant cannot take them
        (they wait in the log).

        Under the database's lock, then this backend's (the order a writer that
        searches inside its transaction takes them in). One query when nothing is new.
        """
        engine = self._bound()
        with self._db.lock, self._lock:
            head = self._db.log_head("vector_log")
            if self._seen is not None and head <= self._seen:
                return 0
            applied = self._applied()
            if applied < self._db.pruned("vector_log"):  # a new collection, or a cut log
                self._reconcile(engine, None, repair=True)
                self._set_applied(head)
                self._build_if_due(engine)
                return 0
            done = 0
            while applied < head:
                entries = self._db.read(
                    "SELECT seq, key FROM vector_log WHERE seq > ? AND seq <= ? "
                    "ORDER BY seq LIMIT ?",
                    (applied, head, _PAGE),
                )
                if not entries:
                    break
                self._apply(engine, {int(key) for _, key in entries})
                applied = int(entries[-1][0])
                self._set_applied(applied)
                done += len(entries)
            self._seen = head
            if done:
                self._build_if_due(engine)
            return done

    def _build_if_due(self, engine: Engine) -> None:
        if 0 < self._optimize_after <= engine.unindexed():
            self._build(engine)  # blocks: see the module's docstring

    def _apply(self, engine: Engine, keys: Collection[int]) -> None:
        """Make Qdrant hold these keys' points as their rows now stand."""
        points = self._points(keys)
        if points:
            engine.upsert(points)
        gone = sorted(set(keys) - {key for key, _, _ in points})
        if gone:
            engine.delete(gone)

    def _points(self, keys: Collection[int]) -> list[Point]:
        """The points of these row keys that have a row and a vector of the bound model."""
        vec = "v.vec::text" if self._pg else "v.vec"
        points: list[Point] = []
        for chunk in chunks(sorted(keys)):
            among, values = self._db.among(chunk)
            rows = self._db.read(
                f"SELECT v.key, {vec}, m.id, m.owner, m.kind, m.status, m.observed_at "
                "FROM vectors v JOIN memories m ON m.rowid = v.key "
                f"WHERE v.key {among} AND v.model = ? AND v.dim = ?",
                (*values, self._model, self._dimension),
            )
            for key, blob, mid, owner, kind, status, observed in rows:
                payload = {
                    "memory_id": mid,
                    "owner": owner,
                    "namespace": owner.split(":", 1)[0],
                    "kind": kind,
                    "status": status,
                    "observed_at": float(observed),
                    "model": self._model,
                }
                points.append((int(key), self._vector(blob), payload))
        return points

    def _vector(self, stored: Any) -> list[float]:
        if self._pg:
            return [float(x) for x in str(stored).strip("[]").split(",")]
        return np.frombuffer(stored, dtype="<f4").astype(float).tolist()  # type: ignore[no-any-return]

    def _applied(self) -> int:
        row = self._db.read("SELECT value FROM meta WHERE key = ?", (self._mark(),))
        return int(row[0][0]) if row else 0

    def _set_applied(self, seq: int) -> None:
        self._seen = None if seq < 0 else self._seen
        with self._db.tx() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (self._mark(), str(seq)),
            )

    def _mark(self) -> str:
        return f"qdrant_applied:{self._collection}"

    def _bound(self) -> Engine:
        if self._engine is None:
            raise StoreError("bind_embedding() must be called before using vectors")
        return self._engine

    # -- check, repair, optimise -----------------------------------------------------------
    def check(self, owner: str | None = None) -> Report:
        """What Qdrant lacks or holds beyond the rows, once the log is applied."""
        self.catch_up()
        with self._db.lock, self._lock:
            return self._reconcile(self._bound(), owner, repair=False)

    def repair(self, owner: str | None = None) -> Report:
        """Upsert what Qdrant lacks and delete what it holds beyond the rows."""
        self.catch_up()
        with self._db.lock, self._lock:
            return self._reconcile(self._bound(), owner, repair=True)

    def optimize(self) -> bool:
        """Build the engine's index now (qdrant-edge; a server does it by itself)."""
        self.catch_up()
        with self._db.lock, self._lock:
            return self._build(self._bound())

    def unindexed(self) -> int:
        """Points the engine holds outside its HNSW index (searched exactly)."""
        return self._bound().unindexed()

    def _build(self, engine: Engine) -> bool:
        start = time.perf_counter()
        self.builds += 1
        try:
            return engine.optimize()
        finally:
            self.build_seconds += time.perf_counter() - start

    def _reconcile(self, engine: Engine, owner: str | None, *, repair: bool) -> Report:
        cond, params = ("AND v.owner = ?", (owner,)) if owner is not None else ("", ())
        rows = self._db.read(
            "SELECT v.key, m.id FROM vectors v JOIN memories m ON m.rowid = v.key "
            f"WHERE v.model = ? AND v.dim = ? {cond}",
            (self._model, self._dimension, *params),
        )
        expected = {int(key): mid for key, mid in rows}
        held = set(engine.keys(owner))
        missing = sorted(set(expected) - held)
        orphaned = sorted(held - set(expected))
        if repair:
            for chunk in chunks(missing, _PAGE):
                engine.upsert(self._points(chunk))
            for chunk in chunks(orphaned, _PAGE):
                engine.delete(chunk)
        return Report(
            missing=[expected[key] for key in missing], orphaned=orphaned, repaired=repair
        )


def _text(vector: Vector) -> str:
    return "[" + ",".join(map(str, np.asarray(vector, dtype=np.float32).tolist())) + "]"
