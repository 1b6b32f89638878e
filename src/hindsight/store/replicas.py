"""Hot standbys that take recall's reads (``HINDSIGHT_DATABASE_READ_URL``).

Writes, migrations and every read outside a recall go to the primary. Inside
:func:`replica_reads` (the engine's recall), a read outside a transaction goes to a
standby if that standby has replayed everything this process has seen on the primary:
its own commits and the change-log heads it read there (the *floor*, a WAL position).
So a request reads its own writes, and the process's in-process indexes, which catch up
from change logs, never see a log go backwards. A standby behind the floor, lagging by
more than ``max_lag`` seconds, or failing, is passed over: the read goes to the primary,
and the standby is asked again on a later request (its state at most once a second; a
failed one after :data:`RETRY_SECONDS`).

Each process keeps to one standby while it is usable (which one depends on its pid, so
servers spread over them) and moves to another only when it is not: the floor is only a
lower bound of what a standby read showed, so switching between two standbys could show
an older state.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Protocol
from urllib.parse import parse_qsl, urlsplit

RETRY_SECONDS: Final = 5.0  # a standby that failed is asked again after this
PROBE_SECONDS: Final = 1.0  # a standby's position and lag are asked at most this often
# a standby's WAL position, as a number, and how far its replay lags behind what it
# received (0 when it has replayed all it has: an idle primary sends nothing new)
_PROBE: Final = (
    "SELECT pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
    "ELSE pg_current_wal_lsn() END, '0/0')::bigint, "
    "CASE WHEN NOT pg_is_in_recovery() "
    "OR pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0 "
    "ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) END"
)
# the primary's WAL position, as a number (added to a query the primary runs anyway)
PRIMARY_LSN: Final = "pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint"
_log = logging.getLogger("hindsight.store")
_reading: ContextVar[bool] = ContextVar("hindsight_replica_reads", default=False)


@contextmanager
def replica_reads() -> Iterator[None]:
    """Reads in this block (and in threads started with its context) may go to a standby."""
    token = _reading.set(True)
    try:
        yield
    finally:
        _reading.reset(token)


def reading_replicas() -> bool:
    return _reading.get()


class Pool(Protocol):
    """A standby's connections (the PostgreSQL store's pool): lent, given back, closed."""

    def get(self) -> Any: ...
    def put(self, conn: Any, /) -> None: ...
    def close(self) -> None: ...


@dataclass
class Standby:
    url: str
    pool: Pool
    lsn: int = -1  # replayed, when last asked
    lag: float = 0.0
    asked: float = float("-inf")  # monotonic time of the last probe
    down_until: float = float("-inf")
    error: str | None = None

    @property
    def name(self) -> str:
        """Where it is, without user or password."""
        return where(self.url)


def where(url: str) -> str:
    """A PostgreSQL URL's host, port and database, without user or password."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))  # libpq also takes host and port here
    host = parts.hostname or query.get("host", "localhost")
    return f"{host}:{parts.port or query.get('port', 5432)}{parts.path}"


class Standbys:
    """The standbys of one store, and the floor they must have replayed to be read."""

    def __init__(self, urls: list[str], pool: Callable[[str], Pool], *, max_lag: float) -> None:
        start = os.getpid() % len(urls)
        self._all = [Standby(url, pool(url)) for url in urls[start:] + urls[:start]]
        self._max_lag = max_lag
        self._floor = 0
        self._lock = threading.Lock()

    def saw(self, lsn: int) -> None:
        """The primary showed this process its state at WAL position ``lsn``."""
        with self._lock:
            self._floor = max(self._floor, lsn)

    def pick(self) -> Standby | None:
        """The first standby that may serve a read now, or None (read the primary)."""
        for standby in self._all:
            if self._usable(standby):
                return standby
        return None

    def failed(self, standby: Standby, exc: BaseException) -> None:
        standby.down_until = time.monotonic() + RETRY_SECONDS
        standby.error = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        _log.warning("read replica %s failed; reading the primary: %s", standby.name, exc)

    def _usable(self, standby: Standby) -> bool:
        now = time.monotonic()
        if now < standby.down_until:
            return False
        if now - standby.asked >= PROBE_SECONDS or standby.lsn < self._floor:
            try:
                conn = standby.pool.get()
                try:
                    lsn, lag = conn.execute(_PROBE).fetchone()
                finally:
                    standby.pool.put(conn)
            except Exception as exc:  # whatever it was: pass it over, and say why
                self.failed(standby, exc)
                return False
            standby.lsn, standby.lag, standby.asked = int(lsn), float(lag), now
            standby.error = None
        return standby.lag <= self._max_lag and standby.lsn >= self._floor

    def status(self) -> list[dict[str, Any]]:
        """Each standby as last seen (for status pages; no credentials)."""
        now = time.monotonic()
        return [
            {
                "replica": s.name,
                "usable": now >= s.down_until and s.lag <= self._max_lag,
                "lag_seconds": round(s.lag, 3),
                "behind_floor": s.lsn < self._floor,
                **({"error": s.error} if s.error else {}),
            }
            for s in self._all
        ]

    def close(self) -> None:
        for standby in self._all:
            standby.pool.close()
