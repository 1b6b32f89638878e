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
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from hindsight import embed, validate
from hindsight.access import TRUSTED, Principal
from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.engine.conversations import Conversations
from hindsight.engine.edits import Edits
from hindsight.engine.entities import Entities
from hindsight.engine.oversight import Oversight
from hindsight.engine.queue import JobQueueOps
from hindsight.engine.reads import Reads
from hindsight.engine.writes import Writes
from hindsight.entities.cache import Graphs
from hindsight.errors import ValidationError
from hindsight.extract import Extractor
from hindsight.extract import registry as extractors
from hindsight.guard.notify import Notifier
from hindsight.jobs.runner import Work, Worker
from hindsight.lifecycle import Retention
from hindsight.lifecycle.retention import is_expired, is_retired
from hindsight.llm import registry as llms
from hindsight.llm.meter import Meter
from hindsight.models import MAX_K as MAX_K  # where interfaces have read them
from hindsight.models import UNSET as UNSET
from hindsight.models import Memory
from hindsight.models import _Unset as _Unset
from hindsight.recall.cache import RecallCache
from hindsight.recall.expand import Expander
from hindsight.recall.search import Search
from hindsight.rerank import registry as rerankers
from hindsight.sessions.distil import Distil
from hindsight.sessions.working import Sessions
from hindsight.store import Filter, Store, open_result_cache, open_store, open_working
from hindsight.write.door import Checkpoint, Door, Operation, WriteContext, checkpoints
from hindsight.write.ingest import Ingest


class Hindsight(Writes, Reads, Edits, Oversight, Conversations, Entities, JobQueueOps):
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
        self._graphs = Graphs(self.store)
        self._search = Search(
            settings,
            self.store,
            self.embedder,
            clock=self._clock,
            reranker=reranker,
            graphs=self._graphs,
        )
        self._recall = RecallCache(self.store, self._search, open_result_cache(settings))
        self._sessions = Sessions(settings, self.working, self._ingest, clock=self._clock)
        self._retention = Retention(settings.retention)
        self._distil = Distil(self.store, self._ingest)
        # the LLM (hindsight.llm): made on first use; every call accounted in the store
        self.llm = Meter(
            settings,
            self.store,
            make=lambda: llms.create(settings.llm_provider, settings),
            clock=self._now,
        )
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

    # -- read path -----------------------------------------------------------------

    # -- update and forget -----------------------------------------------------------

    # -- the lifecycle (hindsight.lifecycle) ----------------------------------------------

    # -- the review queue and the audit log (hindsight.guard.review, hindsight.guard) -------------

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

    # -- export and import -------------------------------------------------------------
