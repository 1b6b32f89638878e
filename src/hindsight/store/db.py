"""One SQL database: its connection, lock and transactions, and how its dialect differs.

The store (:mod:`hindsight.store.sql`), its working memory
(:mod:`hindsight.store.working`) and its vector backend (:mod:`hindsight.store.vectors`)
share one :class:`Database`: a write of the store and its vectors is one transaction.
SQLite (:mod:`hindsight.store.sqlite`) and PostgreSQL (:mod:`hindsight.store.postgres`)
implement it. The store owns it: closing the store closes it.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar, Protocol

from hindsight.errors import StoreError


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the shared code asks of a database connection inside a transaction."""

    def execute(self, sql: str, params: Any = ..., /) -> Cursor: ...
    def executemany(self, sql: str, params: Any, /) -> Any: ...


class Database(abc.ABC):
    """A connection used under one lock (thread-safe), with the schema migrated.

    SQL given to it uses ``?`` placeholders and syntax both databases take.
    """

    vector_backend: ClassVar[str]  # the one that fits it, a name in vector_backends
    by_key: ClassVar[str] = ""  # how a query says "look rows up by key, do not scan an owner's"

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.held: Connection | None = None  # the transaction of exclusive(), if open

    @contextmanager
    def tx(self, read_back: bool = True) -> Iterator[Connection]:
        """One write transaction, all or nothing (see `log_order` for what it orders);
        inside :meth:`exclusive`, the transaction it holds open. ``read_back=False``:
        this process's reads need not see it at once (a bookkeeping write, such as
        the audit log; a read replica that lags it may still answer them)."""
        with self.lock:
            if self.held is not None:
                yield self.held
                return
            with self._begin(read_back) as conn:
                yield conn

    @contextmanager
    def exclusive(self, owners: Sequence[str]) -> Iterator[None]:
        """One transaction that holds ``owners`` (sorted) for this writer until it ends;
        every :meth:`tx` of this thread inside it joins it, other threads wait."""
        with self.lock:
            if self.held is not None:
                raise StoreError("exclusive() does not nest")
            with self._begin() as conn:
                self.hold(conn, owners)
                self.held = conn
                try:
                    yield
                finally:
                    self.held = None

    @abc.abstractmethod
    def _begin(self, read_back: bool = True) -> AbstractContextManager[Connection]:
        """A write transaction, under ``lock`` (``read_back``: see :meth:`tx`)."""

    def hold(self, conn: Connection, owners: Sequence[str]) -> None:  # noqa: B027 - a hook
        """In a write transaction: keep other processes' writers of these owners waiting
        until it ends. (SQLite: already so, one writer at a time.)"""

    @abc.abstractmethod
    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    @abc.abstractmethod
    def snapshot(self) -> AbstractContextManager[None]:
        """Reads inside it see one state of the database (a log head and its rows)."""

    @abc.abstractmethod
    def log_head(self, log: str) -> int:
        """The newest committed seq of a change log (0 if none)."""

    @abc.abstractmethod
    def size_bytes(self) -> int: ...

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """Which database and where, for ``hindsight doctor``: never a user or password."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def searching(self) -> AbstractContextManager[object]:
        """Held around a search of an in-process index that reads the database as it
        goes (an index catches up under its own lock). Here ``lock``, which every read
        takes too, so that it is always taken before an index's: a writer holds it while
        it searches one. A database whose reads take no lock overrides it."""
        return self.lock

    def month_of(self, column: str) -> str:
        """SQL giving the UTC month ("2026-05") of a time column (seconds since the epoch);
        PostgreSQL overrides it."""
        return f"strftime('%Y-%m', {column}, 'unixepoch')"

    def among(self, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """SQL saying "is one of these values", and its parameters (SQLite: ``IN (?, ...)``;
        PostgreSQL overrides it with one array, so the statement's text stays the same)."""
        return f"IN ({marks(values)})", list(values)

    def log_order(self, conn: Connection) -> None:  # noqa: B027 - a hook, empty by default
        """Called in a write transaction before it appends to ``keyword_log``: from here
        to its commit no other writer may append, so entries commit in seq order and a
        cache that has read up to a seq has missed nothing before it. (SQLite: already
        so, one writer at a time.)"""

    def wrote(self, added: int) -> None:  # noqa: B027 - a hook, empty by default
        """A write that added ``added`` memories has committed."""

    def pruned(self, log: str) -> int:
        """The newest seq pruned from ``log`` (0 if none): changes after it are all there."""
        row = self.read("SELECT value FROM meta WHERE key = ?", (f"{log}_pruned",))
        return int(row[0][0]) if row else 0


def marks(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))
