"""Long-term memory's rows in a SQL store: a write and all it records in one
transaction, and reads by id or filter: the :class:`~hindsight.store.base.Memories` part
of the store (``get`` and ``exclusive`` are :class:`~hindsight.store.sql.core.SQLCore`'s,
which every part uses)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from hindsight.errors import StoreError
from hindsight.models import Kind, Memory
from hindsight.store import audit as audit_log
from hindsight.store import queue as job_queue
from hindsight.store.db import Connection
from hindsight.store.records import AuditEntry, Filter, QueuedJob, Request
from hindsight.store.rows import COLUMNS, N_COLUMNS, filter_sql, row_of
from hindsight.store.sql.core import SQLCore


class SQLMemories(SQLCore):
    """Writing memories and reading them back."""

    def write(
        self,
        *,
        insert: Sequence[tuple[Memory, npt.NDArray[np.float32] | None]] = (),
        update: Sequence[tuple[Memory, npt.NDArray[np.float32] | None]] = (),
        request: Request | None = None,
        audit: Sequence[AuditEntry] = (),
        jobs: Sequence[QueuedJob] = (),
    ) -> None:
        touched: set[int] = set()  # rows whose keyword-index text must be (re)built
        with self.db.tx() as conn:
            if request is not None:  # the key first: a second writer of it fails here
                conn.execute(
                    "INSERT INTO requests (owners, principal, request_id, digest, result, at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        request.owners,
                        request.principal,
                        request.request_id,
                        request.digest,
                        json.dumps(request.result),
                        request.at.timestamp(),
                    ),
                )
            for memory, vector in insert:
                key = conn.execute(
                    f"INSERT INTO memories ({COLUMNS}) VALUES ({', '.join('?' * N_COLUMNS)}) "
                    "RETURNING rowid",
                    row_of(memory),
                ).fetchone()[0]
                if vector is not None:  # else the embedding endpoint is down: a job makes it
                    self._put_vector(conn, key, memory, vector)
                self._link(conn, memory)
                touched.add(key)
            for memory, maybe_vector in update:
                row = conn.execute(
                    "SELECT rowid FROM memories WHERE id = ?", (memory.id,)
                ).fetchone()
                if row is None:
                    raise StoreError(f"memory {memory.id} vanished during the update")
                key = row[0]
                assignments = ", ".join(f"{c.strip()} = ?" for c in COLUMNS.split(","))
                conn.execute(
                    f"UPDATE memories SET {assignments} WHERE rowid = ?", (*row_of(memory), key)
                )
                conn.execute("DELETE FROM derivations WHERE child = ?", (memory.id,))
                self._link(conn, memory)
                if maybe_vector is not None:
                    self._put_vector(conn, key, memory, maybe_vector)
                touched.add(key)
            job_queue.insert(conn, jobs)
            sessions = self._texts.sessions(conn, touched)  # read once: the neighbours' too
            self._texts.reindex(conn, touched | self._texts.neighbours(sessions, touched), sessions)
            audit_log.append(self.db, conn, audit)  # last: it takes the logs' write order
        self._wrote(added=len(insert))

    def request(self, owners: str, principal: str, request_id: str) -> Request | None:
        rows = self.db.read(
            "SELECT digest, result, at FROM requests "
            "WHERE owners = ? AND principal = ? AND request_id = ?",
            (owners, principal, request_id),
        )
        if not rows:
            return None
        digest, result, at = rows[0]
        when = datetime.fromtimestamp(at, tz=UTC)
        return Request(owners, principal, request_id, digest, json.loads(result), when)

    def prune_requests(self, before: datetime) -> int:
        with self.db.tx() as conn:
            return int(
                conn.execute("DELETE FROM requests WHERE at < ?", (before.timestamp(),)).rowcount
            )

    @staticmethod
    def _link(conn: Connection, memory: Memory) -> None:
        conn.executemany(
            "INSERT INTO derivations (child, parent) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(memory.id, parent) for parent in memory.provenance.derived_from],
        )

    def list_memories(self, flt: Filter, *, limit: int, offset: int = 0) -> list[Memory]:
        where, params = filter_sql(flt)
        rows = self.db.read(
            f"SELECT {COLUMNS} FROM memories m WHERE {where} "
            "ORDER BY observed_at DESC, rowid DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return self._memories(rows)

    def count(self, flt: Filter) -> int:
        where, params = filter_sql(flt)
        return int(self.db.read(f"SELECT count(*) FROM memories m WHERE {where}", params)[0][0])

    def iterate(self, flt: Filter) -> Iterator[Memory]:
        where, params = filter_sql(flt)
        last = -1
        while True:
            rows = self.db.read(
                f"SELECT rowid, {COLUMNS} FROM memories m WHERE {where} AND rowid > ? "
                "ORDER BY rowid LIMIT 500",
                (*params, last),
            )
            if not rows:
                return
            last = rows[-1][0]
            yield from self._memories([r[1:] for r in rows])

    def find_attribute(self, owner: str, kind: Kind, attribute: str) -> list[Memory]:
        rows = self.db.read(
            f"SELECT {COLUMNS} FROM memories WHERE owner = ? AND kind = ? AND attribute = ? "
            "AND status = 'active' AND valid_to IS NULL ORDER BY observed_at",
            (owner, kind.value, attribute),
        )
        return self._memories(rows)

    def find_exact(self, owner: str, kind: Kind, content: str) -> Memory | None:
        rows = self.db.read(
            f"SELECT {COLUMNS} FROM memories WHERE owner = ? AND kind = ? AND content = ? "
            "AND status = 'active' AND valid_to IS NULL LIMIT 1",
            (owner, kind.value, content),
        )
        found = self._memories(rows)
        return found[0] if found else None

    def record_access(self, hits: dict[str, int], at: datetime) -> None:
        if not hits:
            return
        with self.db.tx(read_back=False) as conn:  # rows in id order: flushes lock in one order
            conn.executemany(
                "UPDATE memories SET access_count = access_count + ?, last_accessed_at = ? "
                "WHERE id = ?",
                [(hits[mid], at.timestamp(), mid) for mid in sorted(hits)],
            )
