"""The logs a SQL store keeps beside memories: the audit log, LLM usage and the job
queue (their rows: :mod:`hindsight.store.audit`, :mod:`hindsight.store.usage`,
:mod:`hindsight.store.queue`), and leases of scheduled work: the
:class:`~hindsight.store.base.AuditLog`, :class:`~hindsight.store.base.UsageLog` and
:class:`~hindsight.store.base.JobQueue` parts of the store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from hindsight.store import audit as audit_log
from hindsight.store import queue as job_queue
from hindsight.store import usage as usage_log
from hindsight.store.records import AuditEntry, QueuedJob, UsageEntry, UsageRow
from hindsight.store.sql.core import SQLCore


class SQLLogs(SQLCore):
    """Audit entries, usage and queued jobs, each kept by its own module's rows."""

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        if entries:
            with self.db.tx(read_back=False) as conn:
                audit_log.append(self.db, conn, entries)

    def audit(
        self,
        *,
        owners: Sequence[str] | None = None,
        principal: str | None = None,
        action: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> list[AuditEntry]:
        return audit_log.read(
            self.db,
            owners=owners,
            principal=principal,
            action=action,
            since=since,
            until=until,
            limit=limit,
            before_seq=before_seq,
        )

    def audit_about(self, owner: str, ids: Sequence[str], *, limit: int) -> list[AuditEntry]:
        return audit_log.about(self.db, owner, ids, limit=limit)

    def verify_audit(self) -> tuple[int, int | None]:
        return audit_log.verify(self.db)

    def prune_audit(self, before: datetime) -> int:
        return audit_log.prune(self.db, before)

    def record_usage(self, entry: UsageEntry) -> None:
        usage_log.record(self.db, entry)

    def usage(
        self, *, owners: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[UsageRow]:
        return usage_log.read(self.db, owners=owners, since=since)

    def tokens_used(self, owner: str, since: datetime) -> int:
        return usage_log.tokens(self.db, owner, since)

    def claim_jobs(
        self,
        holder: str,
        *,
        now: datetime,
        until: datetime,
        limit: int,
        owners: Sequence[str] | None = None,
    ) -> list[QueuedJob]:
        return job_queue.claim(self.db, holder, now=now, until=until, limit=limit, owners=owners)

    def finish_job(
        self,
        job_id: str,
        holder: str,
        *,
        state: str,
        now: datetime,
        not_before: datetime | None = None,
        error: str | None = None,
        result: Mapping[str, Any] | None = None,
        attempts: int | None = None,
    ) -> bool:
        return job_queue.finish(
            self.db,
            job_id,
            holder,
            state=state,
            now=now,
            not_before=not_before,
            error=error,
            result=result,
            attempts=attempts,
        )

    def jobs(
        self,
        *,
        owners: Sequence[str] | None = None,
        states: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[QueuedJob]:
        return job_queue.read(self.db, owners=owners, states=states, limit=limit)

    def retry_jobs(self, *, owners: Sequence[str] | None, now: datetime) -> int:
        return job_queue.retry(self.db, owners=owners, now=now)

    def job_counts(self, owners: Sequence[str] | None = None) -> dict[str, int]:
        return job_queue.counts(self.db, owners)

    def lease(self, name: str, holder: str, *, until: datetime, now: datetime) -> bool:
        # One row of meta, "<until in ms, 16 digits> <holder>": taken when absent, lapsed
        # or the holder's own, in one statement (the database orders two takers). Fixed
        # width digits compare as numbers, in any collation.
        value = f"{int(until.timestamp() * 1000):016d} {holder}"
        with self.db.tx() as conn:
            row = conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                "SET value = excluded.value "
                "WHERE substr(meta.value, 1, 16) < ? OR substr(meta.value, 18) = ? "
                "RETURNING key",
                (f"lease:{name}", value, f"{int(now.timestamp() * 1000):016d}", holder),
            ).fetchone()
        return row is not None
