"""The production store: PostgreSQL with pgvector.

The same tables as the embedded store (:mod:`hindsight.store.sql` holds the SQL
both share), with vectors in a pgvector column searched by the database: exactly
for owners under ``hnsw_threshold`` memories (as the embedded store), else through an
HNSW index when the planner finds that cheaper; an HNSW pass that a filter leaves
short of ``k`` is redone exactly, so a narrow filter never loses results. Keyword
search uses the same in-process index as the embedded store, caught up from
``keyword_log``, so any number of stateless API servers can share one database.

Writers overlap, but each takes one transaction-level advisory lock before it appends to
the keyword change log and holds it to its commit: log sequence numbers then commit in
order, which is what lets a cache trust "everything up to the head".
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hindsight.errors import StoreError
from hindsight.models import Memory
from hindsight.store.base import Filter, TextIndexing
from hindsight.store.sql import Connection, Cursor, SQLStore, filter_sql

try:
    import psycopg
except ImportError as exc:  # pragma: no cover - depends on the install
    raise StoreError(
        "the PostgreSQL store needs psycopg: pip install 'agent-hindsight[postgres]'"
    ) from exc

_TABLES = (
    "schema_migrations",
    "meta",
    "memories",
    "derivations",
    "vectors",
    "keyword_docs",
    "keyword_log",
    "receipts",
    "working_memory",
)
_EF_SEARCH = 200  # HNSW's candidate list, enough for 100 results (recall's default)
_LOG_LOCK = zlib.crc32(b"hindsight writers")  # pg_advisory_xact_lock's key
_MIGRATE_LOCK = zlib.crc32(b"hindsight migrations")
_OWNER_LOCKS = 0x68730000  # the int4 class of per-owner write locks (with hashtext(owner))

# Numbered, append-only, like the SQLite store's (store/migrations.py): never edit a
# released one. Times are epoch seconds (double precision, UTC), as in SQLite, so both
# stores share their SQL; ``vectors.vec`` is a pgvector ``vector`` of ``dim`` values.
MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE memories (
            rowid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            owner TEXT NOT NULL,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            query_hints TEXT NOT NULL DEFAULT '[]',
            confidence DOUBLE PRECISION NOT NULL,
            source TEXT NOT NULL,
            session_id TEXT,
            speaker TEXT,
            observed_at DOUBLE PRECISION NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            valid_from DOUBLE PRECISION,
            valid_to DOUBLE PRECISION,
            superseded_by TEXT,
            last_accessed_at DOUBLE PRECISION,
            access_count BIGINT NOT NULL DEFAULT 0,
            status TEXT NOT NULL,
            embedding_model TEXT,
            attribute TEXT,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX memories_owner_time ON memories (owner, status, observed_at);
        CREATE INDEX memories_owner_session ON memories (owner, session_id, rowid);
        CREATE INDEX memories_attribute ON memories (owner, kind, attribute)
            WHERE attribute IS NOT NULL;
        CREATE INDEX memories_content ON memories USING hash (content);  -- any length
        CREATE INDEX memories_superseded ON memories (superseded_by)
            WHERE superseded_by IS NOT NULL;
        CREATE TABLE derivations (
            child TEXT NOT NULL,
            parent TEXT NOT NULL,
            PRIMARY KEY (child, parent)
        );
        CREATE INDEX derivations_parent ON derivations (parent);
        CREATE TABLE vectors (
            key BIGINT PRIMARY KEY,
            owner TEXT NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vec vector NOT NULL
        );
        CREATE INDEX vectors_owner ON vectors (owner);
        CREATE TABLE keyword_docs (
            key BIGINT PRIMARY KEY,
            owner TEXT NOT NULL,
            text TEXT NOT NULL,
            context TEXT NOT NULL
        );
        CREATE INDEX keyword_docs_owner ON keyword_docs (owner);
        CREATE TABLE keyword_log (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            owner TEXT NOT NULL,
            key BIGINT NOT NULL
        );
        CREATE INDEX keyword_log_owner ON keyword_log (owner, seq);
        CREATE TABLE receipts (
            id TEXT PRIMARY KEY,
            at DOUBLE PRECISION NOT NULL,
            owner TEXT,
            criteria TEXT NOT NULL,
            deleted_ids TEXT NOT NULL,
            derived_ids TEXT NOT NULL
        );
        CREATE TABLE working_memory (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            owner TEXT NOT NULL,
            session_id TEXT NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            speaker TEXT,
            tool_name TEXT,
            tokens INTEGER NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX working_memory_session ON working_memory (owner, session_id, seq);
        CREATE INDEX working_memory_expiry ON working_memory (expires_at)
        """,
    ),
]


