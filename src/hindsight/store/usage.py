"""The ``llm_usage`` table's rows: one per LLM call, added up on reading.

A row per call (not a running total) keeps ``since`` exact and a write free of
contention: two servers accounting for one owner never update the same row.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from hindsight.store.db import Database, marks
from hindsight.store.records import UsageEntry, UsageRow


def record(db: Database, entry: UsageEntry) -> None:
    with db.tx() as conn:
        conn.execute(
            "INSERT INTO llm_usage (at, owner, operation, provider, model, prompt_tokens, "
            "completion_tokens, failures, retries, dropped, cost, dropped_items) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.at.timestamp(),
                entry.owner,
                entry.operation,
                entry.provider,
                entry.model,
                entry.prompt_tokens,
                entry.completion_tokens,
                int(entry.failed),
                entry.retries,
                int(entry.dropped),
                entry.cost,
                entry.dropped_items,
            ),
        )


def read(
    db: Database, *, owners: Sequence[str] | None = None, since: datetime | None = None
) -> list[UsageRow]:
    where: list[str] = []
    params: list[object] = []
    if owners is not None:
        if not owners:
            return []
        where.append(f"owner IN ({marks(owners)})")
        params += list(owners)
    if since is not None:
        where.append("at >= ?")
        params.append(since.timestamp())
    cond = f"WHERE {' AND '.join(where)}" if where else ""
    # coalesce(model, ''): GROUP BY keeps NULL apart on both databases, but say so
    rows = db.read(
        "SELECT owner, operation, model, count(*), sum(failures), sum(retries), "
        "sum(dropped), sum(prompt_tokens), sum(completion_tokens), sum(cost), "
        "sum(dropped_items) "
        f"FROM llm_usage {cond} GROUP BY owner, operation, model "
        "ORDER BY owner, operation, coalesce(model, '')",
        params,
    )
    return [
        UsageRow(
            owner=r[0],
            operation=r[1],
            model=r[2],
            calls=int(r[3]),
            failures=int(r[4]),
            retries=int(r[5]),
            dropped=int(r[6]),
            prompt_tokens=int(r[7]),
            completion_tokens=int(r[8]),
            cost=None if r[9] is None else float(r[9]),
            dropped_items=int(r[10]),
        )
        for r in rows
    ]


def tokens(db: Database, owner: str, since: datetime) -> int:
    rows = db.read(
        "SELECT coalesce(sum(prompt_tokens + completion_tokens), 0) FROM llm_usage "
        "WHERE owner = ? AND at >= ?",
        (owner, since.timestamp()),
    )
    return int(rows[0][0])
