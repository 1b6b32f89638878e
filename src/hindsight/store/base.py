"""The storage seam: everything the engine asks of a backend, by concern.

:class:`Store` is every concern's protocol in one: :class:`Binding` (the embedding
model), :class:`Memories` (rows written and read), :class:`Lineage` (what memories came
from and replaced, and forgetting), :class:`Episodes` (conversations' turns),
:class:`Search`, :class:`AuditLog`, :class:`UsageLog`, :class:`JobQueue` and
:class:`Census` (owners and counts). Code that needs one concern may ask for its
protocol alone. The values they take and give are :mod:`hindsight.store.records`.

:class:`Store` is implemented once over SQL (:mod:`hindsight.store.sql`), on SQLite
(:mod:`hindsight.store.sqlite`) or PostgreSQL (:mod:`hindsight.store.postgres`), with
vectors behind their own seam (:mod:`hindsight.store.vectors`). :class:`WorkingMemory`
lives in the store's database (:mod:`hindsight.store.working`) or in Redis
(:mod:`hindsight.store.redis_working`).
No SQL or driver import may appear outside this package (a test enforces it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from hindsight.models import Kind, Memory
from hindsight.store.records import (
    AuditEntry,
    Filter,
    QueuedJob,
    Request,
    StoreStats,
    UsageEntry,
    UsageRow,
    WorkingTurn,
)


class ResultCache(Protocol):
    """Text values under string keys, each kept for a while: in this process, or in
    Redis shared by servers. A failure to reach it is a
    :class:`~hindsight.errors.StoreError`."""

    def get(self, key: str) -> str | None:
        """The value kept under ``key``, if it has not expired."""

    def put(self, key: str, value: str, ttl_seconds: int) -> None:
        """Keep ``value`` under ``key`` for ``ttl_seconds``."""

    def close(self) -> None:
        """Release what it holds (a connection); nothing by default."""
        return None


class WorkingMemory(Protocol):
    """Sessions' recent turns: in the store's database, or in Redis for shared servers."""

    def wm_append(self, turn: WorkingTurn) -> WorkingTurn:
        """Append a turn; returns it with its sequence number."""

    def wm_window(self, owner: str, session_id: str, now: datetime) -> list[WorkingTurn]:
        """A session's unexpired turns, oldest first."""

    def wm_clear(self, owner: str, session_id: str, *, up_to_seq: int | None = None) -> int:
        """Drop a session's turns (all, or those with seq <= up_to_seq); returns how many."""

    def wm_sessions(self, owner: str, now: datetime) -> list[tuple[str, int, int]]:
        """Open sessions of an owner: (session id, turns, tokens)."""

    def wm_purge_expired(self, now: datetime) -> int: ...

    def wm_count(self, owner: str | None = None) -> int:
        """Turns held, of one owner or of all."""

    def close(self) -> None: ...


class Binding(Protocol):
    """Which embedding model made the store's vectors, and moving them to another."""

    def bind_embedding(self, model_id: str, dimension: int, *, rebind: bool = False) -> None:
        """Record the store's embedding model; refuse a different one.

        With ``rebind`` the store adopts ``model_id`` instead, and refuses a plain bind
        until :meth:`finish_rebind` says every vector was remade (see ``hindsight.jobs.reembed``).
        """

    def embedding_binding(self) -> tuple[str, int] | None:
        """The model and dimension the store is bound to (None: not yet bound); read
        without binding, so a provider that learns its dimension need not call its model."""

    def stale_vectors(self, limit: int) -> list[Memory]:
        """Up to ``limit`` memories whose vector another model than the bound one made."""

    def replace_vectors(self, pairs: Sequence[tuple[Memory, npt.NDArray[np.float32]]]) -> None:
        """Store new vectors (of the bound model) for these memories, in one transaction.

        Their keyword-index text is derived anew as well, so a store moved to a new
        version gets both of its indexes as that version makes them.
        """

    def finish_rebind(self) -> None:
        """End a rebind; refused while :meth:`stale_vectors` finds any."""

    def vector_versions(self) -> dict[tuple[str, int], int]:
        """How many memories hold a vector of each embedding version (model, dimension)."""


