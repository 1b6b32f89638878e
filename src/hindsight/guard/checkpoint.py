"""The guard at write time: trust, secrets, the safety scan and conflicts, on every write.

:class:`Guard` is a write checkpoint (:mod:`hindsight.write.door`): it sees each write's plan
under the owners' lock, after the planner and before anything is stored, and

1. gives each new memory its trust: the least of its source's (``Settings.trust``),
   its writer's key's and its sources' (a memory derived from a tool's turn is no
   more trusted than the tool); confidence never exceeds trust. This step runs with
   the guard off too (``Settings.guard``): trust is provenance, not policy,
2. redacts secrets in any memory (or refuses the write, by policy),
3. scans what untrusted sources wrote (:mod:`hindsight.guard.scan`): an attack is
   quarantined (or kept flagged, by policy), and what was derived from it with it,
4. holds for review (``pending_review``) an untrusted memory that contradicts a more
   trusted one on the same subject (:mod:`hindsight.guard.conflict`; a value another
   of them gives too is the user's change, not a contradiction), would supersede
   a more trusted value of its attribute, or repeats a claim already held: repeating a
   claim is not evidence for it,
5. undoes the supersession a held memory would have made: a trusted memory is never
   retired by an untrusted one. A trusted source's own correction supersedes as ever.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from hindsight.config import Settings
from hindsight.guard.conflict import Contradiction, contradiction
from hindsight.guard.scan import ATTACKS, Flag, redact, scan
from hindsight.guard.slots import disputes, memo, readings, restates
from hindsight.models import HELD, Kind, Memory, Review, Source, Status
from hindsight.registry import Options, no_options
from hindsight.store import Filter
from hindsight.write.decide import Plan, Vector
from hindsight.write.door import Checkpoint, Operation, WriteContext, checkpoints

if TYPE_CHECKING:
    from hindsight.write.door import StoreKnown

DEFAULT_TRUST: Final[Mapping[Source, float]] = {
    Source.USER: 1.0,
    Source.SYSTEM: 1.0,
    Source.AGENT: 0.7,
    Source.TOOL: 0.5,
    Source.EXTERNAL: 0.3,
    Source.IMPORT: 0.5,
}
_NEIGHBOURS: Final = 8  # trusted memories nearest an untrusted one that it is checked against
_SLOT_SENTENCES: Final = 16  # the sentences of an untrusted one whose neighbours are checked too
_SLOT_NEIGHBOURS: Final = 3  # ... so many for each


@dataclass(frozen=True, slots=True)
class Policy:
    """The guard's settings, read once."""

    trust: Mapping[Source, float]
    trusted_at: float
    quarantine: bool
    refuse_secrets: bool
    conflict_similarity: float
    slot_similarity: float
    repeat_similarity: float
    same_voice_similarity: float

    @classmethod
    def of(cls, settings: Settings) -> Policy:
        given = {Source(name): level for name, level in settings.trust.items()}
        return cls(
            trust={**DEFAULT_TRUST, **given},
            trusted_at=settings.trusted_at,
            quarantine=settings.on_unsafe == "quarantine",
            refuse_secrets=settings.on_secret == "refuse",
            conflict_similarity=settings.conflict_similarity,
            slot_similarity=settings.slot_similarity,
            repeat_similarity=settings.repeat_similarity,
            same_voice_similarity=settings.same_voice_similarity,
        )

    def trusted(self, memory: Memory) -> bool:
        return memory.trust >= self.trusted_at


def trust_of(memory: Memory, context: WriteContext, policy: Policy, parents: list[float]) -> float:
    """A new memory's trust: the least of what it says of itself (an imported record's),
    its source's, its writer's and its sources'."""
    levels = [
        memory.trust,
        policy.trust.get(memory.provenance.source, 1.0),
        context.principal.trust,
    ]
    return min(levels + parents)


