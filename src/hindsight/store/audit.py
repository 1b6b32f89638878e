"""The audit log's rows: appended in the transaction of what they record, chained by hash.

Each entry's ``hash`` is the sha256 of the previous entry's hash and its own fields (as
canonical JSON), so an entry deleted, inserted or edited anywhere but at the end breaks
the chain from there on; :func:`verify` finds the first that does. Appends take the
change logs' write order (:meth:`~hindsight.store.db.Database.log_order`), so two
processes never chain onto the same entry. Pruning by age keeps the chain checkable:
the hash of the newest pruned entry is kept in ``meta`` as the anchor of the first
remaining one.

Entries hold ids, names and counts, never memory text: what a forget removes does not
live on in the log (a recall's query is kept as a hash).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

from hindsight.store.db import Connection, Database
from hindsight.store.records import AuditEntry

GENESIS: Final = "0" * 64
_ANCHOR: Final = "audit_pruned_hash"
_COLUMNS: Final = "seq, at, principal, owner, action, memory_ids, request_id, detail, prev, hash"


def digest(prev: str, entry: AuditEntry) -> str:
    body = json.dumps(
        [
            entry.at.timestamp(),
            entry.principal,
            entry.owner,
            entry.action,
            list(entry.memory_ids),
            entry.request_id,
            entry.detail,
        ],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(f"{prev}\n{body}".encode()).hexdigest()


def append(db: Database, conn: Connection, entries: Sequence[AuditEntry]) -> None:
    """Chain ``entries`` onto the log, inside the caller's write transaction."""
    if not entries:
        return
    db.log_order(conn)
    row = conn.execute("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    prev = row[0] if row else _anchor(conn)
    for entry in entries:
        current = digest(prev, entry)
        (seq,) = conn.execute(
            "INSERT INTO audit (at, principal, owner, action, memory_ids, request_id, detail, "
            "prev, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (
                entry.at.timestamp(),
                entry.principal,
                entry.owner,
                entry.action,
                json.dumps(list(entry.memory_ids)),
                entry.request_id,
                json.dumps(entry.detail, ensure_ascii=False, default=str),
                prev,
                current,
            ),
        ).fetchone()
        if refs := _refs(entry):
            conn.executemany(
                "INSERT INTO audit_refs (memory_id, seq) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(mid, seq) for mid in refs],
            )
        prev = current


def _refs(entry: AuditEntry) -> set[str]:
    """The memories an entry is about, as ``audit_refs`` indexes them (recalls: none)."""
    if entry.action == "recall":
        return set()
    restored = entry.detail.get("restored", []) if entry.action == "forget" else []
    return {*entry.memory_ids, *(r for r in restored if isinstance(r, str))}


def read(
    db: Database,
    *,
    owners: Sequence[str] | None,
    principal: str | None,
    action: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    before_seq: int | None = None,
) -> list[AuditEntry]:
    """Entries matching every filter given, newest first."""
    clauses, params = [], []
    if owners is not None:
        among, values = db.among(list(owners))
        clauses.append(f"owner {among}")
        params += values
    for column, value in (("principal", principal), ("action", action)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if since is not None:
        clauses.append("at >= ?")
        params.append(since.timestamp())
    if until is not None:
        clauses.append("at <= ?")
        params.append(until.timestamp())
    if before_seq is not None:
        clauses.append("seq < ?")
        params.append(before_seq)
    where = " AND ".join(clauses) or "1 = 1"
    rows = db.read(
        f"SELECT {_COLUMNS} FROM audit WHERE {where} ORDER BY seq DESC LIMIT ?", (*params, limit)
    )
    return [_entry(r) for r in rows]


def about(db: Database, owner: str, ids: Sequence[str], *, limit: int) -> list[AuditEntry]:
    """Entries of ``owner`` (recalls aside) naming one of ``ids`` among their memory ids
    or as a value a forget made current again (``detail["restored"]``), oldest first:
    read through ``audit_refs``, so the cost grows with the entries found, not the log."""
    found: dict[int, AuditEntry] = {}
    for start in range(0, len(ids), 500):
        among, values = db.among(list(ids[start : start + 500]))
        rows = db.read(
            f"SELECT {_COLUMNS} FROM audit WHERE owner = ? AND seq IN "
            f"(SELECT seq FROM audit_refs WHERE memory_id {among}) ORDER BY seq LIMIT ?",
            (owner, *values, limit),
        )
        found.update((int(row[0]), _entry(row)) for row in rows)
    return [found[seq] for seq in sorted(found)][:limit]


def verify(db: Database) -> tuple[int, int | None]:
    """(entries checked, seq of the first whose chain is broken, or None)."""
    anchor = db.read("SELECT value FROM meta WHERE key = ?", (_ANCHOR,))
    prev = anchor[0][0] if anchor else GENESIS
    checked, last = 0, 0
    while True:
        rows = db.read(
            f"SELECT {_COLUMNS} FROM audit WHERE seq > ? ORDER BY seq LIMIT 1000", (last,)
        )
        if not rows:
            return checked, None
        for row in rows:
            entry = _entry(row)
            if row[8] != prev or row[9] != digest(prev, entry):
                return checked, int(row[0])
            prev, last, checked = row[9], int(row[0]), checked + 1


def prune(db: Database, before: datetime) -> int:
    """Drop entries older than ``before``, keeping the chain's anchor; returns how many."""
    cutoff = before.timestamp()
    with db.tx() as conn:
        db.log_order(conn)
        row = conn.execute(
            "SELECT seq, hash FROM audit WHERE at < ? ORDER BY seq DESC LIMIT 1", (cutoff,)
        ).fetchone()
        if row is None:
            return 0
        gone = conn.execute("DELETE FROM audit WHERE seq <= ?", (row[0],)).rowcount
        conn.execute("DELETE FROM audit_refs WHERE seq <= ?", (row[0],))
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (_ANCHOR, row[1]),
        )
    return int(gone)


def _anchor(conn: Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_ANCHOR,)).fetchone()
    return str(row[0]) if row else GENESIS


def _entry(r: tuple[Any, ...]) -> AuditEntry:
    return AuditEntry(
        at=datetime.fromtimestamp(r[1], tz=UTC),
        principal=r[2],
        owner=r[3],
        action=r[4],
        memory_ids=tuple(json.loads(r[5])),
        request_id=r[6],
        detail=json.loads(r[7]),
        seq=int(r[0]),
        hash=r[9],
    )
