"""The one door every write goes through: plan, checkpoints, one transaction.

Every change to a memory calls :meth:`Door.commit` with a planner: retain, update,
pin, feedback, restore, import, review decisions, consolidation, summaries and
reflections, and the maintenance pass's archive (:meth:`Door.commit_held`). Under the
store's lock on the owners written (:meth:`~hindsight.store.Store.exclusive`: no other
writer, thread or process, plans for them meanwhile), the door

1. runs the planner against what the store holds (a :class:`~hindsight.write.decide.Known`),
2. records the writer's name in each new memory's provenance, embeds each stored memory
   whose words the plan changed (an edit, an LLM job's rewrite, a restore: judged as a
   new write of them), and shows the plan to each :class:`Checkpoint` in turn, with
   the caller's :class:`WriteContext` (the guard, :mod:`hindsight.guard`, first); a
   checkpoint may change the plan's memories (status, confidence, content, metadata)
   or refuse the write,
3. drops any link to a memory of another owner (or to none), so no write ties one
   owner's memories to another's,
4. makes the vectors the plan still needs (a memory whose text a checkpoint
   changed is embedded anew, so nothing it removed reaches an index), and
5. writes it all in the same transaction: all or nothing.

Checkpoints are providers like any other: registered by name in :data:`checkpoints`
(built-ins and plugins alike) and enabled by ``Settings.checkpoints``.
"""

from __future__ import annotations

import abc
import enum
import hashlib
import json
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from hindsight import validate
from hindsight.access import Principal
from hindsight.embed import Embeddings
from hindsight.embed.base import Vectors
from hindsight.errors import (
    ConflictError,
    EmbeddingUnavailableError,
    VectorsUnavailableError,
    WriteRefusedError,
)
from hindsight.models import HELD, Kind, Memory
from hindsight.registry import Registry
from hindsight.store import AuditEntry, Filter, QueuedJob, Request, Store
from hindsight.write.decide import Plan, Vector, embedding_text

_log = logging.getLogger("hindsight.write.door")


class Operation(enum.StrEnum):
    """Which library operation a write comes from."""

    RETAIN = "retain"
    OBSERVE = "observe"  # a turn into working memory: only its idempotency key is written
    UPDATE = "update"
    IMPORT = "import"
    CONSOLIDATE = "consolidate"
    SUMMARIZE = "summarize"
    REFLECT = "reflect"
    REVIEW = "review"  # a reviewer's decision on a memory the guard held
    FEEDBACK = "feedback"  # a caller said a memory was useful, or not
    PIN = "pin"  # kept from decay and archive (hindsight.lifecycle)
    UNPIN = "unpin"
    RESTORE = "restore"  # an archived memory made active again
    ARCHIVE = "archive"  # an unused memory archived by the maintenance pass
    EXTRACT = "extract"  # what a queued LLM extraction found in stored turns (hindsight.jobs)
    ASSESS = "assess"  # the LLM check's verdicts on held and untrusted memories (guard.assess)


@dataclass(frozen=True, slots=True)
class WriteContext:
    """Who writes, by which operation, to which owners, and when."""

    principal: Principal
    operation: Operation
    owners: tuple[str, ...]
    at: datetime


class Checkpoint(abc.ABC):
    """A component that sees every write before it is applied, and may change it.

    :meth:`review` may change the plan's memories in place (``plan.memories()``
    lists them: set a status, cap a confidence, redact content, add metadata) or
    call :meth:`refuse`, which stops the write with nothing changed.
    """

    name: str = "checkpoint"

    @abc.abstractmethod
    def review(self, plan: Plan, context: WriteContext, known: StoreKnown) -> None:
        """Check ``plan``; ``known`` reads the store as the planner did, under the lock."""

    def refuse(self, reason: str) -> None:
        """Refuse the write under review: nothing of it is stored."""
        raise WriteRefusedError(f"{self.name}: {reason}")


checkpoints: Registry[Checkpoint] = Registry("checkpoint")
"""Write checkpoints by name; ``Settings.checkpoints`` lists those in force, in order."""

Planner = Callable[["StoreKnown"], Plan]


