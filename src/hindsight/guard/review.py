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

Who decides (:class:`~hindsight.access.Principal`): a key with ``"review": true`` on the
owners it may write; a rejection stands unless an ``"admin": true`` key approves the
rejected memory (undoes the rejection). The writer is not the reviewer: whatever its
roles, no key approves or re-activates a memory it wrote (``provenance.principal``).
It may reject what it wrote: that releases nothing. Until a reviewer decides, a held
or rejected memory takes no edit, status change or feedback (:data:`DECIDED_BY_REVIEW`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from hindsight.access import Principal
from hindsight.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from hindsight.models import HELD, Memory, Review, Status
from hindsight.store import Filter, Store
from hindsight.write.decide import Plan, supersede
from hindsight.write.door import Door, StoreKnown, WriteContext

DECIDED_BY_REVIEW: Final = (*HELD, Status.REJECTED)
"""Statuses that only a reviewer's decision changes: such a memory takes no edit."""


def check_editable(memory: Memory) -> None:
    """Refuse a change to a memory held for review, or rejected: the writer may not edit
    it before the reviewer sees it, nor release it by a status."""
    if memory.status in DECIDED_BY_REVIEW:
        raise ConflictError(
            f"memory {memory.id!r} is {memory.status.value}: held for review, it takes no "
            "edit or status change; a reviewer approves or rejects it"
        )


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
                # (an edit held against its own words before it names itself)
                if c in found and found[c].owner == m.owner and c != m.id
            ],
        )
        for m in held
    ]


def decide(door: Door, context: WriteContext, memory_id: str, *, approve: bool) -> list[Memory]:
    """Approve or reject a held memory and what was held with it, or (approving, as an
    admin) re-activate a rejected one and what was rejected with it; returns them, the
    memory first. Raises NotFoundError for an id the caller may not write,
    ValidationError for a memory that is not held, and PermissionDeniedError for a
    caller that is no reviewer, approves what it wrote, or undoes a rejection and is no
    admin."""
    context.principal.check_review()
    decided: list[Memory] = []
    decision = "approved" if approve else "rejected"
    undone: list[bool] = []

    def planner(known: StoreKnown) -> Plan:
        found = known.store.get([memory_id])
        if not found or found[0].owner not in context.owners:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        memory = found[0]
        undo = approve and memory.status is Status.REJECTED
        if undo and not context.principal.admin:
            raise PermissionDeniedError(
                f'memory {memory_id!r} was rejected: only a key with "admin": true may '
                "re-activate it"
            )
        if not undo and memory.status not in HELD:
            raise ValidationError(
                f"memory {memory_id!r} is {memory.status.value}, not held for review"
            )
        statuses = (Status.REJECTED,) if undo else HELD
        with_it = [c for c in known.store.children([memory.id]) if c.status in statuses]
        if approve:
            _not_the_writer(context.principal, [memory, *with_it])
        undone.append(undo)
        out = Plan()
        for m in [memory, *with_it]:
            _record(m, decision, context)
            m.status = Status.ACTIVE if approve else Status.REJECTED
            out.updates[m.id] = (m, None)
            if approve and m.attribute:
                _supersede_holders(known, out, m, context.at)
            decided.append(m)
        return out

    def detail() -> dict[str, str]:
        return {"decision": decision, **({"undid": "rejected"} if any(undone) else {})}

    door.commit(context, planner, detail=detail)
    return decided


def _not_the_writer(reviewer: Principal, memories: Sequence[Memory]) -> None:
    """Refuse an approval by the key that wrote one of ``memories``: the writer is not
    the reviewer, whatever its roles."""
    for memory in memories:
        if memory.provenance.principal == reviewer.name:
            raise PermissionDeniedError(
                f"key {reviewer.name!r} wrote memory {memory.id!r}: the writer may not approve "
                'or re-activate what it wrote; another key with "review": true decides'
            )


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