class Memories(Protocol):
    """Long-term memory's rows: written in one transaction, read by id or by filter."""

    def exclusive(self, owners: Collection[str]) -> AbstractContextManager[None]:
        """Hold these owners for one writer: until the block ends, no other thread or
        process writes them or holds them. Reads in the block see what is committed,
        and every :meth:`write` in it joins one transaction, committed when the block
        ends and rolled back if it raises. The write door plans inside it."""

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

    def request(self, owners: str, principal: str, request_id: str) -> Request | None:
        """The write recorded under this key, if any."""

    def prune_requests(self, before: datetime) -> int:
        """Forget the keys of writes recorded before ``before``; returns how many."""

    def get(self, ids: Sequence[str]) -> list[Memory]:
        """The memories with these ids, in the given order, skipping unknown ones."""

    def list_memories(self, flt: Filter, *, limit: int, offset: int = 0) -> list[Memory]:
        """Memories matching the filter, newest observed first."""

    def count(self, flt: Filter) -> int: ...

    def iterate(self, flt: Filter) -> Iterator[Memory]:
        """Every memory matching the filter, oldest first (for export)."""

    def find_attribute(self, owner: str, kind: Kind, attribute: str) -> list[Memory]:
        """Current (not superseded) active memories filling a single-valued attribute."""

    def find_exact(self, owner: str, kind: Kind, content: str) -> Memory | None:
        """A current memory of this owner and kind with exactly this content."""

    def record_access(self, hits: dict[str, int], at: datetime) -> None:
        """Add ``hits[id]`` to each memory's access count; set last_accessed_at."""


class Lineage(Protocol):
    """What memories were derived from and superseded, and forgetting them with what
    follows from them."""

    def predecessors(self, ids: Sequence[str]) -> list[Memory]:
        """The memories these ids superseded (whose ``superseded_by`` names one of them)."""

    def children(self, parent_ids: Sequence[str]) -> list[Memory]:
        """Memories directly derived from any of these ids."""

    def stated_values(self, parent_ids: Sequence[str]) -> dict[str, list[str | None]]:
        """Of each of these ids, for each memory of an attribute derived from it, the id of
        the memory that superseded it since, or None (ids without any are left out)."""

    def derived_closure(self, ids: Sequence[str], *, quoting: Collection[Kind] = ()) -> list[str]:
        """Ids of memories derived, directly or transitively, from these ids only.

        A memory of a ``quoting`` kind (a summary) goes when any one of its sources goes.
        """

    def delete(
        self, ids: Sequence[str], *, receipt: dict[str, Any], audit: Sequence[AuditEntry] = ()
    ) -> list[str]:
        """Remove memories, their vectors, index entries and links; keep the receipt and
        the audit entries, in the same transaction. What a removed memory had superseded
        becomes current again (or superseded by its successor, if it had one): the ids of
        those made current are returned, kept in the receipt, and named in their owner's
        audit entry (``detail["restored"]``), so their history tells why they are current."""

    def receipts(self, owner: str | None = None, limit: int = 50) -> list[dict[str, Any]]: ...


class Episodes(Protocol):
    """Verbatim turns of conversations, and the turns around one."""

    def find_episodes(self, owner: str, session_id: str | None, content: str) -> list[Memory]:
        """Verbatim turns of this owner and session with exactly this content, oldest first."""

    def next_turns(self, ids: Sequence[str], flt: Filter) -> dict[str, Memory]:
        """For each episode id, the episode right after it in its session, if it passes
        the filter (the turn that answers it, when it is a question)."""

    def run_mates(self, ids: Sequence[str], flt: Filter, *, reach: int) -> dict[str, list[Memory]]:
        """For each episode id, the other turns of its run (see
        :data:`~hindsight.store.records.RUN_GAP`), at most ``reach`` on each side,
        nearest first; those that pass the filter. Ids with none are left out."""

    def speakers(self, owner: str, limit: int = 200) -> list[str]:
        """The names that speak in ``owner``'s memories (at most ``limit``), sorted."""


