"""The storage seam: everything the engine asks of a backend.

:class:`Store` is implemented once over SQL (:mod:`hindsight.store.sql`), on SQLite
(:mod:`hindsight.store.sqlite`) or PostgreSQL (:mod:`hindsight.store.postgres`), with
vectors behind their own seam (:mod:`hindsight.store.vectors`). :class:`WorkingMemory`
lives in the store's database (:mod:`hindsight.store.working`) or in Redis
(:mod:`hindsight.store.redis_working`).
No SQL or driver import may appear outside this package (a test enforces it).
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from hindsight.models import Kind, Memory, Source, Status


@dataclass(slots=True)
class Filter:
    """Which memories a read may see."""

    owners: Sequence[str]
    kinds: Sequence[Kind] | None = None
    since: datetime | None = None  # on observed_at
    until: datetime | None = None
    min_confidence: float | None = None
    min_trust: float | None = None  # the guard's: memories from sources trusted this much
    statuses: Sequence[Status] = (Status.ACTIVE,)
    current_only: bool = True  # hide superseded memories (valid_to set)
    session_id: str | None = None
    sources: Sequence[Source] | None = None
    principal: str | None = None  # the API key's name that wrote it
    # hide what expired by this time (expires_at at or before it), before a pass forgets it
    live_at: datetime | None = None
    # hide, by owner, what was learnt before this time (past the owner's retention)
    learnt_since: Mapping[str, datetime] | None = None


# A run: the messages one speaker (and source) sent in a row in a session, each within
# RUN_GAP of the one before. People type one thought as several short messages; recall
# reads a run as one statement, and a turn's keyword context counts it as one turn.
RUN_GAP: Final = timedelta(minutes=10)


@dataclass(frozen=True, slots=True)
class TextIndexing:
    """What keyword search sees of a turn besides its own words."""

    context_turns: int = 2  # neighbouring turns (runs) of the same session, on each side
    context_chars: int = 300  # of each neighbour: context supplements a short turn only
    context_weight: float = 0.5  # BM25 weight of the neighbours' words (a turn's own: 1)
    zone: tzinfo = UTC  # whose days a memory's date words are ("8 May 2023", "yesterday")


@dataclass(slots=True)
class WorkingTurn:
    """One entry of a session's working memory."""

    seq: int
    owner: str
    session_id: str
    role: str
    content: str
    tokens: int
    created_at: datetime
    expires_at: datetime
    speaker: str | None = None
    tool_name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Request:
    """A write made under an idempotency key, as recorded with it: the same key again
    (from the same caller, for the same owners) answers ``result`` and writes nothing."""

    owners: str  # the owners written, sorted, comma-separated
    principal: str
    request_id: str
    digest: str  # of what was asked: the key used for another request is a conflict
    result: dict[str, Any]
    at: datetime


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One entry of the audit log: who did what to which memories of an owner, when.

    ``seq`` and ``hash`` are set by the store (the hash chains it to the entry before)."""

    at: datetime
    principal: str
    owner: str | None
    action: str  # retain, update, import, forget, recall, approve, reject, ...
    memory_ids: tuple[str, ...] = ()
    request_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    seq: int | None = None
    hash: str | None = None


@dataclass(frozen=True, slots=True)
class UsageEntry:
    """One call to an LLM provider, as accounted (see :mod:`hindsight.llm.meter`).

    ``owner`` is ``""`` for a call made for no owner; ``cost`` (USD) is None when the
    model has no price."""

    at: datetime
    owner: str
    operation: str
    provider: str
    model: str | None
    prompt_tokens: int
    completion_tokens: int
    failed: bool = False
    retries: int = 0
    dropped: bool = False  # the answer was invalid and nothing of it was used
    cost: float | None = None
    dropped_items: int = 0  # items of its answers left out as invalid


@dataclass(frozen=True, slots=True)
class UsageRow:
    """LLM use added up for one owner, operation and model: calls, failed calls,
    transport retries, dropped answers, tokens, cost (USD; None when no call of them had
    a price), and items of answers dropped as invalid (the rest of each answer kept)."""

    owner: str
    operation: str
    model: str | None
    calls: int
    failures: int
    retries: int
    dropped: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    dropped_items: int = 0


#: A queued job's states: ``pending`` (runs once ``not_before`` has passed), ``deferred``
#: (waits out an owner's LLM budget, then runs as pending), ``running`` (leased to a
#: worker until ``lease_until``; a lease that lapses, its worker gone, is taken again),
#: ``done`` and ``failed`` (gave up: ``error`` says why).
JOB_STATES: Final = ("pending", "deferred", "running", "done", "failed")


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """Background work kept in the database (see :mod:`hindsight.jobs`): it survives a
    restart, and servers sharing the database take turns at it by lease. ``id`` is
    derived from what the job does, so queueing the same work again adds nothing."""

    id: str
    owner: str
    operation: str
    payload: dict[str, Any]
    created_at: datetime
    state: str = "pending"
    attempts: int = 0
    not_before: datetime | None = None
    updated_at: datetime | None = None
    holder: str | None = None
    lease_until: datetime | None = None
    error: str | None = None
    result: dict[str, Any] | None = None


@dataclass(slots=True)
class StoreStats:
    memories: int
    by_kind: dict[str, int]
    by_status: dict[str, int]
    owners: int
    working_turns: int
    embedding_model: str | None
    dimension: int | None
    # the whole store's files; for one owner, its own text and vectors (characters of
    # content, hints and metadata, 4 bytes a vector dimension), which no other owner moves
    size_bytes: int
    # of one owner: the memories it holds now by the month (UTC, "2026-05") hindsight
    # learnt them, by kind and by status; empty for the whole store
    by_month: dict[str, dict[str, int]] = field(default_factory=dict)
    by_month_status: dict[str, dict[str, int]] = field(default_factory=dict)


class ResultCache(abc.ABC):
    """Text values under string keys, each kept for a while: in this process, or in
    Redis shared by servers. A failure to reach it is a
    :class:`~hindsight.errors.StoreError`."""

    @abc.abstractmethod
    def get(self, key: str) -> str | None:
        """The value kept under ``key``, if it has not expired."""

    @abc.abstractmethod
    def put(self, key: str, value: str, ttl_seconds: int) -> None:
        """Keep ``value`` under ``key`` for ``ttl_seconds``."""

    def close(self) -> None:  # noqa: B027 - nothing to release by default
        """Release what it holds (a connection)."""


class WorkingMemory(abc.ABC):
    """Sessions' recent turns: in the store's database, or in Redis for shared servers."""

    @abc.abstractmethod
    def wm_append(self, turn: WorkingTurn) -> WorkingTurn:
        """Append a turn; returns it with its sequence number."""

    @abc.abstractmethod
    def wm_window(self, owner: str, session_id: str, now: datetime) -> list[WorkingTurn]:
        """A session's unexpired turns, oldest first."""

    @abc.abstractmethod
    def wm_clear(self, owner: str, session_id: str, *, up_to_seq: int | None = None) -> int:
        """Drop a session's turns (all, or those with seq <= up_to_seq); returns how many."""

    @abc.abstractmethod
    def wm_sessions(self, owner: str, now: datetime) -> list[tuple[str, int, int]]:
        """Open sessions of an owner: (session id, turns, tokens)."""

    @abc.abstractmethod
    def wm_purge_expired(self, now: datetime) -> int: ...

    @abc.abstractmethod
    def wm_count(self, owner: str | None = None) -> int:
        """Turns held, of one owner or of all."""

    @abc.abstractmethod
    def close(self) -> None: ...