class Guard(Checkpoint):
    """Trust, secrets, the safety scan and conflicts, at write time."""

    name = "guard"

    def __init__(self, settings: Settings) -> None:
        self.policy = Policy.of(settings)
        self.enabled = settings.guard  # off: trust and its cap on confidence only

    def review(self, plan: Plan, context: WriteContext, known: StoreKnown) -> None:
        known.encode = memo(known.encode)  # the write's texts, each embedded once
        new = {m.id: (m, v) for m, v in plan.inserts}
        stored = _stored_parents(plan, new, known)
        for memory, _ in plan.inserts:  # parents come first: an episode before its facts
            parents = [p.trust for p in _parents(memory, new, stored)]
            memory.trust = trust_of(memory, context, self.policy, parents)
        if self.enabled:
            batch = _Batch(plan)
            for memory, vector in plan.inserts:
                memory.screened = True
                self._secrets(memory)
                if not self._inherit(memory, new, stored):
                    self._scan(memory)
                if memory.status is Status.ACTIVE and not self.policy.trusted(memory):
                    self._conflicts(memory, vector, batch, known)
            _hold_what_would_retire_more_trusted(plan, new)
            _one_turn_one_decision(plan)
        _count_each_voice_once(plan, context, new, known, self.policy)
        self._rewritten(plan, context, known)
        for memory, is_new in plan.memories():
            if not is_new and context.operation is Operation.UPDATE:  # the caller's words
                memory.trust = min(memory.trust, context.principal.trust)
                if self.enabled:
                    self._secrets(memory)
            memory.confidence = min(memory.confidence, memory.trust)
        _keep_superseded(plan, {mid for mid, (m, _) in new.items() if m.status in HELD})

    def _rewritten(self, plan: Plan, context: WriteContext, known: StoreKnown) -> None:
        """Judge each stored memory whose words changed (an edit, an LLM job's rewrite:
        ``plan.needs_vector``, embedded by the door) as a new write of them, at the trust
        of whoever changed them, and one back from the archive afresh (its words and
        trust stand; the world may have changed): scanned, and checked for conflicts
        while active. An edit is also checked against its own old words, still stored."""
        rewritten = [plan.updates[mid] for mid in sorted(plan.needs_vector & set(plan.updates))]
        if not rewritten:
            return
        restore = context.operation is Operation.RESTORE
        batch = _Batch(plan)
        for memory, vector in rewritten:
            if not restore:
                memory.trust = min(memory.trust, context.principal.trust)
                memory.flags, memory.review = [], None  # of the old words, approval too
            memory.screened = self.enabled
            if not self.enabled:
                continue
            self._secrets(memory)
            self._scan(memory)
            if memory.status is Status.ACTIVE and not self.policy.trusted(memory):
                self._conflicts(memory, vector, batch, known)

    def _secrets(self, memory: Memory) -> None:
        """Redact secrets wherever the memory's words are kept: content, hints and the
        metadata's text (an extracted value), or refuse the write."""
        metadata = _redacted(memory.metadata)
        cleaned = redact(memory.content)
        if cleaned == memory.content and metadata == memory.metadata:
            return
        if self.policy.refuse_secrets:
            self.refuse("the text holds a secret (an API key, card number or password)")
        memory.content, memory.metadata = cleaned, metadata
        memory.query_hints = [redact(h) for h in memory.query_hints]
        _flag(memory, Flag.SECRET)

    def _inherit(
        self,
        memory: Memory,
        new: dict[str, tuple[Memory, Vector | None]],
        stored: dict[str, Memory],
    ) -> bool:
        """Hold a memory derived from a held one, as its source is held."""
        for parent in _parents(memory, new, stored):
            if parent.status in HELD:
                memory.status, memory.review = parent.status, parent.review
                for flag in parent.flags:
                    _flag(memory, Flag(flag))
                return True
        return False

    def _scan(self, memory: Memory) -> None:
        if self.policy.trusted(memory):
            return
        findings = scan(memory.content)
        for finding in findings:
            if finding.flag is not Flag.SECRET:
                _flag(memory, finding.flag)
        attacks = [f for f in findings if f.flag in ATTACKS]
        # kept flagged by policy, an attack is inert data; it never becomes a preference
        # (an instruction the agent would follow), so one is quarantined under any policy
        if attacks and (self.policy.quarantine or memory.kind is Kind.PREFERENCE):
            memory.status = Status.QUARANTINED
            memory.review = Review("; ".join(f"{f.flag.value}: {f.evidence!r}" for f in attacks))

    def _conflicts(
        self, memory: Memory, vector: Vector | None, batch: _Batch, known: StoreKnown
    ) -> None:
        if vector is None or _asks(memory):
            return
        active, conflict = (Status.ACTIVE,), self.policy.conflict_similarity
        trusted = self.policy.trusted_at  # among the nearest trusted, however many others
        above = [
            other
            for other, _ in _near(
                known, vector, batch, memory, statuses=active, floor=conflict, min_trust=trusted
            )
            if other.trust > memory.trust and self.policy.trusted(other)
        ]
        tool = not _replies(memory)  # by slot too: see _slot_neighbours
        if tool:
            above += self._slot_neighbours(memory, known, besides=above)
        checked = [other for other in above if held_to(memory, other)]
        slotted = self._slots(memory, checked, known)
        for j, other in enumerate(checked):
            found = contradiction(memory.content, other.content)
            why = "contradicts a more trusted memory"
            if found is None and j in slotted and not _follows(memory, other, above):
                found, why = slotted[j], "gives another value than a more trusted memory"
            # (what the user said in the agent's own session supports it all the same)
            if found and not any(found.supported_by(m.content) for m in above if m is not other):
                memory.status = Status.PENDING_REVIEW
                memory.review = Review(f"{why}: {found}", [other.id])
                self._hold_repeats(memory, vector, batch, known)
                return
        if _replies(memory):
            return
        repeat = min(self.policy.repeat_similarity, self.policy.same_voice_similarity)
        for other, sim in _near(known, vector, batch, memory, statuses=HELD, floor=repeat):
            if other.review is None or sim < self._repeat_floor(memory, other):
                continue
            memory.status = Status.PENDING_REVIEW
            memory.review = Review(
                f"repeats a claim held for review ({other.id})",
                other.review.conflicts_with or [other.id],
            )
            return

    def _repeat_floor(self, one: Memory, other: Memory) -> float:
        """How close two claims must be to be one claim: closer from two voices than
        from one, which rewords what it repeats (agreement counts principals)."""
        same = (one.provenance.principal, one.provenance.source) == (
            other.provenance.principal,
            other.provenance.source,
        )
        return self.policy.same_voice_similarity if same else self.policy.repeat_similarity

    def _slot_neighbours(
        self, memory: Memory, known: StoreKnown, *, besides: list[Memory]
    ) -> list[Memory]:
        """The more trusted memories nearest each sentence of ``memory`` (a record that
        speaks of a slot in one line of many is far from it as a whole), but ``besides``.

        Only for what a tool or a record says: the agent's replies are full of new names
        and numbers (its advice), which the user reads and corrects as they come (on
        BEAM, checking them by slot held 97 more of them, none a poisoning)."""
        said = readings(memory.content)[:_SLOT_SENTENCES]
        if len(said) < 2:
            return []  # one sentence: the memory's own vector found them
        flt = Filter(
            owners=[memory.owner], statuses=(Status.ACTIVE,), min_trust=self.policy.trusted_at
        )
        seen = {m.id for m in besides}
        ids = {
            mid
            for vector in known.encode(said)
            for mid, sim in known.store.vector_search(flt, vector, _SLOT_NEIGHBOURS)
            if sim >= self.policy.slot_similarity and mid not in seen
        }
        return [
            m
            for m in known.store.get(sorted(ids))
            if self.policy.trusted(m) and m.trust > memory.trust
        ]

    def _slots(
        self, memory: Memory, trusted: list[Memory], known: StoreKnown
    ) -> dict[int, Contradiction]:
        """Where ``memory`` gives a slot of one of ``trusted`` (by index) another value."""
        found = disputes(
            [memory.content],
            [other.content for other in trusted],
            known.encode,
            similarity=self.policy.slot_similarity,
            of_the_user=_replies(memory),  # the agent: what it says the user is or has
        )
        return {j: dispute for _, j, dispute in found}

    def _hold_repeats(self, held: Memory, vector: Vector, batch: _Batch, known: StoreKnown) -> None:
        """Hold the untrusted memories that made the claim ``held`` makes before it (and
        what was derived from them): the claim goes to review in all its copies."""
        assert held.review is not None
        active = (Status.ACTIVE,)
        repeat = min(self.policy.repeat_similarity, self.policy.same_voice_similarity)
        repeats = [
            other
            for other, sim in _near(known, vector, batch, held, statuses=active, floor=repeat)
            if sim >= self._repeat_floor(held, other)
            and not self.policy.trusted(other)
            and not _replies(other)
            and not (other.review is not None and other.review.decision == "approved")
        ]
        if not repeats:
            return
        children = [
            c for c in known.store.children([m.id for m in repeats]) if c.status is Status.ACTIVE
        ]
        reason = Review(f"repeats a claim held for review ({held.id})", held.review.conflicts_with)
        inserted = {m.id for m, _ in batch.plan.inserts}
        for other in [*repeats, *children]:
            other.status, other.review = Status.PENDING_REVIEW, reason
            if other.id not in inserted:
                batch.plan.updates.setdefault(other.id, (other, None))