@dataclass(frozen=True, slots=True)
class Once:
    """An idempotency key for one write: ``key`` is the caller's ``request_id``,
    ``digest`` a hash of what it asked, ``result`` what to record of the plan (JSON)."""

    key: str
    digest: str
    result: Callable[[Plan], dict[str, Any]]

    @classmethod
    def of(
        cls, request_id: str | None, asked: object, result: Callable[[Plan], dict[str, Any]]
    ) -> Once | None:
        """The key of a call that gave ``request_id`` (checked) and asked ``asked`` (as
        given: a hash of its JSON, keys sorted), or None for a call that gave none."""
        if request_id is None:
            return None
        text = json.dumps(asked, sort_keys=True, ensure_ascii=False, default=str)
        asked_digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return cls(validate.request_id(request_id), asked_digest, result)


def _owners(context: WriteContext) -> str:
    return ",".join(sorted(context.owners))


class StoreKnown:
    """What the planner may read (:class:`~hindsight.write.decide.Known`), from the store."""

    def __init__(self, store: Store, embedder: Embeddings) -> None:
        self.store = store
        # what a checkpoint embeds to compare texts
        self.encode: Callable[[Sequence[str]], Vectors] = embedder.encode_documents
        self.find_episodes = store.find_episodes
        self.children = store.children
        self.find_exact = store.find_exact
        self.get = store.get
        self.find_attribute = store.find_attribute

    def similar(self, owner: str, kind: Kind, vector: Vector, k: int) -> list[tuple[Memory, float]]:
        try:
            hits = self.store.vector_search(Filter(owners=[owner], kinds=[kind]), vector, k)
        except VectorsUnavailableError as exc:
            # the write goes on (its vector waits in the outbox); only an exact
            # duplicate (find_exact) is caught meanwhile
            _log.warning("near-duplicate check skipped: %s", exc)
            return []
        found = {m.id: m for m in self.store.get([mid for mid, _ in hits])}
        return [(found[mid], sim) for mid, sim in hits if mid in found]


