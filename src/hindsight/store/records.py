"""What crosses the storage seam: the values a store takes and gives back.

Plain data, no behaviour: a read's :class:`Filter`, the entries of the audit and usage
logs, a queued job, a write's idempotency record, a session's working turn, and a
store's counts. The seam itself (what a backend does with them) is
:mod:`hindsight.store.base`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Final

from hindsight.models import Kind, Source, Status


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
