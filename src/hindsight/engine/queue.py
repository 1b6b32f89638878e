"""The engine's job queue operations: the queue's state, running due jobs now, waiting
for them, queueing failed ones again. Part of :class:`hindsight.Hindsight` (its base
class), kept in a file of its own so that the facade reads in one sitting; the work is
:mod:`hindsight.jobs.runner`'s."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Final, Protocol

from hindsight import validate
from hindsight.errors import ValidationError
from hindsight.jobs.kinds import JobQueue
from hindsight.store import JOB_STATES

if TYPE_CHECKING:
    from hindsight.access import Principal
    from hindsight.jobs.runner import Work
    from hindsight.store import Store

MAX_LISTED: Final = 1_000  # jobs listed at once


class _Engine(Protocol):
    """What the queue's operations use of the engine."""

    principal: Principal
    store: Store
    _work: Work

    def _now(self) -> datetime: ...
    def _readable(self, owner: object) -> str: ...
    def _job_owners(self, owner: str | None) -> list[str] | None: ...


class JobQueueOps:
    """The job queue's operations of :class:`hindsight.Hindsight` (its base class)."""

    def jobs(
        self: _Engine,
        owner: str | None = None,
        *,
        states: Sequence[str] | None = None,
        limit: int = 50,
    ) -> JobQueue:
        """The background job queue (LLM extraction): how many jobs are in each state,
        and the latest ``limit`` (of ``states``: pending, deferred, running, done,
        failed), newest first; of ``owner``, or of every owner for a caller that reads
        them all."""
        limit = validate.positive(limit, field="limit", maximum=MAX_LISTED)
        owners = self._job_owners(owner)
        return JobQueue(
            counts=self.store.job_counts(owners),
            jobs=self.store.jobs(owners=owners, states=_states(states), limit=limit),
        )

    def run_jobs(self: _Engine, *, limit: int | None = None) -> int:
        """Run the queued jobs that are due now, in this thread; returns how many ran.
        Needs write access to every owner."""
        self.principal.check_write_all()
        return self._work.run(limit=limit)

    def retry_jobs(self: _Engine, owner: str | None = None) -> int:
        """Queue the failed jobs again (of ``owner``, or of every owner), with their
        attempts reset: after the model's settings were mended. Returns how many."""
        owners = None
        if owner is None:
            self.principal.check_write_all()
        else:
            owners = [validate.owner(owner)]
            self.principal.check_write(owners[0])
        return self.store.retry_jobs(owners=owners, now=self._now())

    def wait_jobs(self: _Engine, *, timeout: float | None = None) -> dict[str, int]:
        """Run queued jobs (in this thread, beside any worker) until none is pending or
        running, for at most ``timeout`` seconds; returns the count of each state then.
        Needs write access to every owner."""
        self.principal.check_write_all()
        if timeout is not None and not timeout > 0:
            raise ValidationError(f"timeout must be positive, not {timeout!r}")
        return self._work.wait(timeout=timeout)

    def _job_owners(self: _Engine, owner: str | None) -> list[str] | None:
        if owner is not None:
            return [self._readable(owner)]
        self.principal.check_read_all()
        return None


def _states(states: Sequence[str] | None) -> list[str] | None:
    if states is None:
        return None
    if isinstance(states, str):
        states = [states]
    if unknown := [x for x in states if x not in JOB_STATES]:
        raise ValidationError(f"unknown job states {unknown!r}: {', '.join(JOB_STATES)}")
    return list(states)