class Door:
    """Plans, checks and applies every write to one store."""

    def __init__(
        self,
        store: Store,
        embedder: Embeddings,
        checks: Sequence[Checkpoint] = (),
        *,
        audit: bool = True,
        notify: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.checks = list(checks)
        self.audit = audit  # record each write in the audit log, in its transaction
        self.queued: Callable[[], None] | None = None  # told when a write queued jobs
        self.notify = notify  # told of each write the guard held or refused

    def commit(
        self,
        context: WriteContext,
        planner: Planner,
        *,
        owners: Collection[str] = (),
        once: Once | None = None,
        detail: Callable[[], dict[str, Any]] | None = None,
    ) -> Plan:
        """Plan under the lock on ``context.owners`` (and ``owners``), check, write.

        With ``once``, the write is made at most once under its key: a key already
        recorded returns a plan that writes nothing, with :attr:`Plan.replayed` set to
        the result recorded with it. ``detail``, asked once the checkpoints are done,
        says what the audit entries record of the write besides its ids (JSON).
        """
        with self.store.exclusive({*context.owners, *owners}):
            if once is not None and (done := self.recorded(context, once)) is not None:
                return Plan(replayed=done)
            plan = self._apply(context, planner, once, detail)
        self._after(context, plan)
        return plan

    def commit_held(
        self,
        context: WriteContext,
        planner: Planner,
        *,
        detail: Callable[[], dict[str, Any]] | None = None,
    ) -> Plan:
        """As :meth:`commit`, for a caller that holds ``context.owners`` already
        (:meth:`~hindsight.store.Store.exclusive`): the write joins its transaction, as the
        maintenance pass's archive joins the forgetting of the same owner."""
        plan = self._apply(context, planner, None, detail)
        self._after(context, plan)
        return plan

    def _apply(
        self,
        context: WriteContext,
        planner: Planner,
        once: Once | None,
        detail: Callable[[], dict[str, Any]] | None,
    ) -> Plan:
        """Plan, check and write, under the lock the caller holds."""
        known = StoreKnown(self.store, self.embedder)
        plan = planner(known)
        self._embed_rewritten(plan)
        encoded = {m.id: embedding_text(m) for m, _ in plan.memories()}
        for memory, _ in plan.inserts:  # an import's too: who wrote it here
            memory.provenance.principal = context.principal.name
        try:
            for check in self.checks:
                check.review(plan, context, known)
        except WriteRefusedError as exc:
            self._tell("refused", context, {"reason": str(exc)})
            raise
        plan.result.note(m for m, _ in plan.memories())  # what the checks made of it
        _keep_links_within_owners(plan, self.store)
        self._embed(context, plan, encoded)
        request = None
        if once is not None:
            request = Request(
                owners=_owners(context),
                principal=context.principal.name,
                request_id=once.key,
                digest=once.digest,
                result=once.result(plan),
                at=context.at,
            )
        if plan.inserts or plan.updates or plan.jobs or request is not None:
            self.store.write(
                insert=plan.inserts,
                update=list(plan.updates.values()),
                request=request,
                jobs=plan.jobs,
                audit=audit_entries(context, plan, once, detail() if detail else {})
                if self.audit
                else (),
            )
        return plan

    def _after(self, context: WriteContext, plan: Plan) -> None:
        """Wake the worker for the jobs a write queued; tell of what the guard held."""
        if plan.jobs and plan.replayed is None and self.queued is not None:
            self.queued()  # a worker may start on them now
        held = [m for m, _ in plan.memories() if m.status in HELD and m.review is not None]
        if held:
            self._tell("held", context, {"memories": [_held(m) for m in held]})

    def _tell(self, event: str, context: WriteContext, detail: dict[str, Any]) -> None:
        if self.notify is not None:
            self.notify(
                event,
                {
                    "owners": list(context.owners),
                    "principal": context.principal.name,
                    "operation": context.operation.value,
                    "at": context.at.isoformat(),
                    **detail,
                },
            )

    def recorded(self, context: WriteContext, once: Once) -> dict[str, Any] | None:
        """The result recorded under ``once``'s key by this caller for these owners, if
        the write was made; a key recorded for another request is a conflict. Records
        never change once written, so this may be asked before taking the lock, to
        spare the work of a write that will not be made."""
        done = self.store.request(_owners(context), context.principal.name, once.key)
        if done is None:
            return None
        if done.digest != once.digest:
            raise ConflictError(
                f"request_id {once.key!r} was used for another request; give each its own"
            )
        return done.result

    def _embed_rewritten(self, plan: Plan) -> None:
        """Embed the stored memories whose words the planner changed (``plan.needs_vector``:
        an edit, a rewrite, a restore) before the checkpoints see them: each is judged as a
        new write of its words, and the guard compares it by its vector. They stay marked
        in ``needs_vector``, which tells the checkpoints what was rewritten."""
        due = [
            m
            for mid, (m, vector) in plan.updates.items()
            if mid in plan.needs_vector and vector is None
        ]
        if not due:
            return
        try:
            vectors = self.embedder.encode_documents([embedding_text(m) for m in due])
        except EmbeddingUnavailableError:
            return  # the door queues them (_embed); the checkpoints judge them by words
        for memory, vector in zip(due, vectors, strict=True):
            plan.updates[memory.id] = (memory, vector)

    def _embed(self, context: WriteContext, plan: Plan, encoded: dict[str, str]) -> None:
        """Make the vectors the plan lacks, and remake those whose text a checkpoint changed."""
        rows = [
            *((m, v, True) for m, v in plan.inserts),
            *((m, v, False) for m, v in plan.updates.values()),
        ]
        due = [
            m
            for m, vector, new in rows
            if (vector is None and (new or m.id in plan.needs_vector))
            or embedding_text(m) != encoded.get(m.id)
        ]
        if not due:
            return
        try:
            made = self.embedder.encode_documents([embedding_text(m) for m in due])
        except EmbeddingUnavailableError as exc:
            # the endpoint is down: the memories are written without (new) vectors, found
            # by their words at once, and a job makes the vectors once it answers again
            _log.warning("%d memories wait for their vectors: %s", len(due), exc)
            plan.jobs.extend(embedding_jobs(context, due, self.embedder.model_id))
            stale = {m.id for m in due}
            plan.inserts = [(m, None if m.id in stale else v) for m, v in plan.inserts]
            plan.updates = {
                mid: (m, None if mid in stale else v) for mid, (m, v) in plan.updates.items()
            }
            plan.needs_vector.clear()
            return
        vectors = dict(zip((m.id for m in due), made, strict=True))
        plan.inserts = [(m, vectors.get(m.id, v)) for m, v in plan.inserts]
        plan.updates = {mid: (m, vectors.get(mid, v)) for mid, (m, v) in plan.updates.items()}
        plan.needs_vector.clear()


EMBED: Final = "embed"


def embedding_jobs(
    context: WriteContext, memories: Sequence[Memory], model: str
) -> list[QueuedJob]:
    """Jobs that make the vectors of ``memories`` (written while the embedding endpoint
    was down), one per owner, run by the queue until the endpoint answers; the id names
    the model and the memories, so the same work is queued once."""
    by_owner: dict[str, list[str]] = {}
    for memory in memories:
        by_owner.setdefault(memory.owner, []).append(memory.id)
    jobs = []
    for owner, ids in sorted(by_owner.items()):
        key = "\0".join([EMBED, owner, model, *ids])
        jobs.append(
            QueuedJob(
                id="j_" + hashlib.sha256(key.encode()).hexdigest()[:28],
                owner=owner,
                operation=EMBED,
                payload={"memories": ids, "model": model, "principal": context.principal.name},
                created_at=context.at,
            )
        )
    return jobs


def _held(m: Memory) -> dict[str, Any]:
    """A held memory as the reviewer's webhook is told of it: no text (a reason quotes
    the memory), the flags the scan raised and what it conflicts with."""
    assert m.review is not None
    return {
        "id": m.id,
        "owner": m.owner,
        "status": m.status.value,
        "source": m.provenance.source.value,
        "flags": list(m.flags),
        "conflicts_with": m.review.conflicts_with,
    }


def audit_entries(
    context: WriteContext, plan: Plan, once: Once | None, detail: dict[str, Any] | None = None
) -> list[AuditEntry]:
    """One entry per owner a write touched: what it added and what it changed, what the
    guard held of it, and ``detail`` (what the operation says of itself)."""
    touched: dict[str, list[str]] = {}
    held: dict[str, list[str]] = {}
    retired: dict[str, list[list[str]]] = {}  # [old, new]: what this write superseded
    written = {m.id for m, _ in plan.memories()}
    for memory, is_new in plan.memories():
        touched.setdefault(memory.owner, []).append(memory.id)
        if memory.status in HELD:
            held.setdefault(memory.owner, []).append(memory.id)
        if not is_new and memory.superseded_by in written:
            retired.setdefault(memory.owner, []).append([memory.id, memory.superseded_by])
    return [
        AuditEntry(
            at=context.at,
            principal=context.principal.name,
            owner=owner,
            action=context.operation.value,
            memory_ids=tuple(ids),
            request_id=None if once is None else once.key,
            detail={
                **(detail or {}),
                **({"held": held[owner]} if owner in held else {}),
                **({"superseded": retired[owner]} if owner in retired else {}),
            },
        )
        for owner, ids in sorted(touched.items())
    ]


def _keep_links_within_owners(plan: Plan, store: Store) -> None:
    """Drop every link (``derived_from``, ``superseded_by``) that names a memory of another
    owner, or none: one owner's forget must never cascade into another's memories, and a
    link to a memory the writer may not see reads as a link to nothing (no oracle)."""
    owner_of = {m.id: m.owner for m, _ in plan.memories()}
    outside = {
        link
        for m, _ in plan.memories()
        for link in (*m.provenance.derived_from, m.superseded_by)
        if link is not None and link not in owner_of
    }
    if outside:
        owner_of.update((m.id, m.owner) for m in store.get(sorted(outside)))
    for m, _ in plan.memories():
        links = m.provenance.derived_from
        if any(owner_of.get(link) != m.owner for link in links):
            m.provenance.derived_from = [link for link in links if owner_of.get(link) == m.owner]
        if m.superseded_by is not None and owner_of.get(m.superseded_by) != m.owner:
            m.superseded_by = None
