"""A memory's history: the chain of its versions, and who changed what and when.

A value that changes is superseded, never overwritten (:func:`hindsight.write.decide.supersede`):
the old row keeps its content and gets ``valid_to`` and ``superseded_by``. The versions
of one memory are those linked to it by ``superseded_by``, walking back (what it
superseded) and forward (what superseded it), oldest first.

The events of each version come from the audit log's entries that name it (creation,
restatement, update, supersession, review decision, feedback, and a forget that made it
current again), and from the row itself where the log has nothing (the audit log is
off, or pruned): its creation, its supersession and its review decision. A forgotten
version is gone: the chain closes over it, and the forget that made an older value
current again is named with its receipt. Only the owner's own entries are read, and
each event keeps only what it says of that version: no other owner's ids leak.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from hindsight.models import Memory
from hindsight.store import AuditEntry, Store

MAX_VERSIONS: Final = 1_000
"""Versions a history walks at most (a chain this long is a runaway writer's)."""
MAX_EVENTS: Final = 10_000
MAX_DERIVED: Final = 200
_CREATING: Final = frozenset({"retain", "consolidate", "summarize", "reflect", "observe"})
_SAME_MOMENT: Final = timedelta(milliseconds=1)  # a row's times and its entry's, as stored


@dataclass(slots=True)
class HistoryEvent:
    """One thing that happened to one version: when, who (an API key's name, or
    "local"), the operation (``action``: retain, update, review, feedback, forget, ...)
    and what it did to the version (``what``: created, superseded, approved, ...)."""

    at: datetime
    principal: str | None
    action: str
    what: str
    memory_id: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Version:
    """One version of a memory, with what happened to it, oldest first."""

    memory: Memory
    events: list[HistoryEvent] = field(default_factory=list)


@dataclass(slots=True)
class History:
    """The versions of the memory ``memory_id``, oldest first (it is one of them)."""

    memory_id: str
    versions: list[Version]
    # what was derived from the memory asked about (the owner's, at most MAX_DERIVED):
    # a turn's facts, a summary or lesson drawing on it
    derived: list[Memory] = field(default_factory=list)

    @property
    def current(self) -> Memory | None:
        """The version still in force (not superseded), if one is."""
        live = [v.memory for v in self.versions if v.memory.superseded_by is None]
        return live[-1] if live else None


def versions(store: Store, memory: Memory) -> History:
    """The history of ``memory`` (a stored memory the caller may read)."""
    chain = _chain(store, memory)
    entries = store.audit_about(memory.owner, [m.id for m in chain], limit=MAX_EVENTS)
    versions = [Version(m, _events(m, entries, chain)) for m in chain]
    derived = [m for m in store.children([memory.id]) if m.owner == memory.owner]
    return History(
        memory.id, versions, sorted(derived, key=lambda m: (m.created_at, m.id))[:MAX_DERIVED]
    )


def _chain(store: Store, start: Memory) -> list[Memory]:
    """Every version linked to ``start`` by supersession (one owner's), oldest first."""
    found = {start.id: start}
    frontier = [start]
    while frontier and len(found) < MAX_VERSIONS:
        ahead = [m.superseded_by for m in frontier if m.superseded_by is not None]
        reached = store.get([mid for mid in ahead if mid not in found])
        reached += store.predecessors([m.id for m in frontier])
        frontier = []
        for m in reached:
            if m.owner == start.owner and m.id not in found and len(found) < MAX_VERSIONS:
                found[m.id] = m
                frontier.append(m)
    return _oldest_first(list(found.values()))


def _oldest_first(memories: list[Memory]) -> list[Memory]:
    """Predecessors before what superseded them; otherwise by when they were learnt."""
    ids = {m.id for m in memories}
    waiting = {m.id: 0 for m in memories}
    for m in memories:
        if m.superseded_by in ids:
            waiting[m.superseded_by] += 1
    by_id = {m.id: m for m in memories}
    ordered: list[Memory] = []
    ready = [m for m in memories if waiting[m.id] == 0]
    while ready:
        ready.sort(key=lambda m: (m.created_at, m.id))
        m = ready.pop(0)
        ordered.append(m)
        if m.superseded_by in ids:
            waiting[m.superseded_by] -= 1
            if waiting[m.superseded_by] == 0:
                ready.append(by_id[m.superseded_by])
    return ordered + [m for m in memories if m not in ordered]  # a cycle: none expected


def _events(m: Memory, entries: list[AuditEntry], chain: list[Memory]) -> list[HistoryEvent]:
    events = []
    for entry in entries:
        what = _what(m, entry)
        if what is not None:
            events.append(
                HistoryEvent(entry.at, entry.principal, entry.action, what, m.id, _detail(m, entry))
            )
    events += _from_row(m, events, chain)
    events.sort(key=lambda e: e.at)
    return events


def _what(m: Memory, entry: AuditEntry) -> str | None:
    """What ``entry`` did to ``m``, or None if it does not name it."""
    named = m.id in entry.memory_ids
    if entry.action == "forget":
        if m.id in entry.detail.get("restored", ()):
            return "current again"  # a newer value was forgotten
        return "forgotten" if named else None
    if not named:
        return None
    if _successor(m, entry) is not None:
        return "superseded"
    replaced = m.superseded_by is not None and m.superseded_by in entry.memory_ids
    if entry.action == "feedback":
        return "marked useful" if entry.detail.get("useful") else "marked not useful"
    if entry.action == "review":
        if replaced and m.review is None:
            return "superseded"  # retired by the value a reviewer approved
        decision = entry.detail.get("decision") or (m.review.decision if m.review else None)
        return str(decision or "reviewed")
    if entry.action == "import":
        return "imported"
    if entry.action == "assess":  # the LLM check filed a verdict; it may have held it
        return "held for review" if m.id in entry.detail.get("held_by_check", ()) else "assessed"
    if entry.action in _CREATING and abs(entry.at - m.created_at) <= _SAME_MOMENT:
        return "created"
    if replaced:
        return "superseded"
    if m.id in entry.detail.get("held", ()):
        return "held for review"  # an earlier copy of a claim the guard held
    if entry.action == "update":
        return "changed"
    return "restated" if entry.action in _CREATING else entry.action


def _successor(m: Memory, entry: AuditEntry) -> str | None:
    """The memory that superseded ``m`` in the write ``entry`` records, if it did (as the
    entry says: the successor may since have been forgotten)."""
    pairs = entry.detail.get("superseded", ())
    return next((str(new) for old, new in pairs if old == m.id), None)


def _detail(m: Memory, entry: AuditEntry) -> dict[str, Any]:
    """What an entry says of this version only (its other ids stay in the audit log)."""
    out: dict[str, Any] = {}
    if entry.request_id is not None:
        out["request_id"] = entry.request_id
    if entry.action == "forget" and "receipt" in entry.detail:
        out["receipt"] = entry.detail["receipt"]
    if entry.action == "feedback":
        out.update({k: entry.detail[k] for k in ("useful", "confidence") if k in entry.detail})
    successor = _successor(m, entry)
    if successor is None and m.superseded_by is not None and m.superseded_by in entry.memory_ids:
        successor = m.superseded_by  # an entry written before entries named their supersessions
    if successor is not None:
        out["superseded_by"] = successor
    if m.id in entry.detail.get("held", ()):
        out["held"] = True
    return out


def _from_row(m: Memory, seen: list[HistoryEvent], chain: list[Memory]) -> list[HistoryEvent]:
    """The events the row itself records, where no audit entry told of them."""
    whats = {e.what for e in seen}
    out = []
    if not whats & {"created", "imported"}:
        out.append(HistoryEvent(m.created_at, m.provenance.principal, "retain", "created", m.id))
    if m.superseded_by is not None and "superseded" not in whats:
        successor = next((c for c in chain if c.id == m.superseded_by), None)
        at = m.valid_to or m.updated_at
        who = successor.provenance.principal if successor is not None else None
        detail = {"superseded_by": m.superseded_by}
        out.append(HistoryEvent(at, who, "retain", "superseded", m.id, detail))
    review = m.review
    if review is not None and review.decision and not whats & {"approved", "rejected"}:
        at = datetime.fromisoformat(review.decided_at) if review.decided_at else m.updated_at
        out.append(HistoryEvent(at, review.decided_by, "review", review.decision, m.id))
    return out
