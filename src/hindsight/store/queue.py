"""The ``job_queue`` table's rows: background work that outlives the process.

A job is queued in the transaction of the write that calls for it, so the two land
together. A worker leases jobs in one statement per job whose condition is checked
again by the database (``UPDATE ... WHERE`` the job is still free), so two workers,
threads or servers sharing PostgreSQL, never run one job at once; a lease that lapses
(its worker died) frees the job for another.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from hindsight.store.db import Connection, Database, marks
from hindsight.store.records import JOB_STATES, QueuedJob

_COLUMNS: Final = (
    "id, owner, operation, payload, state, attempts, not_before, created_at, updated_at, "
    "holder, lease_until, error, result"
)
# due: waiting and its time has come, or leased to a worker that has gone
_DUE: Final = (
    "((state IN ('pending', 'deferred') AND not_before <= ?) "
    "OR (state = 'running' AND lease_until < ?))"
)


def insert(conn: Connection, jobs: Sequence[QueuedJob]) -> None:
    for job in jobs:
        at = job.created_at.timestamp()
        conn.execute(
            f"INSERT INTO job_queue ({_COLUMNS}) VALUES ({marks(range(13))}) "
            "ON CONFLICT (id) DO NOTHING",
            (
                job.id,
                job.owner,
                job.operation,
                json.dumps(job.payload),
                job.state,
                job.attempts,
                (job.not_before or job.created_at).timestamp(),
                at,
                at,
                None,
                None,
                None,
                None,
            ),
        )


def claim(
    db: Database,
    holder: str,
    *,
    now: datetime,
    until: datetime,
    limit: int,
    owners: Sequence[str] | None,
) -> list[QueuedJob]:
    t = now.timestamp()
    where = _DUE
    params: list[Any] = [t, t]
    if owners is not None:
        if not owners:
            return []
        where += f" AND owner IN ({marks(owners)})"
        params += list(owners)
    found = db.read(
        f"SELECT id FROM job_queue WHERE {where} ORDER BY created_at, id LIMIT ?",
        (*params, limit),
    )
    taken: list[str] = []
    with db.tx() as conn:
        for (job_id,) in found:
            row = conn.execute(
                "UPDATE job_queue SET state = 'running', holder = ?, lease_until = ?, "
                f"attempts = attempts + 1, updated_at = ? WHERE id = ? AND {_DUE} "
                "RETURNING id",
                (holder, until.timestamp(), t, job_id, t, t),
            ).fetchone()
            if row is not None:  # not taken by another worker in the meantime
                taken.append(job_id)
    if not taken:
        return []
    by_id = {j.id: j for j in _read(db, f"WHERE id IN ({marks(taken)})", taken)}
    return [by_id[i] for i in taken]


def finish(
    db: Database,
    job_id: str,
    holder: str,
    *,
    state: str,
    now: datetime,
    not_before: datetime | None,
    error: str | None,
    result: Mapping[str, Any] | None,
    attempts: int | None,
) -> bool:
    if state not in JOB_STATES or state == "running":
        raise ValueError(f"a job cannot finish as {state!r}")
    sets = (
        "state = ?, holder = NULL, lease_until = NULL, updated_at = ?, error = ?, result = ?, "
        "not_before = coalesce(?, not_before)"
    )
    params: list[Any] = [
        state,
        now.timestamp(),
        error,
        None if result is None else json.dumps(result),
        None if not_before is None else not_before.timestamp(),
    ]
    if attempts is not None:
        sets += ", attempts = ?"
        params.append(attempts)
    with db.tx() as conn:
        row = conn.execute(
            f"UPDATE job_queue SET {sets} WHERE id = ? AND holder = ? AND state = 'running' "
            "RETURNING id",
            (*params, job_id, holder),
        ).fetchone()
    return row is not None


def retry(db: Database, *, owners: Sequence[str] | None, now: datetime) -> int:
    where, params = _filter(owners, ["failed"])
    if where is None:
        return 0
    with db.tx() as conn:
        cursor = conn.execute(
            "UPDATE job_queue SET state = 'pending', attempts = 0, error = NULL, "
            f"not_before = ?, updated_at = ? {where}",
            (now.timestamp(), now.timestamp(), *params),
        )
        return int(cursor.rowcount)


def read(
    db: Database,
    *,
    owners: Sequence[str] | None,
    states: Sequence[str] | None,
    limit: int,
) -> list[QueuedJob]:
    where, params = _filter(owners, states)
    if where is None:
        return []
    return _read(db, f"{where} ORDER BY created_at DESC, id DESC LIMIT ?", [*params, limit])


def counts(db: Database, owners: Sequence[str] | None) -> dict[str, int]:
    out = dict.fromkeys(JOB_STATES, 0)
    where, params = _filter(owners, None)
    if where is None:
        return out
    for state, n in db.read(
        f"SELECT state, count(*) FROM job_queue {where} GROUP BY state", params
    ):
        out[state] = int(n)
    return out


def _filter(
    owners: Sequence[str] | None, states: Sequence[str] | None
) -> tuple[str | None, list[Any]]:
    """A WHERE clause for these owners and states (None: no row can match)."""
    where: list[str] = []
    params: list[Any] = []
    for column, values in (("owner", owners), ("state", states)):
        if values is None:
            continue
        if not values:
            return None, []
        where.append(f"{column} IN ({marks(values)})")
        params += list(values)
    return (f"WHERE {' AND '.join(where)}" if where else ""), params


def _read(db: Database, tail: str, params: Sequence[Any]) -> list[QueuedJob]:
    return [_job(r) for r in db.read(f"SELECT {_COLUMNS} FROM job_queue {tail}", params)]


def _job(r: tuple[Any, ...]) -> QueuedJob:
    return QueuedJob(
        id=r[0],
        owner=r[1],
        operation=r[2],
        payload=json.loads(r[3]),
        state=r[4],
        attempts=int(r[5]),
        not_before=_at(r[6]),
        created_at=datetime.fromtimestamp(r[7], tz=UTC),
        updated_at=_at(r[8]),
        holder=r[9],
        lease_until=_at(r[10]),
        error=r[11],
        result=None if r[12] is None else json.loads(r[12]),
    )


def _at(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)
