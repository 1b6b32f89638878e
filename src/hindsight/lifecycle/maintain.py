"""The maintenance pass: expiry, retention and archive, owner by owner.

For each owner, in one transaction that holds the owner (as a write does): memories past
their ``expires_at`` are forgotten, then those past the owner's retention, each batch
with a receipt and an audit entry as an explicit forget makes (:func:`erase`); then
active, unpinned, current memories whose decayed confidence is under ``archive_below``
and that went unused for ``archive_after`` are archived, through the write door as
every change to a memory is (:meth:`~hindsight.write.door.Door.commit_held`: its checkpoints
see it, and it is audited). A pass
that stops part way leaves each owner done or untouched, and running it again at the
same time does nothing: what it forgot is gone and what it archived is no longer active.
Two passes at once (two servers on one database) do each owner's work once, since the
second waits for the owner and then finds nothing left to do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from hindsight.access import Principal
from hindsight.config import Settings
from hindsight.lifecycle.decay import Decay
from hindsight.lifecycle.forgetting import erase
from hindsight.lifecycle.retention import Retention, is_expired, is_retired
from hindsight.models import HELD, ForgetReceipt, Kind, Memory, Status
from hindsight.store import Filter, Store
from hindsight.write.decide import Plan
from hindsight.write.door import Door, Operation, StoreKnown, WriteContext


@dataclass(slots=True)
class MaintainReport:
    """What a pass did: memories archived, forgotten for their ``expires_at`` (expired)
    and for their owner's retention (forgotten), over how many owners."""

    archived: int = 0
    expired: int = 0
    forgotten: int = 0
    owners: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Maintenance:
    """The pass over one store, with the settings' thresholds."""

    store: Store
    decay: Decay
    retention: Retention
    archive_below: float = 0.3
    archive_after: timedelta = timedelta(days=90)
    archive_episodes: bool = False
    audit: bool = True

    @classmethod
    def of(cls, settings: Settings, store: Store) -> Maintenance:
        return cls(
            store=store,
            decay=Decay(settings.decay_per_week, settings.decay_counts_recall),
            retention=Retention(settings.retention),
            archive_below=settings.archive_below,
            archive_after=timedelta(days=settings.archive_after_days),
            archive_episodes=settings.archive_episodes,
            audit=settings.audit,
        )

    def run(
        self, owners: Iterable[str], *, now: datetime, principal: Principal, door: Door
    ) -> MaintainReport:
        """The pass at ``now`` over ``owners``, each in its own transaction, as
        ``principal``; archives go through ``door`` (of the same store)."""
        report = MaintainReport()
        for owner in owners:
            self.owner(owner, now=now, principal=principal, door=door, report=report)
            report.owners += 1
        return report

    def owner(
        self,
        owner: str,
        *,
        now: datetime,
        principal: Principal,
        door: Door,
        report: MaintainReport,
    ) -> None:
        """Expire, retire and archive one owner's memories, in one transaction."""
        with self.store.exclusive([owner]):
            rows = list(
                self.store.iterate(
                    Filter(owners=[owner], statuses=tuple(Status), current_only=False)
                )
            )
            expired = [m.id for m in rows if is_expired(m, now)]
            cutoff = self.retention.cutoff(owner, now)
            retired = [m.id for m in rows if is_retired(m, cutoff) and not is_expired(m, now)]
            gone: set[str] = set()
            if expired:
                criteria = {"expired": True, "as_of": now.isoformat()}
                receipt = self._erase(owner, expired, criteria, now, principal.name)
                gone |= {*receipt.deleted_ids, *receipt.derived_ids, *receipt.restored_ids}
            if retired:
                assert cutoff is not None
                criteria = {
                    "retention_days": self.retention.days(owner),
                    "learnt_before": cutoff.isoformat(),
                }
                receipt = self._erase(owner, retired, criteria, now, principal.name)
                gone |= {*receipt.deleted_ids, *receipt.derived_ids, *receipt.restored_ids}
            stale = self.stale([m for m in rows if m.id not in gone], now)
            if stale:
                context = WriteContext(principal, Operation.ARCHIVE, (owner,), now)
                self._archive(door, context, stale)
            report.expired += len(expired)
            report.forgotten += len(retired)
            report.archived += len(stale)

    def _erase(
        self, owner: str, ids: Sequence[str], criteria: dict[str, object], now: datetime, who: str
    ) -> ForgetReceipt:
        return erase(
            self.store,
            ids,
            owner=owner,
            criteria=dict(criteria),
            principal=who,
            at=now,
            audit=self.audit,
        )

    def is_stale(self, memory: Memory, now: datetime) -> bool:
        """Whether the pass archives ``memory`` at ``now`` (its episode rule aside)."""
        return (
            memory.status is Status.ACTIVE
            and not memory.pinned
            and memory.valid_to is None
            and self.decay.confidence(memory, now) < self.archive_below
            and self.decay.idle_since(memory, now) >= self.archive_after
        )

    def stale(self, rows: Sequence[Memory], now: datetime) -> list[Memory]:
        """What to archive of these memories: the stale ones, and the stale verbatim turns
        (with ``archive_episodes``) every memory derived from which is archived."""
        out = [m for m in rows if m.kind is not Kind.EPISODE and self.is_stale(m, now)]
        if not self.archive_episodes:
            return out
        turns = {m.id: m for m in rows if m.kind is Kind.EPISODE and self.is_stale(m, now)}
        if not turns:
            return out
        archiving = {m.id for m in out}
        blocked: set[str] = set()
        for child in self.store.children(list(turns)):
            live = child.valid_to is None and (
                child.status is Status.ACTIVE or child.status in HELD
            )
            if live and child.id not in archiving:
                blocked.update(p for p in child.provenance.derived_from if p in turns)
        return out + [m for mid, m in turns.items() if mid not in blocked]

    def _archive(self, door: Door, context: WriteContext, stale: Sequence[Memory]) -> None:
        """Archive ``stale`` (read in this transaction) through the door."""

        def planner(known: StoreKnown) -> Plan:
            out = Plan()
            for memory in stale:
                memory.status = Status.ARCHIVED
                memory.updated_at = context.at
                out.updates[memory.id] = (memory, None)
            return out

        door.commit_held(
            context,
            planner,
            detail=lambda: {
                "below": self.archive_below,
                "unused_days": self.archive_after.total_seconds() / 86_400,
            },
        )