class _Conn:
    """A psycopg connection that takes the shared SQL's ``?`` placeholders."""

    def __init__(self, conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        self.raw = conn

    def execute(self, sql: str, params: Any = (), /) -> Cursor:
        return self.raw.execute(_pg(sql), params)

    def executemany(self, sql: str, params: Any, /) -> None:
        with self.raw.cursor() as cur:
            cur.executemany(_pg(sql), params)


def _pg(sql: str) -> str:
    # The stores' SQL holds no literal ?, and writes a literal % as %% (psycopg's way).
    return sql.replace("?", "%s")


class PostgresStore(SQLStore):
    """Long-term and working memory in a PostgreSQL database with pgvector."""

    def __init__(
        self,
        url: str,
        *,
        index_dir: Path | None = None,
        text: TextIndexing | None = None,
        log_keep: int = 1_000_000,
        keyword_cache_docs: int | None = None,
        hnsw_threshold: int = 20_000,
    ) -> None:
        self._url = url
        self._hnsw_threshold = hnsw_threshold
        self._added = 0  # memories this process added since the statistics were taken
        self._closed = False
        self._conn = self._connect()
        try:
            self._migrate()
        except psycopg.Error as exc:
            self._conn.raw.close()
            raise StoreError(f"cannot set up the PostgreSQL store: {_first_line(exc)}") from exc
        super().__init__(
            index_dir=index_dir,
            text=text,
            log_keep=log_keep,
            keyword_cache_docs=keyword_cache_docs,
        )
        self._analyzed = self._planned_rows()

    def _connect(self) -> _Conn:
        try:
            conn = psycopg.connect(self._url, autocommit=True, connect_timeout=10)
            conn.execute(f"SET hnsw.ef_search = {_EF_SEARCH}")  # pgvector's, when it loads
            return _Conn(conn)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL: {_first_line(exc)}") from exc

    def _live(self) -> _Conn:
        """The connection; a new one if the last broke (a restart, a failover): the call
        that met the break failed, the next one goes through. Under ``_lock``."""
        if self._conn.raw.closed and not self._closed:
            self._conn = self._connect()
        return self._conn

    def _migrate(self) -> None:
        raw = self._conn.raw
        with raw.transaction():
            raw.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
            raw.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
            )
            done = {r[0] for r in raw.execute("SELECT version FROM schema_migrations")}
            for version, sql in MIGRATIONS:
                if version in done:
                    continue
                for statement in (part.strip() for part in sql.split(";")):
                    if statement:
                        raw.execute(statement)
                raw.execute(
                    "INSERT INTO schema_migrations VALUES (%s, extract(epoch FROM now()))",
                    (version,),
                )

    def close(self) -> None:
        self._keywords.close()  # catches up from the database first: not under the lock
        with self._lock:
            self._closed = True
            self._conn.raw.close()

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        with self._lock:
            conn = self._live()
            try:
                with conn.raw.transaction():
                    yield conn
            except psycopg.Error as exc:
                raise StoreError(f"store write failed: {_first_line(exc)}") from exc

    def _hold(self, conn: Connection, owners: Sequence[str]) -> None:
        # in a sorted order, so two writers of overlapping owners cannot deadlock
        for owner in owners:
            conn.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (_OWNER_LOCKS, owner))

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._live().execute(sql, params).fetchall()
            except psycopg.Error as exc:
                raise StoreError(f"store query failed: {_first_line(exc)}") from exc

    def _among(self, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return "= ANY(?)", [list(values)]  # one statement text: prepared once, planned once

    def _log_order(self, conn: Connection) -> None:
        # Taken last, after the rows and vectors (and pgvector's HNSW inserts, the slow
        # part) are written, so writers overlap but for their log appends and commits;
        # the appends need no row another writer may hold: no deadlock.
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_LOG_LOCK,))

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        with self._lock:
            raw = self._live().raw
            try:
                with raw.transaction():
                    raw.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    yield
            except psycopg.Error as exc:
                raise StoreError(f"store query failed: {_first_line(exc)}") from exc

    def _log_head(self, log: str) -> int:
        # Writers commit in seq order (one lock), so the largest visible seq is a head
        # no later commit can fall behind; pruning keeps the newest entries.
        return int(self._read(f"SELECT coalesce(max(seq), 0) FROM {log}")[0][0])

    def _after_write(self, added: int) -> None:
        """Also refresh the planner's statistics once this process has added a tenth as
        many memories (at least 100) as they counted. Until autovacuum came round (a
        minute or more), statistics taken when the tables were small, or before an
        owner's first writes, made the planner scan every memory for each vector."""
        super()._after_write(added)
        self._added += added
        if added and self._added >= max(100, self._analyzed // 10):
            with self._lock:
                try:
                    self._live().execute("ANALYZE memories, vectors")
                except psycopg.Error:
                    return  # statistics only: autovacuum takes them in time anyway
            self._analyzed, self._added = self._planned_rows(), 0

    def _planned_rows(self) -> int:
        """How many memories the planner's statistics count (0 if never taken)."""
        rows = self._read("SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass")
        return max(0, int(rows[0][0]))

    def _size_bytes(self) -> int:
        # hindsight's tables with their indexes and TOAST, not the whole database: it
        # may hold other applications' tables too
        return int(
            self._read(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace "
                "AND c.relname = ANY(?)",
                (list(_TABLES),),
            )[0][0]
        )

    # -- vectors: a pgvector column, searched by the database ----------------------
    def _bound(self, model_id: str, dimension: int) -> None:
        """Keep one HNSW index, on this dimension (a cast: the column has none)."""
        name = f"vectors_hnsw_{dimension}"
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATE_LOCK,))  # servers starting
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

    def finish_rebind(self) -> None:
        super().finish_rebind()
        if self._model is not None and self._dimension is not None:
            self._bound(self._model, self._dimension)

    def _put_vector(
        self, conn: Connection, key: int, memory: Memory, vector: npt.NDArray[np.float32]
    ) -> None:
        self._check_vector(vector)
        conn.execute(
            "INSERT INTO vectors (key, owner, model, dim, vec) VALUES (?, ?, ?, ?, ?::vector) "
            "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, model = excluded.model, "
            "dim = excluded.dim, vec = excluded.vec",
            (key, memory.owner, memory.embedding_model or "", self._dimension, _text(vector)),
        )

    def _drop_vector(self, conn: Connection, key: int, owner: str) -> None:
        conn.execute("DELETE FROM vectors WHERE key = ?", (key,))

    def _forgot(self, owners: set[str]) -> None:
        for owner in owners:  # a saved keyword index holds words of what was forgotten
            self._keywords.drop_saved(owner)

    def vector_search(
        self, flt: Filter, query: npt.NDArray[np.float32], k: int
    ) -> list[tuple[str, float]]:
        ef = min(1000, max(_EF_SEARCH, 2 * k))  # HNSW's candidate list: twice what is asked
        with self._lock:
            try:
                conn = self._live()
                if self.searched_exactly(flt):
                    rows = conn.execute(*self.vector_query(flt, query, k, exact=True)).fetchall()
                else:
                    hnsw = self.vector_query(flt, query, k, exact=False)
                    if ef == _EF_SEARCH:  # the connection's own setting: one round trip
                        rows = conn.execute(*hnsw).fetchall()
                    else:
                        with conn.raw.transaction():
                            conn.execute("SELECT set_config('hnsw.ef_search', ?, true)", (str(ef),))
                            rows = conn.execute(*hnsw).fetchall()
                    if len(rows) < k:  # an HNSW pass the filter thinned: redo it exactly
                        exact = self.vector_query(flt, query, k, exact=True)
                        rows = conn.execute(*exact).fetchall()
            except psycopg.Error as exc:
                raise StoreError(f"vector search failed: {_first_line(exc)}") from exc
        return [(mid, float(sim)) for mid, sim in rows]

    def vector_query(
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
        among, owners = self._among(flt.owners)
        where, params = f"v.owner {among} AND {where}", [*owners, *params]
        distance = f"v.vec::vector({dim}) <=> ?::vector({dim})"
        order = f"({distance}) + 0" if exact else distance
        sql = (
            f"SELECT m.id, 1 - ({distance}) FROM vectors v JOIN memories m ON m.rowid = v.key "
            f"WHERE {where} AND v.dim = ? ORDER BY {order} LIMIT ?"
        )
        q = _text(query)
        return sql, (q, *params, dim, q, k)

    def searched_exactly(self, flt: Filter) -> bool:
        """Whether a vector search within ``flt`` goes exact from the start: its owners
        are under ``hnsw_threshold`` memories together, as the embedded store searches
        them. Their sizes are what the keyword index last saw (no query); an owner it
        does not hold yet takes the HNSW path, redone exactly if it comes back short."""
        sizes = [self._keywords.size(owner) for owner in flt.owners]
        return None not in sizes and sum(s or 0 for s in sizes) < self._hnsw_threshold


def _text(vector: npt.NDArray[np.float32]) -> str:
    """pgvector's text form, which needs no client-side adapter."""
    return "[" + ",".join(map(str, np.asarray(vector, dtype=np.float32).tolist())) + "]"


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