class _Batch:
    """A write's new memories, their vectors in one matrix: each is compared with all
    the others at once (one product, not a loop over the write: a bulk import of
    thousands compared each with each in Python)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        with_vectors = [(m, v) for m, v in plan.inserts if v is not None]
        self._compared = [m for m, _ in with_vectors]
        self._matrix = np.array([v for _, v in with_vectors], dtype=np.float32)

    def near(
        self, vector: Vector, memory: Memory, statuses: tuple[Status, ...], floor: float
    ) -> list[tuple[Memory, float]]:
        """The others of these statuses at least ``floor`` similar to ``vector``, not of
        ``memory``'s own input (records imported without one are each their own)."""
        if not self._compared:
            return []
        similarities = self._matrix @ vector
        own = memory.provenance.input_hash
        return [
            (other, float(similarities[i]))
            for i in np.flatnonzero(similarities >= floor)
            if (other := self._compared[i]).status in statuses
            and other is not memory
            and (own is None or other.provenance.input_hash != own)
        ]


def _near(
    known: StoreKnown,
    vector: Vector,
    batch: _Batch,
    memory: Memory,
    *,
    statuses: tuple[Status, ...],
    floor: float,
    min_trust: float | None = None,
) -> list[tuple[Memory, float]]:
    """``memory``'s owner's memories of these statuses at least ``floor`` similar to
    ``vector``, stored (the nearest few, of those trusted ``min_trust`` at least) or in
    this write, nearest first."""
    flt = Filter(owners=[memory.owner], statuses=statuses, min_trust=min_trust)
    hits = [h for h in known.store.vector_search(flt, vector, _NEIGHBOURS) if h[1] >= floor]
    found = {m.id: m for m in known.store.get([mid for mid, _ in hits])} if hits else {}
    near = [(found[mid], sim) for mid, sim in hits if mid in found]
    near.extend(batch.near(vector, memory, statuses, floor))
    near.sort(key=lambda pair: -pair[1])
    return near


