"""The write path's decisions: what a memory's vector encodes, and whether to keep it,
merge it into an existing memory, or supersede one.

:func:`plan` turns candidate memories (verbatim episodes and extracted ones,
already embedded) into one :class:`Plan` of inserts and updates. It reads only
what it is given through :class:`Known` (the store, under the write door's lock,
or any other holder of memories), so it is tested without a store; the door
(:mod:`hindsight.write.door`) applies the plan in a single transaction, so a failed
retain changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from hindsight.models import Kind, Memory, RetainResult
from hindsight.store.records import QueuedJob

Vector = npt.NDArray[np.float32]
_WORD = re.compile(r"\w+")
_FIRST_PERSON = re.compile(
    r"\b(?:I['\u2019]?(?:m|ve)|I['\u2019](?:d|ll)|I am|I|me|my|mine|myself)\b", re.IGNORECASE
)
_AS_NAMED = {"m": "{} is", "ve": "{} has", "d": "{} would", "ll": "{} will"}


def embedding_text(memory: Memory) -> str:
    """What a memory's vector encodes: what a later question about it will resemble.

    "Caroline: I went to a support group" is embedded as "Caroline: Caroline went to
    a support group": later questions name people ("When did Caroline ...?"), and
    the turn rarely does. An
    instruction that governs some requests ("... when I ask about deadlines") is
    embedded as that kind of request, its ``applies_when`` metadata: "When is the
    final submission due?" is near "deadlines", far from "format dates month-day-year".
    (What each gained: BENCHMARKS.md, "The figures behind the constants".)
    """
    speaker = memory.provenance.speaker
    if memory.kind is Kind.EPISODE and speaker:
        return f"{speaker}: {in_third_person(memory.content, speaker)}"
    return _applies_when(memory) or memory.content


def _applies_when(memory: Memory) -> str | None:
    """The kind of request an instruction governs, if the memory is one."""
    value = memory.metadata.get("applies_when")
    return value if memory.kind is Kind.PREFERENCE and isinstance(value, str) and value else None


def in_third_person(text: str, name: str) -> str:
    """``text`` with the first person singular replaced by ``name``."""

    def named(match: re.Match[str]) -> str:
        word = match.group(0)
        low = word.lower()
        if low in ("my", "mine"):
            return f"{name}'s"
        if low == "i am":
            return f"{name} is"
        if low in ("i", "me", "myself"):
            return name
        return _AS_NAMED[low[1:].lstrip("'\u2019")].format(name)  # I'm, Im, I've, Ive ...

    return _FIRST_PERSON.sub(named, text)


@dataclass(slots=True)
class Candidate:
    """A memory about to be written, with its vector (None: the embedding endpoint is
    down; a queued job makes it, and only the words find its twins)."""

    memory: Memory
    vector: Vector | None
    replaces: tuple[str, ...] = ()  # stored memories it updates, as an extractor said


class Known(Protocol):
    """What the planner reads of the memories already kept (the store fits it)."""

    def find_episodes(self, owner: str, session_id: str | None, content: str) -> list[Memory]:
        """Verbatim turns of this owner and session with exactly this content."""
        ...

    def children(self, parent_ids: Sequence[str]) -> list[Memory]:
        """Memories directly derived from any of these ids."""
        ...

    def get(self, ids: Sequence[str]) -> list[Memory]:
        """The stored memories with these ids (those that exist)."""
        ...

    def find_exact(self, owner: str, kind: Kind, content: str) -> Memory | None:
        """A current memory of this owner and kind with exactly this content."""
        ...

    def find_attribute(self, owner: str, kind: Kind, attribute: str) -> list[Memory]:
        """Current active memories filling a single-valued attribute."""
        ...

    def similar(self, owner: str, kind: Kind, vector: Vector, k: int) -> list[tuple[Memory, float]]:
        """The ``k`` current memories of this owner and kind nearest ``vector``, with their
        cosine similarity, most similar first."""
        ...


@dataclass(slots=True)
class Plan:
    """What one write does: memories to insert, stored memories to change.

    A vector of ``None`` keeps a stored memory's vector; ``needs_vector`` names the
    memories whose vector the door makes (new text, or none made yet).
    """

    inserts: list[tuple[Memory, Vector | None]] = field(default_factory=list)
    updates: dict[str, tuple[Memory, Vector | None]] = field(default_factory=dict)
    result: RetainResult = field(default_factory=RetainResult)
    needs_vector: set[str] = field(default_factory=set)
    # background work the write queues, in its transaction (hindsight.jobs)
    jobs: list[QueuedJob] = field(default_factory=list)
    # set instead when the write was made before under the same idempotency key: the
    # result then recorded (JSON), and nothing is written again
    replayed: dict[str, Any] | None = None

    def memories(self) -> Iterator[tuple[Memory, bool]]:
        """Every memory the write touches, with whether it is new."""
        for memory, _ in self.inserts:
            yield memory, True
        for memory, _ in self.updates.values():
            yield memory, False


def reinforce(existing: Memory, incoming: Memory, *, now: datetime) -> bool:
    """Fold a repeated statement into the memory that already holds it.

    Returns False when the statement comes from evidence the memory already
    counts (the same turn retained again): that must not raise confidence.
    """
    if set(incoming.provenance.derived_from) <= set(existing.provenance.derived_from) and (
        incoming.provenance.derived_from
    ):
        return False
    gain = (1 - existing.confidence) * incoming.confidence * 0.5
    existing.confidence = min(0.99, existing.confidence + gain)
    existing.updated_at = now
    existing.used_at = now  # restated: in use again (decay counts from here)
    for parent in incoming.provenance.derived_from:
        if parent not in existing.provenance.derived_from:
            existing.provenance.derived_from.append(parent)
    for hint in incoming.query_hints:
        if hint not in existing.query_hints:
            existing.query_hints.append(hint)
    return True


def supersede(old: Memory, new: Memory, *, now: datetime) -> tuple[Memory, Memory]:
    """Retire the older of two values of one attribute; returns (retired, current).

    Imported history may arrive out of order: whichever was observed later wins.
    """
    retired, current = (old, new) if new.observed_at >= old.observed_at else (new, old)
    retired.valid_to = current.observed_at
    retired.superseded_by = current.id
    retired.updated_at = now
    current.valid_from = current.valid_from or current.observed_at
    return retired, current


def plan(
    store: Known,
    candidates: Sequence[Candidate],
    *,
    dedupe_similarity: float,
    now: datetime,
) -> Plan:
    """Decide what each candidate does to the store."""
    out = Plan()
    kept: dict[str, str] = {}  # episode id -> id of the identical turn already stored
    for cand in candidates:
        memory = cand.memory
        if memory.kind is Kind.EPISODE:
            kept[memory.id] = _episode(store, out, cand)
            continue
        parents = memory.provenance.derived_from
        memory.provenance.derived_from = [kept.get(p, p) for p in parents]
        if _already_derived(store, memory, [p for p in parents if kept.get(p, p) != p]):
            continue
        twin = _find_twin(store, out, cand, dedupe_similarity)
        if twin is not None:
            if reinforce(twin, memory, now=now):
                _stage_update(out, twin)
                if twin.id not in out.result.updated:
                    out.result.updated.append(twin.id)
            continue
        replaced = _replaced(store, out, cand)
        if memory.attribute:
            named = {r.id for r in replaced}
            replaced += [h for h in _holders(store, out, memory) if h.id not in named]
        for old in replaced:
            retired, current = supersede(old, memory, now=now)
            if retired is old:
                _stage_update(out, old)
            out.result.superseded.append((retired.id, current.id))
        out.inserts.append((memory, cand.vector))
        out.result.created.append(memory.id)
    return out


def _episode(store: Known, out: Plan, cand: Candidate) -> str:
    """Keep a verbatim turn, unless this very turn (same session and time) is already kept.

    Turns of one call are never merged with each other (two "Thanks!" are two
    turns); each stored turn answers for at most one turn of a call. Returns the
    id of the kept turn.
    """
    m = cand.memory
    claimed = set(out.result.episodes)
    for other in store.find_episodes(m.owner, m.provenance.session_id, m.content):
        if other.observed_at == m.observed_at and other.id not in claimed:
            out.result.episodes.append(other.id)
            return other.id
    out.inserts.append((m, cand.vector))
    out.result.episodes.append(m.id)
    return m.id


def _already_derived(store: Known, m: Memory, retained_again: Sequence[str]) -> bool:
    """Whether a turn retained again already yielded this memory (even if since superseded)."""
    if not retained_again:
        return False
    return any(
        child.kind is m.kind and child.content == m.content
        for child in store.children(m.provenance.derived_from)
    )


def _find_twin(store: Known, out: Plan, cand: Candidate, threshold: float) -> Memory | None:
    """An existing or pending memory saying the same thing (same owner and kind)."""
    m = cand.memory
    # An instruction's vector encodes when it applies, not what it asks: two different
    # instructions for the same kind of request share it, so only the words can match.
    by_vector = _applies_when(m) is None
    for other, vector in [*out.inserts, *((p, v) for p, v in out.updates.values())]:
        same = other.content == m.content or (
            by_vector
            and _applies_when(other) is None
            and vector is not None
            and cand.vector is not None
            and float(vector @ cand.vector) >= threshold
        )
        if same and other.owner == m.owner and other.kind is m.kind and _same_claim(other, m):
            return other
    exact = store.find_exact(m.owner, m.kind, m.content)
    if exact is not None:
        return _staged(out, exact)
    if not by_vector or cand.vector is None:
        return None
    for found, similarity in store.similar(m.owner, m.kind, cand.vector, 3):
        if similarity < threshold:
            break
        if _applies_when(found) is None and _same_claim(found, m):
            return _staged(out, found)
    return None


def _same_claim(a: Memory, b: Memory) -> bool:
    """Whether two similar texts say the same thing.

    Embeddings barely tell "Room 101" from "Room 102" or "Anna" from "Hanna": texts
    naming different numbers or names are different claims, however close their
    vectors. So are opposite polarities and different values of one attribute.
    """
    other_value = a.attribute == b.attribute and a.metadata.get("value") != b.metadata.get("value")
    if a.attribute and other_value:
        return False
    if a.metadata.get("polarity", 1) != b.metadata.get("polarity", 1):
        return False
    return _salient(a.content) == _salient(b.content)


def _salient(text: str) -> set[str]:
    """Words that identify what a text is about: anything with a digit or a capital."""
    return {w.lower() for w in _WORD.findall(text) if w[0].isupper() or any(c.isdigit() for c in w)}


def _replaced(store: Known, out: Plan, cand: Candidate) -> list[Memory]:
    """The current memories of the owner that the candidate says it updates (extracted
    memories only: a verbatim turn retires nothing)."""
    m = cand.memory
    if not cand.replaces:
        return []
    return [
        _staged(out, old)
        for old in store.get(list(cand.replaces))
        if old.owner == m.owner
        and old.kind not in (Kind.EPISODE, Kind.SUMMARY, Kind.REFLECTION)
        and old.valid_to is None
        and old.superseded_by is None
    ]


def _holders(store: Known, out: Plan, m: Memory) -> list[Memory]:
    """Current memories (stored or pending) of the same person's attribute with another
    value or polarity ("I hate coffee" is retired by "I now love coffee")."""
    assert m.attribute is not None
    stored = [_staged(out, h) for h in store.find_attribute(m.owner, m.kind, m.attribute)]
    pending = [p for p, _ in out.inserts if p.owner == m.owner and p.attribute == m.attribute]
    said = _slot_value(m)
    return [
        h
        for h in [*stored, *pending]
        if h.valid_to is None
        and h.provenance.speaker == m.provenance.speaker  # people in one chat share slots
        and _slot_value(h) != said
    ]


def _slot_value(m: Memory) -> tuple[object, object]:
    return m.metadata.get("value"), m.metadata.get("polarity", 1)


def _staged(out: Plan, memory: Memory) -> Memory:
    """The plan's copy of a stored memory, so several changes to it accumulate."""
    if memory.id in out.updates:
        return out.updates[memory.id][0]
    return memory


def _stage_update(out: Plan, memory: Memory) -> None:
    if any(m is memory for m, _ in out.inserts):
        return  # a pending insert: it is written as it stands now
    out.updates.setdefault(memory.id, (memory, None))
