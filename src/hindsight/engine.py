"""The library API every interface (CLI, REST, MCP) calls: a facade over the modules
that do the work.

``Hindsight`` validates what a caller gives, checks the caller's access once (every
operation runs as a :class:`~hindsight.access.Principal`: "local" and trusted
unless :meth:`Hindsight.as_principal` says otherwise), and hands the work to
:mod:`hindsight.write` (every write, through the one door of
:mod:`hindsight.write.door`), :mod:`hindsight.recall` (recall), and
:mod:`hindsight.sessions` (working memory, summaries and reflections). Bad
input changes nothing, and each write lands in one store transaction.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from hindsight import embed, foresight, validate, views
from hindsight.access import TRUSTED, Principal
from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.errors import (
    LLMUnavailableError,
    NotFoundError,
    PermissionDeniedError,
    StoreError,
    ValidationError,
)
from hindsight.extract import Extractor
from hindsight.extract import registry as extractors
from hindsight.guard import review
from hindsight.guard.assess import Assessed
from hindsight.guard.notify import Notifier
from hindsight.guard.review import ReviewItem
from hindsight.jobs.runner import JobQueueOps, Work, Worker
from hindsight.lifecycle import MaintainReport, Maintenance, Retention, erase
from hindsight.lifecycle.feedback import marker
from hindsight.lifecycle.history import History, versions
from hindsight.lifecycle.retention import is_expired, is_retired
from hindsight.llm.meter import Meter
from hindsight.models import (
    ForgetReceipt,
    Kind,
    Memory,
    Provenance,
    RecallResult,
    RetainResult,
    Source,
    Status,
    Turn,
)
from hindsight.recall.cache import RecallCache
from hindsight.recall.expand import Expander
from hindsight.recall.search import Search
from hindsight.rerank import registry as rerankers
from hindsight.sessions.conversations import Conversations
from hindsight.sessions.distil import Distil
from hindsight.sessions.working import Sessions
from hindsight.store import (
    AuditEntry,
    Filter,
    Store,
    StoreStats,
    UsageRow,
    open_result_cache,
    open_store,
    open_working,
)
from hindsight.store.replicas import replica_reads
from hindsight.write.door import Checkpoint, Door, Once, Operation, WriteContext, checkpoints
from hindsight.write.ingest import Ingest, input_hash
from hindsight.write.transfer import memory_to_dict

MAX_K: Final = 1_000
_log = logging.getLogger("hindsight.engine")
#: Metadata an extractor reads off a memory's text; an update of the text drops it.
READ_FROM_TEXT: Final = frozenset({"value", "polarity", "detail", "applies_when"})
#: The statuses ``update(status=...)`` moves a memory between; a reviewer moves the rest.
MOVABLE: Final = (Status.ACTIVE, Status.ARCHIVED)
#: Owner weights in a recall lie in this range, so a score is always a finite number.
MIN_OWNER_WEIGHT: Final = 0.001
MAX_OWNER_WEIGHT: Final = 1_000.0


class _Unset:
    """Marks an argument that was not given, where None is a meaningful value."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


