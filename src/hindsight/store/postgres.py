"""The production database: PostgreSQL (with pgvector, :mod:`hindsight.store.vectors.pgvector`).

The same tables as the embedded store (:mod:`hindsight.store.sql` holds the SQL
both share). Keyword search uses the same in-process index as the embedded store,
caught up from ``keyword_log``, so any number of stateless API servers can share one
database.

Writers overlap, but each takes one transaction-level advisory lock before it appends to
the keyword change log and holds it to its commit: log sequence numbers then commit in
order, which is what lets a cache trust "everything up to the head".
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from hindsight.errors import StoreError
from hindsight.store.db import Connection, Cursor, Database
from hindsight.store.migrations import POSTGRES, migrate

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
    "requests",
)


@contextmanager
def scratch_schema(url: str) -> Iterator[str]:
    """``url`` with its tables in a new schema of their own (pgvector's from ``public``),
    dropped with everything in it when the block ends: a benchmark's store."""
    schema = f"hindsight_scratch_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    parts = urlsplit(url)
    given = parse_qsl(parts.query)
    options = [v for k, v in given if k == "options"] + [f"-csearch_path={schema},public"]
    query = [(k, v) for k, v in given if k != "options"] + [("options", " ".join(options))]
    try:  # libpq reads %20 as a space, not +
        yield urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))
    finally:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


# TCP keepalives: a database host that vanished (no reset, no FIN) is noticed in about a
# minute instead of the kernel's two hours
_KEEPALIVE: Final = "keepalives=1 keepalives_idle=30 keepalives_interval=10 keepalives_count=3"
_LOG_LOCK = zlib.crc32(b"hindsight writers")  # pg_advisory_xact_lock's key
_SCHEMA_LOCK = zlib.crc32(b"hindsight migrations")
_OWNER_LOCKS = 0x68730000  # the int4 class of per-owner write locks (with hashtext(owner))


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


class PostgresDatabase(Database):
    """One autocommit connection, made anew when it breaks; transactions when asked."""

    vector_backend = "pgvector"

    def __init__(self, url: str, *, statement_timeout: float | None = None) -> None:
        super().__init__()
        self._url = url
        self._session: list[str] = []  # settings every connection gets (see `configure`)
        self._added = 0  # memories this process added since the statistics were taken
        self._closed = False
        self._conn = self._connect()
        try:
            migrate(self._migrating, POSTGRES, real="DOUBLE PRECISION")
        except psycopg.Error as exc:
            self._conn.raw.close()
            raise StoreError(f"cannot set up the PostgreSQL store: {first_line(exc)}") from exc
        self._analyzed = self._planned_rows()
        if statement_timeout is not None:  # a stuck database holds no call longer than this
            self.configure(f"SET statement_timeout = {max(1, round(statement_timeout * 1000))}")

    def _connect(self) -> _Conn:
        try:
            conninfo = psycopg.conninfo.make_conninfo(self._url, connect_timeout=10)
            conn = psycopg.connect(f"{conninfo} {_KEEPALIVE}", autocommit=True)
            for statement in self._session:
                conn.execute(statement)
            return _Conn(conn)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL: {first_line(exc)}") from exc

    def configure(self, statement: str) -> None:
        """Run a session setting (``SET ...``) now and on every connection made later."""
        with self.lock:
            self._session.append(statement)
            try:
                self.live().execute(statement)
            except psycopg.Error as exc:
                raise StoreError(f"store setting failed: {first_line(exc)}") from exc

    def live(self) -> _Conn:
        """The connection; a new one if the last broke (a restart, a failover): the call
        that met the break failed, the next one goes through. Under ``lock``."""
        if self._conn.raw.closed and not self._closed:
            self._conn = self._connect()
        return self._conn

    @contextmanager
    def _migrating(self) -> Iterator[Connection]:
        with self.lock:
            conn = self.live()
            with conn.raw.transaction():
                self.lock_schema(conn)
                yield conn

    @staticmethod
    def lock_schema(conn: Connection) -> None:
        """Wait in this transaction until no other server is changing the schema."""
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))

    def close(self) -> None:
        with self.lock:
            self._closed = True
            self._conn.raw.close()

    @contextmanager
    def _begin(self) -> Iterator[Connection]:
        with self.lock:
            conn = self.live()
            try:
                with conn.raw.transaction():
                    yield conn
            except psycopg.Error as exc:
                raise StoreError(f"store write failed: {first_line(exc)}") from exc

    def hold(self, conn: Connection, owners: Sequence[str]) -> None:
        for owner in owners:  # sorted: two writers of overlapping owners cannot deadlock
            conn.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (_OWNER_LOCKS, owner))

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            try:
                return self.live().execute(sql, params).fetchall()
            except psycopg.Error as exc:
                raise StoreError(f"store query failed: {first_line(exc)}") from exc

    def among(self, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return "= ANY(?)", [list(values)]  # one statement text: prepared once, planned once

    def log_order(self, conn: Connection) -> None:
        # Taken last, after the rows and vectors (and pgvector's HNSW inserts, the slow
        # part) are written, so writers overlap but for their log appends and commits;
        # the appends need no row another writer may hold: no deadlock.
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_LOG_LOCK,))

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        with self.lock:
            if self.held is not None:  # in exclusive()'s transaction: its isolation stays
                yield
                return
            raw = self.live().raw
            try:
                with raw.transaction():
                    raw.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    yield
            except psycopg.Error as exc:
                raise StoreError(f"store query failed: {first_line(exc)}") from exc

    def log_head(self, log: str) -> int:
        # Writers commit in seq order (one lock), so the largest visible seq is a head
        # no later commit can fall behind; pruning keeps the newest entries.
        return int(self.read(f"SELECT coalesce(max(seq), 0) FROM {log}")[0][0])

    def wrote(self, added: int) -> None:
        """Refresh the planner's statistics once this process has added a tenth as many
        memories (at least 100) as they counted. Until autovacuum came round (a minute
        or more), statistics taken when the tables were small, or before an owner's
        first writes, made the planner scan every memory for each vector."""
        self._added += added
        if added and self._added >= max(100, self._analyzed // 10):
            with self.lock:
                try:
                    self.live().execute("ANALYZE memories, vectors")
                except psycopg.Error:
                    return  # statistics only: autovacuum takes them in time anyway
            self._analyzed, self._added = self._planned_rows(), 0

    def _planned_rows(self) -> int:
        """How many memories the planner's statistics count (0 if never taken)."""
        rows = self.read("SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass")
        return max(0, int(rows[0][0]))

    def size_bytes(self) -> int:
        # hindsight's tables with their indexes and TOAST, not the whole database: it
        # may hold other applications' tables too
        return int(
            self.read(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace "
                "AND c.relname = ANY(?)",
                (list(_TABLES),),
            )[0][0]
        )


def first_line(exc: Exception) -> str:
    """An error's first line, for a one-line message."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