class Store(abc.ABC):
    """A long-term memory backend."""

    # -- lifecycle ---------------------------------------------------------
    @abc.abstractmethod
    def close(self) -> None: ...

    @abc.abstractmethod
    def bind_embedding(self, model_id: str, dimension: int, *, rebind: bool = False) -> None:
        """Record the store's embedding model; refuse a different one.

        With ``rebind`` the store adopts ``model_id`` instead, and refuses a plain bind
        until :meth:`finish_rebind` says every vector was remade (see ``hindsight.jobs.reembed``).
        """

    @abc.abstractmethod
    def embedding_binding(self) -> tuple[str, int] | None:
        """The model and dimension the store is bound to (None: not yet bound); read
        without binding, so a provider that learns its dimension need not call its model."""

    @abc.abstractmethod
    def stale_vectors(self, limit: int) -> list[Memory]:
        """Up to ``limit`` memories whose vector another model than the bound one made."""

    @abc.abstractmethod
    def replace_vectors(self, pairs: Sequence[tuple[Memory, npt.NDArray[np.float32]]]) -> None:
        """Store new vectors (of the bound model) for these memories, in one transaction.

        Their keyword-index text is derived anew as well, so a store moved to a new
        version gets both of its indexes as that version makes them.
        """

    @abc.abstractmethod
    def finish_rebind(self) -> None:
        """End a rebind; refused while :meth:`stale_vectors` finds any."""

    @abc.abstractmethod
    def vector_versions(self) -> dict[tuple[str, int], int]:
        """How many memories hold a vector of each embedding version (model, dimension)."""

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """Where the store is and which vector backend it uses, for ``hindsight doctor``:
        ``database`` (``sqlite`` and its ``path``, or ``postgresql``, its ``host`` and
        its read ``replicas``) and ``vectors``; never a user or password."""

    # -- long-term memory --------------------------------------------------
    @abc.abstractmethod
    def exclusive(self, owners: Collection[str]) -> AbstractContextManager[None]:
        """Hold these owners for one writer: until the block ends, no other thread or
        process writes them or holds them. Reads in the block see what is committed,
        and every :meth:`write` in it joins one transaction, committed when the block
        ends and rolled back if it raises. The write door plans inside it."""

    @abc.abstractmethod
    def write(
        self,
        *,
        insert: Sequence[tuple[Memory, npt.NDArray[np.float32] | None]] = (),
        update: Sequence[tuple[Memory, npt.NDArray[np.float32] | None]] = (),
        request: Request | None = None,
        audit: Sequence[AuditEntry] = (),
        jobs: Sequence[QueuedJob] = (),
    ) -> None:
        """Insert and update memories in one transaction (all or nothing), and record
        ``request``, ``audit`` and ``jobs`` in it (so a write, its key, its audit entries
        and the background work it queues land together or not at all; a job whose id
        is queued already is not queued again).

        An update with a vector replaces the memory's vector; ``None`` keeps it.
        """

    @abc.abstractmethod
    def request(self, owners: str, principal: str, request_id: str) -> Request | None:
        """The write recorded under this key, if any."""

    @abc.abstractmethod
    def prune_requests(self, before: datetime) -> int:
        """Forget the keys of writes recorded before ``before``; returns how many."""

    @abc.abstractmethod
    def get(self, ids: Sequence[str]) -> list[Memory]:
        """The memories with these ids, in the given order, skipping unknown ones."""

    @abc.abstractmethod
    def list_memories(self, flt: Filter, *, limit: int, offset: int = 0) -> list[Memory]:
        """Memories matching the filter, newest observed first."""

    @abc.abstractmethod
    def count(self, flt: Filter) -> int: ...

    @abc.abstractmethod
    def iterate(self, flt: Filter) -> Iterator[Memory]:
        """Every memory matching the filter, oldest first (for export)."""

    @abc.abstractmethod
    def find_attribute(self, owner: str, kind: Kind, attribute: str) -> list[Memory]:
        """Current (not superseded) active memories filling a single-valued attribute."""

    @abc.abstractmethod
    def find_exact(self, owner: str, kind: Kind, content: str) -> Memory | None:
        """A current memory of this owner and kind with exactly this content."""

    @abc.abstractmethod
    def find_episodes(self, owner: str, session_id: str | None, content: str) -> list[Memory]:
        """Verbatim turns of this owner and session with exactly this content, oldest first."""

    @abc.abstractmethod
    def next_turns(self, ids: Sequence[str], flt: Filter) -> dict[str, Memory]:
        """For each episode id, the episode right after it in its session, if it passes
        the filter (the turn that answers it, when it is a question)."""

    @abc.abstractmethod
    def run_mates(self, ids: Sequence[str], flt: Filter, *, reach: int) -> dict[str, list[Memory]]:
        """For each episode id, the other turns of its run (see :data:`RUN_GAP`), at most
        ``reach`` on each side, nearest first; those that pass the filter. Ids with none
        are left out."""

    @abc.abstractmethod
    def vector_search(
        self, flt: Filter, query: npt.NDArray[np.float32], k: int
    ) -> list[tuple[str, float]]:
        """Memory ids and cosine similarities, best first, within the filter."""

    @abc.abstractmethod
    def term_frequencies(self, owner: str, terms: Collection[str]) -> tuple[dict[str, int], int]:
        """How many of ``owner``'s memories say each of ``terms`` (keyword terms:
        :func:`hindsight.store.keyword.text_terms`) in their own text, and how many
        memories the keyword index holds for it."""

    @abc.abstractmethod
    def keyword_search(self, flt: Filter, query: str, k: int) -> list[tuple[str, float]]:
        """Memory ids and BM25 scores (higher is better), best first, within the filter."""

    @abc.abstractmethod
    def generations(self, owners: Sequence[str]) -> dict[str, int]:
        """For each owner, a number that grows with every committed change to its
        memories, made by any process (a write, an update, a forget, a re-embedding: each
        in the same transaction as the change), and never returns to a value it had: what
        a cache of reads keys on (:mod:`hindsight.recall.cache`). Recorded access does
        not change it."""

    @abc.abstractmethod
    def identity(self) -> str:
        """A name for this store's data, the same in every process that opens it: caches
        shared by stores (a Redis) keep their entries apart by it."""

    @abc.abstractmethod
    def record_access(self, hits: dict[str, int], at: datetime) -> None:
        """Add ``hits[id]`` to each memory's access count; set last_accessed_at."""

    @abc.abstractmethod
    def predecessors(self, ids: Sequence[str]) -> list[Memory]:
        """The memories these ids superseded (whose ``superseded_by`` names one of them)."""

    @abc.abstractmethod
    def children(self, parent_ids: Sequence[str]) -> list[Memory]:
        """Memories directly derived from any of these ids."""

    @abc.abstractmethod
    def stated_values(self, parent_ids: Sequence[str]) -> dict[str, list[str | None]]:
        """Of each of these ids, for each memory of an attribute derived from it, the id of
        the memory that superseded it since, or None (ids without any are left out)."""

    @abc.abstractmethod
    def derived_closure(self, ids: Sequence[str], *, quoting: Collection[Kind] = ()) -> list[str]:
        """Ids of memories derived, directly or transitively, from these ids only.

        A memory of a ``quoting`` kind (a summary) goes when any one of its sources goes.
        """

    @abc.abstractmethod
    def delete(
        self, ids: Sequence[str], *, receipt: dict[str, Any], audit: Sequence[AuditEntry] = ()
    ) -> list[str]:
        """Remove memories, their vectors, index entries and links; keep the receipt and
        the audit entries, in the same transaction. What a removed memory had superseded
        becomes current again (or superseded by its successor, if it had one): the ids of
        those made current are returned, kept in the receipt, and named in their owner's
        audit entry (``detail["restored"]``), so their history tells why they are current."""

    @abc.abstractmethod
    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        """Chain entries onto the audit log in a transaction of their own (a recall's)."""

    @abc.abstractmethod
    def audit(
        self,
        *,
        owners: Sequence[str] | None = None,
        principal: str | None = None,
        action: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> list[AuditEntry]:
        """Audit entries matching every filter given, newest first."""

    @abc.abstractmethod
    def audit_about(self, owner: str, ids: Sequence[str], *, limit: int) -> list[AuditEntry]:
        """Up to ``limit`` entries of ``owner`` that name one of these ids (among their
        memory ids, or as a value a forget made current again), oldest first; recalls
        are left out (a recall changes nothing)."""

    @abc.abstractmethod
    def verify_audit(self) -> tuple[int, int | None]:
        """(entries checked, seq of the first entry whose hash chain breaks, or None)."""

    @abc.abstractmethod
    def prune_audit(self, before: datetime) -> int:
        """Drop audit entries older than ``before``; returns how many."""

    @abc.abstractmethod
    def receipts(self, owner: str | None = None, limit: int = 50) -> list[dict[str, Any]]: ...

    @abc.abstractmethod
    def record_usage(self, entry: UsageEntry) -> None:
        """Account one LLM call, in a transaction of its own."""

    @abc.abstractmethod
    def usage(
        self, *, owners: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[UsageRow]:
        """LLM use by owner, operation and model (of ``owners``, or every owner), at or
        after ``since``; sorted by owner, operation, model."""

    @abc.abstractmethod
    def tokens_used(self, owner: str, since: datetime) -> int:
        """Prompt and completion tokens ``owner``'s LLM calls used at or after ``since``."""

    # -- the job queue (hindsight.jobs) --------------------------------------------------
    @abc.abstractmethod
    def claim_jobs(
        self,
        holder: str,
        *,
        now: datetime,
        until: datetime,
        limit: int,
        owners: Sequence[str] | None = None,
    ) -> list[QueuedJob]:
        """Lease up to ``limit`` jobs due by ``now`` (pending or deferred with
        ``not_before`` passed, or running on a lapsed lease) to ``holder`` until
        ``until``, oldest first, each counted as an attempt. Two holders never lease
        one job at once."""

    @abc.abstractmethod
    def finish_job(
        self,
        job_id: str,
        holder: str,
        *,
        state: str,
        now: datetime,
        not_before: datetime | None = None,
        error: str | None = None,
        result: Mapping[str, Any] | None = None,
        attempts: int | None = None,
    ) -> bool:
        """Record how ``holder``'s run of a job ended (``state`` any but running; with
        ``not_before`` when it may run again, ``attempts`` to set the count). False when
        the lease was no longer ``holder``'s: another worker took the job over."""

    @abc.abstractmethod
    def jobs(
        self,
        *,
        owners: Sequence[str] | None = None,
        states: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[QueuedJob]:
        """Queued jobs (of ``owners`` and ``states``, or all), newest first."""

    @abc.abstractmethod
    def retry_jobs(self, *, owners: Sequence[str] | None, now: datetime) -> int:
        """Put failed jobs (of ``owners``, or all) back to pending, due now, with no
        attempts counted; returns how many."""

    @abc.abstractmethod
    def job_counts(self, owners: Sequence[str] | None = None) -> dict[str, int]:
        """How many jobs are in each state (of ``owners``, or all); every state named."""

    @abc.abstractmethod
    def lease(self, name: str, holder: str, *, until: datetime, now: datetime) -> bool:
        """Take or renew the lease ``name`` for ``holder`` until ``until``: True when
        ``holder`` holds it now (it was free, lapsed by ``now``, or already its own),
        False while another holder's runs. Servers sharing a database run a scheduled
        job only while they hold its lease."""

    @abc.abstractmethod
    def owners(self) -> list[str]:
        """Every owner that has memories, sorted."""

    @abc.abstractmethod
    def recent_owners(self, limit: int) -> list[str]:
        """The ``limit`` owners whose memories changed last, latest first."""

    @abc.abstractmethod
    def warm(self, owner: str) -> None:
        """Load or build what a search of ``owner`` reads (its keyword and vector
        indexes), so that its first recall costs what a later one does."""

    @abc.abstractmethod
    def speakers(self, owner: str, limit: int = 200) -> list[str]:
        """The names that speak in ``owner``'s memories (at most ``limit``), sorted."""

    @abc.abstractmethod
    def stats(self, owner: str | None = None) -> StoreStats:
        """Counts of long-term memory; ``working_turns`` is 0 (working memory is apart)."""