def _replies(memory: Memory) -> bool:
    """The agent's words: in a conversation it answers the user, who corrects it there.

    So the agent is held to what the user said in other sessions only, and its replies,
    which restate one another by nature, are not held as repeats of a claim: drift by
    repetition is what tools and documents do (an agent's claim that contradicts the
    user is still held, as itself)."""
    return memory.provenance.source is Source.AGENT


def _follows(claim: Memory, trusted: Memory, others: list[Memory]) -> bool:
    """Whether ``claim`` restates what a trusted memory said after ``trusted``."""
    return any(
        m is not trusted
        and m.observed_at >= trusted.observed_at
        and restates(claim.content, m.content, trusted.content)
        for m in others
    )


def held_to(claim: Memory, trusted: Memory) -> bool:
    """Whether an untrusted claim must agree with a trusted memory: one said before it
    (a later one is the user's own update), stating something (not a question), and for
    the agent, in another session."""
    session = claim.provenance.session_id
    return (
        trusted.observed_at <= claim.observed_at
        and not _asks(trusted)
        and not (
            _replies(claim) and session is not None and session == trusted.provenance.session_id
        )
    )


def _asks(memory: Memory) -> bool:
    """A question states nothing another text could contradict."""
    return memory.content.rstrip().endswith("?")


