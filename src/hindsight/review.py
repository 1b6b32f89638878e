"""The review queue: what the guard held, beside what it conflicts with, and decisions.

A memory the guard quarantined (it read as an attack) or held (it contradicts a more
trusted memory, or repeats a held claim) waits with status ``quarantined`` or
``pending_review``: not recalled, listed here with the memories it conflicts with and
the reason. A reviewer

- **approves** it: it becomes active as if it had passed, superseding what it would
  have superseded then (another value of its attribute), or
- **rejects** it: it stays as ``rejected`` history (never recalled), or is forgotten,
  by policy (``Settings.on_reject``) or by the call.

Memories held with it (those derived from the same turn) follow the decision. Each
decision is written through the write door, so it is audited and all or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hindsight.door import Door, StoreKnown, WriteContext
from hindsight.errors import NotFoundError, ValidationError
from hindsight.models import HELD, Memory, Review, Status
from hindsight.store import Filter, Store
from hindsight.write import Plan, supersede


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """A held memory, and the stored memories it conflicts with (its owner's)."""

    memory: Memory
    conflicts: list[Memory]


def pending(store: Store, owners: list[str], *, limit: int, offset: int = 0) -> list[ReviewItem]:
    """The held memories of these owners, newest first, each with its conflicts."""
    held = store.list_memories(
        Filter(owners=owners, statuses=HELD, current_only=False), limit=limit, offset=offset
    )
    ids = sorted({c for m in held if m.review for c in m.review.conflicts_with})
    found = {m.id: m for m in store.get(ids)}
    return [
        ReviewItem(
            m,
            [
                found[c]
                for c in (m.review.conflicts_with if m.review else [])
                if c in found and found[c].owner == m.owner
            ],
        )
        for m in held
    ]


def decide(door: Door, context: WriteContext, memory_id: str, *, approve: bool) -> list[Memory]:
    """Approve or reject a held memory and what was held with it; returns them, the
    memory first. Raises NotFoundError for an id the caller may not write, and
    ValidationError for a memory that is not held."""
    decided: list[Memory] = []
    decision = "approved" if approve else "rejected"

    def planner(known: StoreKnown) -> Plan:
        found = known.store.get([memory_id])
        if not found or found[0].owner not in context.owners:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        memory = found[0]
        if memory.status not in HELD:
            raise ValidationError(
                f"memory {memory_id!r} is {memory.status.value}, not held for review"
            )
        with_it = [c for c in known.store.children([memory.id]) if c.status in HELD]
        out = Plan()
        for m in [memory, *with_it]:
            _record(m, decision, context)
            m.status = Status.ACTIVE if approve else Status.REJECTED
            out.updates[m.id] = (m, None)
            if approve and m.attribute:
                _supersede_holders(known, out, m, context.at)
            decided.append(m)
        return out

    door.commit(context, planner, detail=lambda: {"decision": decision})
    return decided


def _record(memory: Memory, decision: str, context: WriteContext) -> None:
    review = memory.review or Review("held for review")
    review.decision = decision
    review.decided_by = context.principal.name
    review.decided_at = context.at.isoformat()
    memory.review = review
    memory.updated_at = context.at


def _supersede_holders(known: StoreKnown, out: Plan, memory: Memory, now: datetime) -> None:
    """Retire the current other values of the approved memory's attribute, as the
    write would have had it passed."""
    assert memory.attribute is not None
    value = memory.metadata.get("value")
    for old in known.find_attribute(memory.owner, memory.kind, memory.attribute):
        if old.id != memory.id and old.metadata.get("value") != value:
            retired, _ = supersede(old, memory, now=now)
            out.updates[retired.id] = (retired, None)
