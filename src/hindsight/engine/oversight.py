"""The engine's oversight: the review queue (approve, reject), the audit log, the LLM
check run at once, and LLM usage. Part of :class:`hindsight.Hindsight` (its base class),
kept in a file of its own so that the facade reads in one sitting."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from hindsight import validate
from hindsight.errors import LLMUnavailableError, PermissionDeniedError
from hindsight.guard import review
from hindsight.guard.assess import Assessed
from hindsight.guard.review import ReviewItem
from hindsight.models import MAX_K, ForgetReceipt, Memory
from hindsight.store import AuditEntry, UsageRow
from hindsight.write.door import Operation, WriteContext

if TYPE_CHECKING:
    from hindsight.access import Principal
    from hindsight.config import Settings
    from hindsight.jobs.runner import Work
    from hindsight.llm.meter import Meter
    from hindsight.store import Store
    from hindsight.write.door import Door


class _Engine(Protocol):
    """What oversight uses of the engine."""

    principal: Principal
    settings: Settings
    store: Store
    llm: Meter
    _door: Door
    _work: Work

    def _readable(self, owner: object) -> str: ...
    def _context(self, operation: Operation, owner: str) -> WriteContext: ...
    def _all_owners(self) -> list[str]: ...
    def get(self, memory_id: str) -> Memory: ...
    def forget(self, memory_id: str | None = None) -> ForgetReceipt: ...


class Oversight:
    """Review, audit and usage (see :class:`hindsight.Hindsight`)."""

    def review_queue(
        self: _Engine, owner: str | None = None, *, limit: int = 50, offset: int = 0
    ) -> list[ReviewItem]:
        """What the guard held (quarantined or pending review), newest first, each with
        the memories it conflicts with: of ``owner``, or (for a caller that reads
        every owner) of all."""
        limit = validate.positive(limit, field="limit", maximum=MAX_K)
        owners = [self._readable(owner)] if owner is not None else self._all_owners()
        return review.pending(self.store, owners, limit=limit, offset=validate.offset(offset))

    def approve(self: _Engine, memory_id: str) -> list[Memory]:
        """Make a held memory active as if it had passed the guard (with what was held
        with it); returns them, the memory first. For an admin, a rejected memory too
        (undoing the rejection, with what was rejected with it).

        Needs a reviewer (``"review": true``; the local user is one) with write access to
        its owner, and not the one that wrote it (:class:`PermissionDeniedError`): the
        writer is not the reviewer. An id the caller may not read is unknown."""
        context = self._context(Operation.REVIEW, self.get(memory_id).owner)
        return review.decide(self._door, context, memory_id, approve=True)

    def reject(
        self: _Engine, memory_id: str, *, forget: bool | None = None
    ) -> list[Memory] | ForgetReceipt:
        """Turn down a held memory (with what was held with it): kept as ``rejected``
        history, or forgotten (with its receipt) when ``forget`` (by default
        ``settings.on_reject``) says so. Needs a reviewer with write access to its owner
        (it may be the writer: turning down releases nothing)."""
        context = self._context(Operation.REVIEW, self.get(memory_id).owner)
        decided = review.decide(self._door, context, memory_id, approve=False)
        if forget if forget is not None else self.settings.on_reject == "forget":
            return self.forget(memory_id)
        return decided

    def audit(
        self: _Engine,
        owner: str | None = None,
        *,
        principal: str | None = None,
        action: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> list[AuditEntry]:
        """Audit entries, newest first: of ``owner`` (or every owner, for a caller that
        reads them all), filtered by who did it, what and when. Needs a key with
        ``"audit": true``; ``before_seq`` pages back."""
        if not self.principal.audit:
            raise PermissionDeniedError(f"key {self.principal.name!r} may not read the audit log")
        owners = [self._readable(owner)] if owner is not None else None
        if owners is None:
            self.principal.check_read_all()
        return self.store.audit(
            owners=owners,
            principal=principal,
            action=action,
            since=validate.timestamp(since, field="since"),
            until=validate.timestamp(until, field="until"),
            limit=validate.positive(limit, field="limit", maximum=MAX_K),
            before_seq=None
            if before_seq is None
            else validate.positive(before_seq, field="before_seq", maximum=2**62),
        )

    def verify_audit(self: _Engine) -> dict[str, Any]:
        """Check the audit log's hash chain: ``{"entries": n, "intact": bool,
        "broken_at": seq or None}``. Needs an audit key that reads every owner."""
        if not self.principal.audit:
            raise PermissionDeniedError(f"key {self.principal.name!r} may not read the audit log")
        self.principal.check_read_all()
        checked, broken = self.store.verify_audit()
        return {"entries": checked, "intact": broken is None, "broken_at": broken}

    def assess(self: _Engine, owner: str) -> Assessed:
        """Run the LLM check of ``owner``'s memories now, in this thread: the model judges
        the held memories and the recent untrusted ones not judged before against the
        owner's trusted memories, and each verdict is filed in the review queue (the
        memory's ``review.assessment``). One judged "contradicts" or "suspicious" that was
        active is held for review; nothing is ever approved or released
        (:mod:`hindsight.guard.assess`). Writes queue the same check by themselves.
        Needs write access to ``owner`` and an LLM (:class:`LLMUnavailableError`)."""
        context = self._context(Operation.ASSESS, validate.owner(owner))
        if not self.llm.configured:
            raise LLMUnavailableError(
                "the LLM check needs an LLM: set llm_provider (HINDSIGHT_LLM_PROVIDER)"
            )
        return self._work.assessor.run(context)

    def usage(
        self: _Engine, owner: str | None = None, *, since: datetime | str | None = None
    ) -> list[UsageRow]:
        """LLM use (calls, failures, retries, dropped answers, prompt and completion
        tokens, cost) by owner, operation and model, at or after ``since``: of ``owner``,
        or of every owner for a caller that reads them all."""
        owners = None
        if owner is None:
            self.principal.check_read_all()
        else:
            owners = [self._readable(owner)]
        return self.store.usage(owners=owners, since=validate.timestamp(since, field="since"))

    def _all_owners(self: _Engine) -> list[str]:
        self.principal.check_read_all()
        return self.store.owners()