class Hindsight(Conversations, JobQueueOps):
    """Long-term and working memory for agents, embedded in the calling process.

    >>> hs = Hindsight()                                        # doctest: +SKIP
    >>> hs.retain("user:alice", "I live in Paris and I love jazz.")  # doctest: +SKIP
    >>> hs.recall("user:alice", "where does she live?")          # doctest: +SKIP
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        embedder: Embeddings | None = None,
        extractor: Extractor | None = None,
        store: Store | None = None,
        checks: Sequence[Checkpoint] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.settings = settings = settings or Settings()
        # every "now" of the engine: tests and replays give a simulated one
        self._clock: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))
        self._own_embedder = embedder is None
        self.embedder = embedder or embed.from_settings(settings)
        self.extractor = extractor or extractors.create(settings.extractor, settings)
        reranker = rerankers.create(settings.reranker, settings)  # a bad setting fails here
        if checks is None:
            # the guard always, first; with an LLM, the LLM check's trigger after them all
            check = ["assess"] if settings.llm_configured and settings.llm_assess else []
            names = list(dict.fromkeys(["guard", *settings.checkpoints, *check]))
            checks = [checkpoints.create(name, settings) for name in names]
        self.store = store or open_store(settings)
        try:
            # a model that tells its dimension only by answering takes the store's, when
            # the store is bound to it: opening calls no endpoint
            self.embedder.settle(self.store.embedding_binding())
            self.store.bind_embedding(self.embedder.model_id, self.embedder.dimension)
            self.working = open_working(settings, self.store)
        except BaseException:
            self.store.close()
            if self._own_embedder:
                self.embedder.close()
            raise
        self.principal: Principal = TRUSTED
        self._zone = validate.time_zone(settings.timezone)  # the users' days
        self._notifier = (
            None
            if settings.review_webhook_url is None
            else Notifier(settings.review_webhook_url, settings.review_webhook_secret)
        )
        self._door = Door(
            self.store,
            self.embedder,
            checks,
            audit=settings.audit,
            notify=None if self._notifier is None else self._notifier.send,
        )
        self._ingest = Ingest(
            settings,
            embedder=self.embedder,
            extractor=self.extractor,
            door=self._door,
            zone=self._zone,
        )
        self._search = Search(
            settings, self.store, self.embedder, clock=self._clock, reranker=reranker
        )
        self._recall = RecallCache(self.store, self._search, open_result_cache(settings))
        self._sessions = Sessions(settings, self.working, self._ingest, clock=self._clock)
        self._retention = Retention(settings.retention)
        self._distil = Distil(self.store, self._ingest)
        # the LLM (hindsight.llm): made on first use; every call accounted in the store
        self.llm = Meter(settings, self.store, clock=self._now)
        self._work = Work(
            settings,
            self.store,
            ingest=self._ingest,
            distil=self._distil,
            embedder=self.embedder,
            meter=self.llm,
            zone=self._zone,
            clock=self._now,
        )
        self._expander = Expander(settings, self.llm)
        if reranker is not None:
            reranker.use_llm(self.llm)
        self._worker: Worker | None = None
        # the queue runs where an LLM is configured, or a remote embedding model whose
        # outages leave vectors to make
        if (self.llm.configured or self.embedder.remote) and settings.llm_worker:
            self._worker = Worker(self._work)
            self._door.queued = self._worker.wake
        self._is_view = False

    # -- lifecycle and callers -------------------------------------------------------
    def as_principal(self, principal: Principal) -> Hindsight:
        """This engine as seen by ``principal``: the same memory, checked against its
        scopes (an owner outside them answers as an unknown one would). Closing the
        view closes nothing; close the engine it came from."""
        view = copy.copy(self)
        view.principal = principal
        view._is_view = True
        return view

    def close(self) -> None:
        if self._is_view:
            return
        try:
            if self._worker is not None:
                self._worker.close()
            self._search.flush_access(force=True)
            self._recall.close()
            self._expander.close()
            self._search.reranking.close()
            self.working.close()
            if self._notifier is not None:
                self._notifier.close()
            self.llm.close()
            if self._own_embedder:
                self.embedder.close()
        finally:
            self.store.close()

    def __enter__(self) -> Hindsight:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _context(self, operation: Operation, owner: str) -> WriteContext:
        self.principal.check_write(owner)
        return WriteContext(self.principal, operation, (owner,), self._now())

    def _now(self) -> datetime:
        now = self._clock()
        if now.tzinfo is None:
            raise ValidationError("the engine's clock must return an aware datetime")
        return now.astimezone(UTC)

    def _live(self, flt: Filter, now: datetime) -> Filter:
        """``flt`` hiding what expired or passed its owner's retention by ``now``: a
        read never returns it, whether or not a maintenance pass has forgotten it."""
        flt.live_at = now
        cutoffs = {o: c for o in flt.owners if (c := self._retention.cutoff(o, now)) is not None}
        flt.learnt_since = cutoffs or None
        return flt

    def _is_live(self, memory: Memory, now: datetime) -> bool:
        return not is_expired(memory, now) and not is_retired(
            memory, self._retention.cutoff(memory.owner, now)
        )

    def _readable(self, owner: object) -> str:
        name = validate.owner(owner)
        self.principal.check_read(name)
        return name

    # -- write path ----------------------------------------------------------------
    def retain(
        self,
        owner: str,
        content: str | None = None,
        *,
        messages: Sequence[Turn | Mapping[str, Any]] | None = None,
        kind: Kind | str | None = None,
        session_id: str | None = None,
        source: Source | str = Source.USER,
        observed_at: datetime | str | None = None,
        confidence: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        request_id: str | None = None,
        expires_at: datetime | str | None = None,
    ) -> RetainResult:
        """Remember a message, a conversation, or (with ``kind``) one memory as given.

        Without ``kind``, every turn is kept verbatim as an ``episode`` and the
        extractor distils preferences, facts, corrections and tool results from it.
        With ``kind``, ``content`` is stored as that kind directly.

        With ``request_id`` (the caller's idempotency key, kept a day) the write is made
        once: the same call again returns the first one's result and stores nothing;
        the key sent with other arguments is a :class:`ConflictError`.

        With ``expires_at`` (a time with its zone, in the future) every memory the call
        creates is hidden from reads once it has passed, and forgotten, with a receipt,
        by the next maintenance pass.
        """
        asked = [owner, content, messages, kind, session_id, source, observed_at, confidence]
        if expires_at is not None:
            asked.append(expires_at)
        once = Once.of(request_id, [*asked, metadata], lambda plan: views.retained(plan.result))
        owner = validate.owner(owner)
        session_id = validate.session_id(session_id)
        src = validate.choice(Source, source, field="source")
        when = validate.timestamp(observed_at, field="observed_at")
        reader = self._ingest.reader
        meta = reader.metadata(metadata)
        context = self._context(Operation.RETAIN, owner)
        expires = validate.expiry(expires_at, now=context.at)
        if kind is not None:
            if messages is not None:
                raise ValidationError("give either messages or kind with content, not both")
            text = reader.text(content)
            memory = self._ingest.new_memory(
                owner,
                validate.choice(Kind, kind, field="kind"),
                text,
                confidence=validate.confidence(1.0 if confidence is None else confidence),
                provenance=Provenance(
                    source=src, session_id=session_id, input_hash=input_hash(text)
                ),
                observed_at=when or context.at,
                now=context.at,
                metadata=meta,
            )
            memory.expires_at = expires
            return self._ingest.memories(context, [memory], once=once)
        turns = reader.turns(content, messages, src, when or context.at)
        return self._ingest.turns(
            context,
            owner,
            turns,
            session_id=session_id,
            metadata=meta,
            once=once,
            expires_at=expires,
        )

    # -- read path -----------------------------------------------------------------
    def recall(
        self,
        owners: str | Sequence[str] | Mapping[str, float],
        query: str,
        *,
        k: int = 10,
        kinds: Sequence[Kind | str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        min_confidence: float | None = None,
        token_budget: int | None = None,
        include_history: bool = False,
        timezone: str | None = None,
        expand: bool | None = None,
    ) -> list[RecallResult]:
        """The memories that best answer ``query``, each with why it came back.

        ``owners`` may weigh namespaces, e.g. ``{"user:alice": 1.0, "shared:team": 0.5}``;
        searching several needs read access to each. ``timezone`` (an IANA name such
        as "America/New_York", or an offset such as "-05:00") is the asker's: the days
        that "yesterday" or "on 8 May" in the query mean; by default ``settings.timezone``.
        ``min_confidence`` bounds the effective confidence: the stored one decayed for the
        weeks the memory went unused (:mod:`hindsight.lifecycle`), as each result's
        explanation shows it. Archived, expired and retired memories are never returned.
        The same recall again, of owners unchanged since, may be answered from the recall
        cache (:mod:`hindsight.recall.cache`), audited and counted all the same. With
        ``expand`` (by default ``settings.llm_expand``) and an LLM configured, the model
        splits the query into sub-queries searched beside it (:mod:`hindsight.recall.expand`).
        """
        weights = self._owner_weights(owners)
        query = self._ingest.reader.text(query, "query")
        k = validate.positive(k, field="k", maximum=MAX_K)
        if token_budget is not None:
            token_budget = validate.positive(token_budget, field="token_budget", maximum=10**7)
        flt = Filter(
            owners=list(weights),
            kinds=[validate.choice(Kind, x, field="kind") for x in kinds] if kinds else None,
            since=validate.timestamp(since, field="since"),
            until=validate.timestamp(until, field="until"),
            min_confidence=None
            if min_confidence is None
            else validate.confidence(min_confidence, field="min_confidence"),
            current_only=not include_history,
        )
        zone = self._zone if timezone is None else validate.time_zone(timezone)
        if expand is not None and not isinstance(expand, bool):
            raise ValidationError("expand must be true or false")
        self.principal.check_read(weights)
        extra: tuple[str, ...] = ()
        if (self.settings.llm_expand if expand is None else expand) and self.llm.configured:
            extra = self._expander.expand(next(iter(weights)), query)
        now = self._now()
        self._live(flt, now)
        with replica_reads():  # on a read replica, where one is set and has caught up
            results = self._recall.recall(
                self.principal,
                flt,
                query,
                k=k,
                weights=weights,
                zone=zone,
                token_budget=token_budget,
                now=now,
                extra=extra,
            )
        if self.settings.audit_recalls:
            self._audit_recall(list(weights), query, k, results)
        return results

    def _audit_recall(
        self, owners: list[str], query: str, k: int, results: list[RecallResult]
    ) -> None:
        """Who recalled what: one entry per owner searched, with the ids returned (the
        query as a hash: the log keeps no memory text). Bookkeeping: a failure to write
        it is logged, and the read it records still answers."""
        digest = hashlib.sha256(query.encode("utf-8")).hexdigest()[:16]
        read = {o: tuple(r.memory.id for r in results if r.memory.owner == o) for o in owners}
        self._audit_read("recall", read, {"query_sha256": digest, "k": k})

    def _audit_read(
        self, action: str, read: Mapping[str, tuple[str, ...]], detail: dict[str, Any]
    ) -> None:
        """Who read which ids of each owner; a failure to write it is logged, not raised."""
        at = self._now()
        entries = [
            AuditEntry(
                at=at,
                principal=self.principal.name,
                owner=owner,
                action=action,
                memory_ids=ids,
                detail=detail,
            )
            for owner, ids in read.items()
        ]
        try:
            self.store.append_audit(entries)
        except StoreError as exc:
            _log.warning("%s not audited: %s", action, exc)

    def _owner_weights(self, owners: str | Sequence[str] | Mapping[str, float]) -> dict[str, float]:
        if isinstance(owners, str):
            return {validate.owner(owners): 1.0}
        if isinstance(owners, Mapping):
            weights = {}
            for name, weight in owners.items():
                if (
                    isinstance(weight, bool)
                    or not isinstance(weight, int | float)
                    or not MIN_OWNER_WEIGHT <= weight <= MAX_OWNER_WEIGHT
                ):
                    raise ValidationError(
                        f"weight of owner {name!r} must be a number from "
                        f"{MIN_OWNER_WEIGHT:g} to {MAX_OWNER_WEIGHT:g}"
                    )
                weights[validate.owner(name)] = float(weight)
        else:
            weights = {validate.owner(name): 1.0 for name in owners}
        if not weights:
            raise ValidationError("give at least one owner")
        return weights

    def foresee(
        self, owner: str, now: datetime | str | None = None, days: int = foresight.DEFAULT_DAYS
    ) -> list[foresight.Item]:
        """What lies ahead for ``owner``: events, commitments, routines and goals they
        spoke of that are open and due from ``now``'s day (default: today) to ``days``
        days later, in ``settings.timezone``, and the open ones with no date; soonest,
        then surest, first. Read from their turns as of ``now``: a later move,
        cancellation or completion is honoured (:mod:`hindsight.foresight`)."""
        owner = self._readable(owner)
        limit = foresight.MAX_DAYS
        if isinstance(days, bool) or not isinstance(days, int) or not 0 <= days <= limit:
            raise ValidationError(f"days must be an integer from 0 to {foresight.MAX_DAYS}")
        when = validate.timestamp(now, field="now") or self._now()
        flt = Filter(owners=[owner], kinds=foresight.READ, until=when + timedelta(microseconds=1))
        self._live(flt, self._now())
        said = foresight.statements(self.store.iterate(flt))
        items = foresight.foresee(said, now=when, days=days, zone=self._zone)
        if self.settings.audit_recalls:  # a read of the owner's words, as a recall is
            ids = tuple(dict.fromkeys(mid for item in items for mid in item.memory_ids))
            self._audit_read("foresee", {owner: ids}, {"days": days, "now": when.isoformat()})
        return items

    def get(self, memory_id: str) -> Memory:
        """One memory by id (an id of an owner the caller may not read is unknown)."""
        found = self.store.get([memory_id]) if isinstance(memory_id, str) else []
        if (
            not found
            or not self.principal.can_read(found[0].owner)
            or not self._is_live(found[0], self._now())
        ):
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return found[0]

    def list_memories(
        self,
        owner: str,
        *,
        kinds: Sequence[Kind | str] | None = None,
        session_id: str | None = None,
        include_history: bool = False,
        status: Status | str = Status.ACTIVE,
        limit: int = 50,
        offset: int = 0,
    ) -> list[Memory]:
        """An owner's memories, newest observed first, a page at a time."""
        flt = Filter(
            owners=[validate.owner(owner)],
            kinds=[validate.choice(Kind, x, field="kind") for x in kinds] if kinds else None,
            session_id=validate.session_id(session_id),
            statuses=(validate.choice(Status, status, field="status"),),
            current_only=not include_history,
        )
        limit = validate.positive(limit, field="limit", maximum=MAX_K)
        self.principal.check_read(flt.owners)
        self._live(flt, self._now())
        return self.store.list_memories(flt, limit=limit, offset=validate.offset(offset))

    def owners(self) -> list[str]:
        """The owners that have memories and that the caller may read, sorted."""
        return [o for o in self.store.owners() if self.principal.can_read(o)]

    def stats(self, owner: str | None = None) -> StoreStats:
        """Counts by kind and status, the store's size and model: of one owner, or (for a
        caller that reads every owner) of all."""
        if owner is None:
            self.principal.check_read_all()
        else:
            owner = self._readable(owner)
        stats = self.store.stats(owner)
        stats.working_turns = self.working.wm_count(owner)
        return stats

    # -- update and forget -----------------------------------------------------------
    def update(
        self,
        memory_id: str,
        *,
        content: str | _Unset = UNSET,
        metadata: Mapping[str, Any] | _Unset = UNSET,
        confidence: float | _Unset = UNSET,
        query_hints: Sequence[str] | _Unset = UNSET,
        status: Status | str | _Unset = UNSET,
        expires_at: datetime | str | _Unset | None = UNSET,
    ) -> Memory:
        """Change a memory in place; new content is re-embedded. ``expires_at=None``
        clears an expiry.

        New content is judged as a new write of it by the caller (:mod:`hindsight.guard`):
        the memory's trust falls to the caller's if that is lower, the scan reads it (an
        attack is quarantined: held for review) and it is checked for conflicts, its old
        words included. ``status`` moves a memory between ``active`` and ``archived``
        only (back to active, it is judged afresh, as :meth:`restore` does). A memory held
        for review, or rejected, takes no update (:class:`ConflictError`): a reviewer
        approves or rejects it (:meth:`approve`, :meth:`reject`)."""
        reader = self._ingest.reader
        changes: dict[str, Any] = {}
        if not isinstance(content, _Unset):
            changes["content"] = reader.text(content)
        if not isinstance(metadata, _Unset):
            changes["metadata"] = reader.metadata(metadata)
        if not isinstance(confidence, _Unset):
            changes["confidence"] = validate.confidence(confidence)
        if not isinstance(query_hints, _Unset):
            if isinstance(query_hints, str) or not isinstance(query_hints, Sequence):
                raise ValidationError("query_hints must be a list of strings")
            changes["query_hints"] = [reader.text(h, "query hint") for h in query_hints]
        if not isinstance(status, _Unset):
            changes["status"] = validate.choice(Status, status, field="status")
            if changes["status"] not in MOVABLE:
                raise ValidationError(
                    "status may be set to active or archived only: a reviewer approves or "
                    "rejects a held memory, and forget deletes one"
                )
        context = self._context(Operation.UPDATE, self.get(memory_id).owner)
        if not isinstance(expires_at, _Unset):
            changes["expires_at"] = validate.expiry(expires_at, now=context.at)

        def change(memory: Memory) -> None:
            review.check_editable(memory)  # read under the lock: as it stands now
            if "content" in changes and "metadata" not in changes:
                # what the extractor read off the old text does not describe the new one
                memory.metadata = {
                    k: v for k, v in memory.metadata.items() if k not in READ_FROM_TEXT
                }
            for name, value in changes.items():
                setattr(memory, name, value)

        return self._ingest.update(context, memory_id, change)

    def feedback(self, memory_id: str, useful: bool) -> Memory:
        """Say whether a memory was of use: useful raises its confidence toward its trust
        (and that of the caller's key) with diminishing steps and marks it used; not
        useful lowers it (``settings.feedback_step`` of the way, see
        :mod:`hindsight.lifecycle.feedback`). A memory the guard holds, or a reviewer rejected,
        takes none (:class:`ConflictError`). Returns the memory as changed."""
        if not isinstance(useful, bool):
            raise ValidationError("useful must be true or false")
        context = self._context(Operation.FEEDBACK, self.get(memory_id).owner)
        change, detail = marker(
            useful=useful,
            step=self.settings.feedback_step,
            caller_trust=self.principal.trust,
            at=context.at,
        )
        return self._ingest.update(context, memory_id, change, detail=detail)

    def history(self, memory_id: str) -> History:
        """The versions of a memory, oldest first: what it superseded and what superseded
        it (``superseded_by``), each with its validity, status and who changed what and
        when (from the audit log and the row). Needs read access to its owner."""
        return versions(self.store, self.get(memory_id))

    def forget(
        self,
        memory_id: str | None = None,
        *,
        owner: str | None = None,
        session_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        source: Source | str | None = None,
        principal: str | None = None,
        dry_run: bool = False,
    ) -> ForgetReceipt:
        """Delete one memory, or an owner's memories: all, or those of one session, period
        (of ``observed_at``), source or writer (``principal``, an API key's name), as given.

        With ``memory_id``, ``owner`` (if given) must own it. What was derived only
        from deleted memories goes too, and so does any summary or reflection that
        drew on one of them; the receipt lists it all. A value a forgotten memory had
        superseded is current again (``receipt.restored_ids``): forgetting "I moved to
        Berlin" leaves the owner living in Paris, not nowhere.

        With ``dry_run`` nothing is deleted or logged: the receipt (id ``"preview"``)
        lists what would go.
        """
        if not isinstance(dry_run, bool):
            raise ValidationError("dry_run must be true or false")
        criteria: dict[str, Any]
        if memory_id is not None:
            if session_id is not None or since or until or source or principal:
                raise ValidationError("give a memory id, or an owner with filters, not both")
            memory = self.get(memory_id)
            if owner is not None and memory.owner != validate.owner(owner):
                # the same answer as for an unknown id: do not reveal whose it is
                raise NotFoundError(f"no memory with id {memory_id!r} belongs to {owner}")
            self.principal.check_write(memory.owner)
            owner, ids = memory.owner, [memory.id]
            criteria = {"id": memory_id}
        else:
            if owner is None:
                raise ValidationError("give a memory id or an owner")
            flt = Filter(
                owners=[validate.owner(owner)],
                session_id=validate.session_id(session_id),
                since=validate.timestamp(since, field="since"),
                until=validate.timestamp(until, field="until"),
                statuses=tuple(Status),
                current_only=False,
                sources=None
                if source is None
                else [validate.choice(Source, source, field="source")],
                principal=None
                if principal is None
                else validate.text(principal, field="principal", limit=200),
            )
            self.principal.check_write(flt.owners)
            ids = [m.id for m in self.store.iterate(flt)]
            criteria = {
                "owner": owner,
                "session_id": session_id,
                "since": flt.since,
                "until": flt.until,
                **({"source": flt.sources[0].value} if flt.sources else {}),
                **({"principal": flt.principal} if flt.principal is not None else {}),
            }
            if not dry_run and not (since or until or source or principal):
                self._sessions.clear(owner, session_id)
        return erase(
            self.store,
            ids,
            owner=owner,
            criteria=criteria,
            principal=self.principal.name,
            at=self._now(),
            audit=self.settings.audit,
            dry_run=dry_run,
        )

    # -- the lifecycle (hindsight.lifecycle) ----------------------------------------------
    def pin(self, memory_id: str) -> Memory:
        """Pin a memory: it neither decays nor is archived until unpinned."""
        return self._mark(Operation.PIN, memory_id, lambda m: setattr(m, "pinned", True))

    def unpin(self, memory_id: str) -> Memory:
        """Let a pinned memory decay and archive again (counting from its last use)."""
        return self._mark(Operation.UNPIN, memory_id, lambda m: setattr(m, "pinned", False))

    def restore(self, memory_id: str) -> Memory:
        """Make an archived memory active again, judged afresh by the guard (the world may
        have changed since it was archived: held, it waits for a reviewer). Restoring is
        use: its decay starts afresh, so the next maintenance pass does not archive it
        again at once."""
        memory = self.get(memory_id)
        if memory.status is not Status.ARCHIVED:
            raise ValidationError(
                f"memory {memory_id!r} is {memory.status.value}, not archived: nothing to restore"
            )

        def restore(m: Memory) -> None:
            if m.status is not Status.ARCHIVED:  # changed since it was read
                raise ValidationError(f"memory {memory_id!r} is no longer archived")
            m.status = Status.ACTIVE
            m.used_at = context.at

        context = self._context(Operation.RESTORE, memory.owner)
        return self._ingest.update(context, memory_id, restore)

    def _mark(
        self, operation: Operation, memory_id: str, change: Callable[[Memory], None]
    ) -> Memory:
        context = self._context(operation, self.get(memory_id).owner)
        return self._ingest.update(context, memory_id, change)

    def maintain(self, as_of: datetime | str | None = None) -> MaintainReport:
        """Run the maintenance pass over every owner, as at ``as_of`` (default: now):
        forget what expired (``expired``) or passed its owner's retention
        (``forgotten``), each batch with a receipt, and archive what went stale
        (``archived``). Owner by owner, each in its own transaction; running it again at
        the same time does nothing. Needs write access to every owner."""
        self.principal.check_write_all()
        when = validate.timestamp(as_of, field="as_of") if as_of is not None else self._now()
        assert when is not None
        self._search.flush_access(force=True)  # recalls are use: count them first
        return Maintenance.of(self.settings, self.store).run(
            self.store.owners(), now=when, principal=self.principal, door=self._door
        )

    # -- the review queue and the audit log (hindsight.guard.review, hindsight.guard) -------------
    def review_queue(
        self, owner: str | None = None, *, limit: int = 50, offset: int = 0
    ) -> list[ReviewItem]:
        """What the guard held (quarantined or pending review), newest first, each with
        the memories it conflicts with: of ``owner``, or (for a caller that reads
        every owner) of all."""
        limit = validate.positive(limit, field="limit", maximum=MAX_K)
        owners = [self._readable(owner)] if owner is not None else self._all_owners()
        return review.pending(self.store, owners, limit=limit, offset=validate.offset(offset))

    def approve(self, memory_id: str) -> list[Memory]:
        """Make a held memory active as if it had passed the guard (with what was held
        with it); returns them, the memory first. For an admin, a rejected memory too
        (undoing the rejection, with what was rejected with it).

        Needs a reviewer (``"review": true``; the local user is one) with write access to
        its owner, and not the one that wrote it (:class:`PermissionDeniedError`): the
        writer is not the reviewer. An id the caller may not read is unknown."""
        context = self._context(Operation.REVIEW, self.get(memory_id).owner)
        return review.decide(self._door, context, memory_id, approve=True)

    def reject(self, memory_id: str, *, forget: bool | None = None) -> list[Memory] | ForgetReceipt:
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
        self,
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

    def verify_audit(self) -> dict[str, Any]:
        """Check the audit log's hash chain: ``{"entries": n, "intact": bool,
        "broken_at": seq or None}``. Needs an audit key that reads every owner."""
        if not self.principal.audit:
            raise PermissionDeniedError(f"key {self.principal.name!r} may not read the audit log")
        self.principal.check_read_all()
        checked, broken = self.store.verify_audit()
        return {"entries": checked, "intact": broken is None, "broken_at": broken}

    def assess(self, owner: str) -> Assessed:
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
        self, owner: str | None = None, *, since: datetime | str | None = None
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

    def warm(
        self,
        owners: Sequence[str] | None = None,
        *,
        limit: int | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> int:
        """Load (or build) what recall reads of ``owners`` (by default the ``limit`` that
        changed last; every owner without a limit), so that their first recalls cost
        what later ones do: a server does it as it starts. ``stop`` is asked before each
        owner (true: stop there). Returns how many owners it warmed."""
        if owners is None:
            self.principal.check_read_all()
            names = self.store.recent_owners(limit) if limit is not None else self.store.owners()
        else:
            names = [self._readable(owner) for owner in owners]
        done = 0
        for name in names:
            if stop is not None and stop():
                break
            self.store.warm(name)
            done += 1
        return done

    def doctor(self, *, check_endpoints: bool = True) -> dict[str, Any]:
        """What this engine is configured with and whether each endpoint answers: the
        embedding model (its dimension, and how many memories hold vectors of each
        version), the reranker, the LLM, the store and its vector backend; with
        ``check_endpoints``, one cheap call to each (see :mod:`hindsight.doctor`). Never
        a key or password. Needs a caller that reads every owner."""
        from hindsight import doctor

        self.principal.check_read_all()
        return doctor.report(
            self.settings,
            store=self.store,
            embedder=self.embedder,
            reranker=self._search.reranking.reranker,
            check_endpoints=check_endpoints,
        )

    def _all_owners(self) -> list[str]:
        self.principal.check_read_all()
        return self.store.owners()

    # -- export and import -------------------------------------------------------------
    def export(self, owner: str, *, include_history: bool = True) -> Iterator[dict[str, Any]]:
        """Every memory of ``owner`` as a JSON-ready dict, oldest first (no vectors)."""
        flt = Filter(
            owners=[self._readable(owner)], statuses=tuple(Status), current_only=not include_history
        )
        return (memory_to_dict(memory) for memory in self.store.iterate(flt))

    def import_records(
        self, records: Iterable[Mapping[str, Any]], *, request_id: str | None = None
    ) -> dict[str, int]:
        """Load exported dicts, re-embedding them; ids the owner already holds are skipped.

        Every record is checked (and the caller's write access to its owner) before
        anything is written, so a bad line imports nothing. A record whose id another
        owner holds gets a fresh id, as an unknown one would be imported. ``request_id`` makes the
        import once, as for :meth:`retain`.
        """
        context = WriteContext(self.principal, Operation.IMPORT, (), self._now())
        return self._ingest.records(context, records, request_id=request_id)
