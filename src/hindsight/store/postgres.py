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

import logging
import threading
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext, suppress
from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from hindsight.errors import StoreError
from hindsight.store.db import Connection, Cursor, Database
from hindsight.store.migrations import POSTGRES, migrate
from hindsight.store.replicas import (
    PRIMARY_LSN,
    Standby,
    Standbys,
    reading_replicas,
    where,
)

try:
    import psycopg
except ImportError as exc:  # pragma: no cover - depends on the install
    raise StoreError(
        "the PostgreSQL store needs psycopg: install hindsight's 'postgres' extra "
        "(from its checkout: pip install '.[postgres]')"
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
_IDLE = psycopg.pq.TransactionStatus.IDLE
_SNAPSHOT: Final = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
_log = logging.getLogger("hindsight.store")


class _Conn:
    """A psycopg connection that takes the shared SQL's ``?`` placeholders."""

    def __init__(self, conn: psycopg.Connection[tuple[Any, ...]], *, standby: bool) -> None:
        self.raw = conn
        self.standby = standby  # a read replica's (hindsight.store.replicas)
        self.applied = 0  # how many of the database's session settings it has run

    def execute(self, sql: str, params: Any = (), /) -> Cursor:
        return self.raw.execute(_pg(sql), params)

    def executemany(self, sql: str, params: Any, /) -> None:
        with self.raw.cursor() as cur:
            cur.executemany(_pg(sql), params)


class _Pool:
    """Up to ``size`` connections, each made when a call first needs it and kept for the
    next (the most recently returned first, so a quiet server keeps few busy). One that
    broke is dropped, and every idle one with it: a break is most often a restart or a
    failover, which took them all, so the call that met it fails and the next one
    connects anew."""

    def __init__(self, connect: Callable[[], _Conn], size: int, *, wait: float) -> None:
        self._connect = connect
        self._size = size
        self._wait = wait  # longest a call waits for a connection to come free
        self._idle: list[_Conn] = []
        self._open = 0  # made and not dropped: idle or in use
        self._freed = threading.Condition()
        self._closed = False

    def get(self) -> _Conn:
        with self._freed:
            while not self._closed and not self._idle and self._open >= self._size:
                if not self._freed.wait(self._wait):
                    raise StoreError(
                        f"all {self._size} database connections stayed busy for "
                        f"{self._wait:g} s (HINDSIGHT_DATABASE_POOL_SIZE)"
                    )
            if self._closed:
                raise StoreError("store query failed: the PostgreSQL store is closed")
            if self._idle:
                return self._idle.pop()
            self._open += 1
        try:
            return self._connect()
        except BaseException:
            self._drop(1)
            raise

    def put(self, conn: _Conn) -> None:
        raw = conn.raw
        broken = raw.closed or raw.broken
        with self._freed:
            if not broken and not self._closed and raw.info.transaction_status == _IDLE:
                self._idle.append(conn)
                self._freed.notify()
                return
            stale: list[_Conn] = []
            if broken:
                stale, self._idle = self._idle, []
        for gone in (conn, *stale):
            gone.raw.close()
        self._drop(1 + len(stale))

    def _drop(self, n: int) -> None:
        with self._freed:
            self._open -= n
            self._freed.notify_all()

    def close(self) -> None:
        """Close the idle connections now, and each one in use when it is returned."""
        with self._freed:
            self._closed = True
            stale, self._idle = self._idle, []
            self._freed.notify_all()
        for conn in stale:
            conn.raw.close()


def _pg(sql: str) -> str:
    # The stores' SQL holds no literal ?, and writes a literal % as %% (psycopg's way).
    return sql.replace("?", "%s")


class PostgresDatabase(Database):
    """A pool of autocommit connections (:class:`_Pool`), transactions when asked.

    Reads take no lock: each statement runs on a connection of the pool, so requests of
    one server read side by side. A write transaction (``tx``, ``exclusive``) and a
    ``snapshot`` keep one connection for the thread that opened them, and every call
    of that thread inside them runs on it (a write's reads see what it wrote). Writes
    of one process still take ``lock``, one at a time, as they did on one connection;
    writers of several processes overlap (see ``hold`` and ``log_order``).
    """

    vector_backend = "pgvector"

    def __init__(
        self,
        url: str,
        *,
        statement_timeout: float | None = None,
        pool_size: int = 8,
        read_urls: Sequence[str] = (),
        read_max_lag: float = 10.0,
    ) -> None:
        super().__init__()
        if pool_size < 2:  # a writer holds one while it waits for an index a reader holds
            raise StoreError(f"the PostgreSQL store needs 2 connections or more, not {pool_size}")
        self._url = url
        self._session: list[str] = []  # settings every connection gets (see `configure`)
        self._added = 0  # memories this process added since the statistics were taken
        self._local = threading.local()  # .conn: this thread's transaction's connection
        wait = statement_timeout or 30.0
        self._pool = _Pool(lambda: self._connect(self._url), pool_size, wait=wait)
        # recall's reads, on hot standbys (never migrated: a standby refuses writes)
        self.standbys = (
            Standbys(
                list(read_urls),
                lambda u: _Pool(lambda: self._connect(u), pool_size, wait=wait),
                max_lag=read_max_lag,
            )
            if read_urls
            else None
        )
        try:
            migrate(self._migrating, POSTGRES, real="DOUBLE PRECISION")
        except psycopg.Error as exc:
            self._pool.close()
            raise StoreError(f"cannot set up the PostgreSQL store: {first_line(exc)}") from exc
        except BaseException:
            self._pool.close()
            raise
        self._analyzed = self._planned_rows()
        if statement_timeout is not None:  # a stuck database holds no call longer than this
            self.configure(f"SET statement_timeout = {max(1, round(statement_timeout * 1000))}")

    def _connect(self, url: str) -> _Conn:
        try:
            conninfo = psycopg.conninfo.make_conninfo(url, connect_timeout=10)
            raw = psycopg.connect(f"{conninfo} {_KEEPALIVE}", autocommit=True)
            conn = _Conn(raw, standby=url != self._url)
            self._configured(conn)
            return conn
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL: {first_line(exc)}") from exc

    def _configured(self, conn: _Conn) -> None:
        """Run the session settings added since the connection was made (or last used)."""
        for statement in self._session[conn.applied :]:
            conn.raw.execute(statement)
            conn.applied += 1

    def configure(self, statement: str) -> None:
        """Run a session setting (``SET ...``) now and on every connection made later."""
        with self.lock:
            self._session.append(statement)
            try:
                with self.connection() as conn:
                    self._configured(conn)
            except psycopg.Error as exc:
                raise StoreError(f"store setting failed: {first_line(exc)}") from exc

    @contextmanager
    def connection(self) -> Iterator[_Conn]:
        """A connection for the block: this thread's transaction's if one is open, else
        one of the pool, made anew if the last broke (a restart, a failover: the call
        that met the break failed, the next one goes through)."""
        current: _Conn | None = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        conn = self._pool.get()
        try:
            self._configured(conn)
            yield conn
        finally:
            self._pool.put(conn)

    @contextmanager
    def _bound(self) -> Iterator[_Conn]:
        """A connection every call of this thread uses until the block ends."""
        with self.connection() as conn:
            outer, self._local.conn = getattr(self._local, "conn", None), conn
            try:
                yield conn
            finally:
                self._local.conn = outer

    def searching(self) -> AbstractContextManager[object]:
        return nullcontext()  # reads take no lock: no order to keep with an index's

    @contextmanager
    def _migrating(self) -> Iterator[Connection]:
        with self.lock, self._bound() as conn, conn.raw.transaction():
            self.lock_schema(conn)
            yield conn

    @staticmethod
    def lock_schema(conn: Connection) -> None:
        """Wait in this transaction until no other server is changing the schema."""
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))

    def close(self) -> None:
        with self.lock:
            self._pool.close()
            if self.standbys is not None:
                self.standbys.close()

    @contextmanager
    def _begin(self, read_back: bool = True) -> Iterator[Connection]:
        with self.lock:
            try:
                with self._bound() as conn:
                    with conn.raw.transaction():
                        yield conn
                    if read_back and self.standbys is not None:  # this process reads its writes
                        (lsn,) = conn.execute(f"SELECT {PRIMARY_LSN}").fetchone()
                        self.standbys.saw(int(lsn))
            except psycopg.Error as exc:
                raise StoreError(f"store write failed: {first_line(exc)}") from exc

    def hold(self, conn: Connection, owners: Sequence[str]) -> None:
        for owner in owners:  # sorted: two writers of overlapping owners cannot deadlock
            conn.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (_OWNER_LOCKS, owner))

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        standby = self._standby()
        if standby is not None:
            try:
                with self._on(standby) as conn:
                    return conn.execute(sql, params).fetchall()
            except (psycopg.Error, StoreError) as exc:  # the primary answers it instead
                self._standby_failed(standby, exc)
        try:
            with self.connection() as conn:
                return conn.execute(sql, params).fetchall()
        except psycopg.Error as exc:
            raise StoreError(f"store query failed: {first_line(exc)}") from exc

    def _standby(self) -> Standby | None:
        """The standby a read outside a transaction goes to now, if any (see
        :mod:`hindsight.store.replicas`)."""
        if self.standbys is None or not reading_replicas():
            return None
        if getattr(self._local, "conn", None) is not None:
            return None  # in a transaction or snapshot: it keeps its connection
        return self.standbys.pick()

    @contextmanager
    def _on(self, standby: Standby) -> Iterator[_Conn]:
        conn = standby.pool.get()
        try:
            self._configured(conn)
            yield conn
        finally:
            standby.pool.put(conn)

    def _standby_failed(self, standby: Standby, exc: BaseException) -> None:
        assert self.standbys is not None
        if isinstance(exc, psycopg.OperationalError | StoreError):
            self.standbys.failed(standby, exc)  # unreachable: passed over for a while
        else:  # e.g. a query cancelled by a conflict with recovery: this one read only
            _log.warning("read on replica %s failed, reading the primary: %s", standby.name, exc)

    @contextmanager
    def reading(self) -> Iterator[_Conn]:
        """A connection for one read outside a transaction: a standby's in a recall
        (:mod:`hindsight.store.replicas`), else as :meth:`connection`. A standby that fails
        here fails this read and is passed over by the next."""
        standby = self._standby()
        if standby is None:
            with self.connection() as conn:
                yield conn
            return
        try:
            with self._on(standby) as conn:
                yield conn
        except (psycopg.Error, StoreError) as exc:
            self._standby_failed(standby, exc)
            raise

    def month_of(self, column: str) -> str:
        return f"to_char(to_timestamp({column}) AT TIME ZONE 'UTC', 'YYYY-MM')"

    def among(self, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return "= ANY(?)", [list(values)]  # one statement text: prepared once, planned once

    def log_order(self, conn: Connection) -> None:
        # Taken last, after the rows and vectors (and pgvector's HNSW inserts, the slow
        # part) are written, so writers overlap but for their log appends and commits;
        # the appends need no row another writer may hold: no deadlock.
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_LOG_LOCK,))

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        if getattr(self._local, "conn", None) is not None:  # in a transaction: it stays
            yield
            return
        try:
            with self._snapshot_conn() as conn:
                outer, self._local.conn = getattr(self._local, "conn", None), conn
                try:
                    yield
                finally:
                    self._local.conn = outer
        except psycopg.Error as exc:
            raise StoreError(f"store query failed: {first_line(exc)}") from exc

    @contextmanager
    def _snapshot_conn(self) -> Iterator[_Conn]:
        """A connection in a read-only, repeatable-read transaction: a standby's in a
        recall, if one may serve and answers (else it is passed over), or the primary's."""
        standby = self._standby()
        if standby is not None:
            opened = ExitStack()
            try:
                conn = opened.enter_context(self._on(standby))
                opened.enter_context(conn.raw.transaction())
                conn.raw.execute(_SNAPSHOT)
            except (psycopg.Error, StoreError) as exc:
                with suppress(psycopg.Error):
                    opened.close()
                self._standby_failed(standby, exc)
            else:
                try:
                    with opened:
                        yield conn
                except psycopg.Error as exc:  # this read fails; the next passes it over
                    self._standby_failed(standby, exc)
                    raise
                return
        with self.connection() as conn, conn.raw.transaction():
            conn.raw.execute(_SNAPSHOT)
            yield conn

    def log_head(self, log: str) -> int:
        # Writers commit in seq order (one lock), so the largest visible seq is a head
        # no later commit can fall behind; pruning keeps the newest entries.
        head = f"SELECT coalesce(max(seq), 0) FROM {log}"
        current: _Conn | None = getattr(self._local, "conn", None)
        if self.standbys is None or (
            current.standby if current is not None else self._standby() is not None
        ):
            return int(self.read(head)[0][0])
        # read on the primary: a standby must have replayed this far before this
        # process reads there, or its indexes would see the log go backwards
        seq, lsn = self.read(f"{head.replace(' FROM', f', {PRIMARY_LSN} FROM')}")[0]
        self.standbys.saw(int(lsn))
        return int(seq)

    def wrote(self, added: int) -> None:
        """Refresh the planner's statistics once this process has added a tenth as many
        memories (at least 100) as they counted. Until autovacuum came round (a minute
        or more), statistics taken when the tables were small, or before an owner's
        first writes, made the planner scan every memory for each vector."""
        self._added += added
        if added and self._added >= max(100, self._analyzed // 10):
            with self.lock:  # one at a time
                try:
                    with self.connection() as conn:
                        conn.execute("ANALYZE memories, vectors")
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

    def describe(self) -> dict[str, Any]:
        standbys = [] if self.standbys is None else self.standbys.status()
        return {"database": "postgresql", "host": where(self._url), "replicas": standbys}


def first_line(exc: Exception) -> str:
    """An error's first line, for a one-line message."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