class Search(Protocol):
    """Vector and keyword search within a filter, and what caches of it key on."""

    def vector_search(
        self, flt: Filter, query: npt.NDArray[np.float32], k: int
    ) -> list[tuple[str, float]]:
        """Memory ids and cosine similarities, best first, within the filter."""

    def term_frequencies(self, owner: str, terms: Collection[str]) -> tuple[dict[str, int], int]:
        """How many of ``owner``'s memories say each of ``terms`` (keyword terms:
        :func:`hindsight.text.terms.text_terms`) in their own text, and how many
        memories the keyword index holds for it."""

    def keyword_search(self, flt: Filter, query: str, k: int) -> list[tuple[str, float]]:
        """Memory ids and BM25 scores (higher is better), best first, within the filter."""

    def passing(self, flt: Filter, ids: Collection[str]) -> set[str]:
        """Those of ``ids`` whose memories are within the filter (hits found elsewhere,
        such as recall's entity channel)."""

    def generations(self, owners: Sequence[str]) -> dict[str, int]:
        """For each owner, a number that grows with every committed change to its
        memories, made by any process (a write, an update, a forget, a re-embedding: each
        in the same transaction as the change), and never returns to a value it had: what
        a cache of reads keys on (:mod:`hindsight.recall.cache`). Recorded access does
        not change it."""

    def warm(self, owner: str) -> None:
        """Load or build what a search of ``owner`` reads (its keyword and vector
        indexes), so that its first recall costs what a later one does."""


class AuditLog(Protocol):
    """Who did what to which memories: a hash-chained log (:mod:`hindsight.store.audit`)."""

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        """Chain entries onto the audit log in a transaction of their own (a recall's)."""

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

    def audit_about(self, owner: str, ids: Sequence[str], *, limit: int) -> list[AuditEntry]:
        """Up to ``limit`` entries of ``owner`` that name one of these ids (among their
        memory ids, or as a value a forget made current again), oldest first; recalls
        are left out (a recall changes nothing)."""

    def verify_audit(self) -> tuple[int, int | None]:
        """(entries checked, seq of the first entry whose hash chain breaks, or None)."""

    def prune_audit(self, before: datetime) -> int:
        """Drop audit entries older than ``before``; returns how many."""


class UsageLog(Protocol):
    """What the LLM calls made for each owner used (:mod:`hindsight.store.usage`)."""

    def record_usage(self, entry: UsageEntry) -> None:
        """Account one LLM call, in a transaction of its own."""

    def usage(
        self, *, owners: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[UsageRow]:
        """LLM use by owner, operation and model (of ``owners``, or every owner), at or
        after ``since``; sorted by owner, operation, model."""

    def tokens_used(self, owner: str, since: datetime) -> int:
        """Prompt and completion tokens ``owner``'s LLM calls used at or after ``since``."""


class JobQueue(Protocol):
    """Background work kept in the database for :mod:`hindsight.jobs` (rows:
    :mod:`hindsight.store.queue`), and leases of scheduled work."""

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

    def jobs(
        self,
        *,
        owners: Sequence[str] | None = None,
        states: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[QueuedJob]:
        """Queued jobs (of ``owners`` and ``states``, or all), newest first."""

    def retry_jobs(self, *, owners: Sequence[str] | None, now: datetime) -> int:
        """Put failed jobs (of ``owners``, or all) back to pending, due now, with no
        attempts counted; returns how many."""

    def job_counts(self, owners: Sequence[str] | None = None) -> dict[str, int]:
        """How many jobs are in each state (of ``owners``, or all); every state named."""

    def lease(self, name: str, holder: str, *, until: datetime, now: datetime) -> bool:
        """Take or renew the lease ``name`` for ``holder`` until ``until``: True when
        ``holder`` holds it now (it was free, lapsed by ``now``, or already its own),
        False while another holder's runs. Servers sharing a database run a scheduled
        job only while they hold its lease."""


class Census(Protocol):
    """Who holds memories and how many, and what the store is."""

    def owners(self) -> list[str]:
        """Every owner that has memories, sorted."""

    def recent_owners(self, limit: int) -> list[str]:
        """The ``limit`` owners whose memories changed last, latest first."""

    def stats(self, owner: str | None = None) -> StoreStats:
        """Counts of long-term memory; ``working_turns`` is 0 (working memory is apart)."""

    def describe(self) -> dict[str, Any]:
        """Where the store is and which vector backend it uses, for ``hindsight doctor``:
        ``database`` (``sqlite`` and its ``path``, or ``postgresql``, its ``host`` and
        its read ``replicas``) and ``vectors``; never a user or password."""

    def identity(self) -> str:
        """A name for this store's data, the same in every process that opens it: caches
        shared by stores (a Redis) keep their entries apart by it."""


class Store(
    Binding,
    Memories,
    Lineage,
    Episodes,
    Search,
    AuditLog,
    UsageLog,
    JobQueue,
    Census,
    Protocol,
):
    """A long-term memory backend: every concern of the seam, in one object."""

    def close(self) -> None: ...
