"""The operations for looking after the memory system: the review queue, the audit log,
LLM usage, background jobs, maintenance and the doctor."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from hindsight import views
from hindsight.client.wire import _Call, iso, read_memories, review_path
from hindsight.guard.review import ReviewItem
from hindsight.jobs.kinds import JobQueue
from hindsight.lifecycle import MaintainReport
from hindsight.models import ForgetReceipt, Memory
from hindsight.store import AuditEntry, UsageRow


class AdminOps:
    """Each operation on the system's upkeep: the library's signature in, its HTTP request
    and reader out."""

    @staticmethod
    def maintain(as_of: datetime | str | None = None) -> _Call[MaintainReport]:
        """Run the maintenance pass over every owner, as at ``as_of`` (default: the
        server's now); needs a key that writes every owner."""
        return _Call(
            "POST", "/v1/maintain", lambda data: MaintainReport(**data), body={"as_of": as_of}
        )

    @staticmethod
    def review_queue(
        owner: str | None = None, *, limit: int = 50, offset: int = 0
    ) -> _Call[list[ReviewItem]]:
        """What the guard held (quarantined or pending review), newest first, each with
        the memories it conflicts with: of ``owner``, or of every owner."""

        def read(data: Any) -> list[ReviewItem]:
            return [views.review_item_from(item) for item in data["items"]]

        params = {"owner": owner, "limit": limit, "offset": offset}
        return _Call("GET", "/v1/review", read, params=params)

    @staticmethod
    def approve(memory_id: str) -> _Call[list[Memory]]:
        """Make a held memory active as if it had passed the guard (with what was held
        with it); returns them, the memory first."""
        return _Call("POST", review_path(memory_id, "approve"), read_memories("memories"))

    @staticmethod
    def reject(
        memory_id: str, *, forget: bool | None = None
    ) -> _Call[list[Memory] | ForgetReceipt]:
        """Turn down a held memory (with what was held with it): kept as ``rejected``
        history, or forgotten (with its receipt) when ``forget`` (by default the
        server's ``on_reject``) says so."""

        def read(data: Any) -> list[Memory] | ForgetReceipt:
            if "memories" in data:
                return [views.memory_from(m) for m in data["memories"]]
            return views.receipt_from(data)

        return _Call("POST", review_path(memory_id, "reject"), read, body={"forget": forget})

    @staticmethod
    def audit(
        owner: str | None = None,
        *,
        principal: str | None = None,
        action: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> _Call[list[AuditEntry]]:
        """Audit entries, newest first, filtered by owner, who, what and when (needs an
        audit key); ``before_seq`` pages back."""

        def read(data: Any) -> list[AuditEntry]:
            return [views.audit_entry_from(e) for e in data["entries"]]

        params = {
            "owner": owner,
            "principal": principal,
            "action": action,
            "since": iso(since),
            "until": iso(until),
            "limit": limit,
            "before_seq": before_seq,
        }
        return _Call("GET", "/v1/audit", read, params=params)

    @staticmethod
    def usage(
        owner: str | None = None, *, since: datetime | str | None = None
    ) -> _Call[list[UsageRow]]:
        """LLM use (calls, failures, retries, dropped answers, tokens, cost) by owner,
        operation and model, at or after ``since``: of ``owner``, or of every owner."""

        def read(data: Any) -> list[UsageRow]:
            return [views.usage_row_from(r) for r in data["usage"]]

        return _Call("GET", "/v1/usage", read, params={"owner": owner, "since": iso(since)})

    @staticmethod
    def jobs(
        owner: str | None = None, *, states: Sequence[str] | None = None, limit: int = 50
    ) -> _Call[JobQueue]:
        """The background job queue: counts by state and the latest jobs, newest first;
        of ``owner``, or of every owner."""
        params = {"owner": owner, "state": list(states) if states else None, "limit": limit}
        return _Call("GET", "/v1/jobs", views.job_queue_from, params=params)

    @staticmethod
    def verify_audit() -> _Call[dict[str, Any]]:
        """Check the audit log's hash chain: ``{"entries": n, "intact": bool,
        "broken_at": seq or None}`` (needs an audit key that reads every owner)."""
        return _Call("GET", "/v1/audit/verify", dict)

    @staticmethod
    def doctor(*, check_endpoints: bool = True) -> _Call[dict[str, Any]]:
        """What the server is configured with and whether each endpoint answers (see
        :mod:`hindsight.doctor`); never a key. Needs a key that reads every owner."""
        return _Call("GET", "/v1/doctor", dict, params={"check_endpoints": check_endpoints})