def _hold_what_would_retire_more_trusted(
    plan: Plan, new: Mapping[str, tuple[Memory, Vector | None]]
) -> None:
    """A new value of an attribute from a less trusted source than the value it would
    retire is a conflict by itself ("I moved to Berlin" from a low-trust key against the
    user's "I live in Lyon"): held for review, whatever its words."""
    retired = {m.id: m for m, _ in plan.updates.values()} | {mid: m for mid, (m, _) in new.items()}
    for old_id, new_id in plan.result.superseded:
        current, old = new.get(new_id, (None, None))[0], retired.get(old_id)
        if current is None or old is None or current.status is not Status.ACTIVE:
            continue
        if current.trust < old.trust:
            current.status = Status.PENDING_REVIEW
            current.review = Review(
                f"would supersede a more trusted memory: {old.content!r}", [old.id]
            )


def _one_turn_one_decision(plan: Plan) -> None:
    """Hold every memory made from a turn of which one is held: the episode with the
    fact drawn from it, whichever of them the checks caught."""
    held: dict[str, Memory] = {}
    for memory, _ in plan.inserts:
        if memory.status in HELD and memory.provenance.input_hash:
            held.setdefault(memory.provenance.input_hash, memory)
    for memory, _ in plan.inserts:
        first = held.get(memory.provenance.input_hash or "")
        if first is not None and memory.status is Status.ACTIVE:
            memory.status, memory.review = first.status, first.review
            for flag in first.flags:
                _flag(memory, Flag(flag))


def _count_each_voice_once(
    plan: Plan,
    context: WriteContext,
    new: Mapping[str, tuple[Memory, Vector | None]],
    known: StoreKnown,
    policy: Policy,
) -> None:
    """Agreement counts principals, not writes: an untrusted memory restated by the
    writer and source that already back it keeps its confidence (a claim one tool
    repeats, reworded or not, is as believable as the first time), and so does any
    memory restated only by less trusted voices. The user saying a thing again is use."""
    restated = [
        memory
        for memory, is_new in plan.memories()
        if not is_new and memory.id in plan.result.updated
    ]
    for memory in restated:
        evidence = [new[p][0] for p in memory.provenance.derived_from if p in new]
        if not evidence:
            continue
        stored = known.store.get([memory.id])
        if not stored or memory.confidence <= stored[0].confidence:
            continue
        before = [p for p in memory.provenance.derived_from if p not in new]
        backers = {(m.provenance.principal, m.provenance.source) for m in known.store.get(before)}
        backers.add((memory.provenance.principal, memory.provenance.source))
        voices = {(context.principal.name, m.provenance.source) for m in evidence}
        weaker = all(m.trust < memory.trust for m in evidence)
        if weaker or (voices <= backers and not policy.trusted(memory)):
            memory.confidence = stored[0].confidence


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def _flag(memory: Memory, flag: Flag) -> None:
    if flag.value not in memory.flags:
        memory.flags.append(flag.value)


def _stored_parents(plan: Plan, new: Mapping[str, object], known: StoreKnown) -> dict[str, Memory]:
    ids = {p for m, _ in plan.inserts for p in m.provenance.derived_from if p not in new}
    return {m.id: m for m in known.store.get(sorted(ids))} if ids else {}


def _parents(
    memory: Memory, new: Mapping[str, tuple[Memory, Vector | None]], stored: Mapping[str, Memory]
) -> list[Memory]:
    out = []
    for parent in memory.provenance.derived_from:
        if parent in new:
            out.append(new[parent][0])
        elif parent in stored:
            out.append(stored[parent])
    return out


def _keep_superseded(plan: Plan, held: set[str]) -> None:
    """Undo what held memories would have superseded: they are not current."""
    if not held:
        return
    kept = [(old, cur) for old, cur in plan.result.superseded if cur not in held]
    for old, cur in plan.result.superseded:
        if cur not in held:
            continue
        if old in plan.updates:
            del plan.updates[old]
        for m, _ in plan.inserts:
            if m.id == old:
                m.valid_to, m.superseded_by = None, None
    plan.result.superseded = kept


def _guard(settings: Settings, options: Options) -> Guard:
    no_options("checkpoint", "guard", options)
    return Guard(settings)


checkpoints.register("guard", _guard)
