"""The data model: memories, turns, recall results and receipts.

These are plain, typed values; the store persists them and the engine moves
them around. Validation of user input happens in :mod:`hindsight.validate`.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

#: The most results (or listed items) one call returns.
MAX_K: Final = 1_000


class _Unset:
    """Marks an argument that was not given, where None is a meaningful value."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


class Kind(enum.StrEnum):
    """What a long-term memory is."""

    PREFERENCE = "preference"
    FACT = "fact"
    EXPERIENCE = "experience"
    TOOL_RESULT = "tool_result"
    EPISODE = "episode"  # a verbatim turn
    SUMMARY = "summary"
    REFLECTION = "reflection"


class Source(enum.StrEnum):
    """Who a memory came from: the basis of trust."""

    USER = "user"
    AGENT = "agent"
    TOOL = "tool"
    SYSTEM = "system"
    EXTERNAL = "external"  # a retrieved document, a web page, a feed
    IMPORT = "import"  # an imported record that named no source


# The conversational role a source speaks in: what a turn's ``role`` field holds.
ROLE_OF_SOURCE: Final[Mapping[Source, str]] = {
    Source.USER: "user",
    Source.AGENT: "assistant",
    Source.TOOL: "tool",
    Source.SYSTEM: "system",
    Source.EXTERNAL: "tool",
    Source.IMPORT: "user",
}


class Tag(enum.StrEnum):
    """An event an extraction records (in a memory's ``metadata["tags"]``); the
    reflections and summaries build on them, and a turn with one is consolidated at once."""

    CORRECTION = "correction"  # the user corrected the assistant
    TOOL_FAILURE = "tool_failure"  # a tool call failed


TAG_VALUES: Final = frozenset(t.value for t in Tag)


class Status(enum.StrEnum):
    """Where a memory stands: only active memories are recalled by default."""

    ACTIVE = "active"
    ARCHIVED = "archived"
    PENDING_REVIEW = "pending_review"  # the guard held it: it conflicts with a trusted memory
    QUARANTINED = "quarantined"  # the guard held it: it reads as an attack (see its flags)
    REJECTED = "rejected"  # a reviewer turned it down; kept as history
    DELETED = "deleted"


HELD: Final = (Status.PENDING_REVIEW, Status.QUARANTINED)
"""The statuses of the review queue."""


@dataclass(slots=True)
class Provenance:
    """Where a memory came from."""

    source: Source = Source.USER
    session_id: str | None = None
    derived_from: list[str] = field(default_factory=list)  # memory or turn ids
    speaker: str | None = None
    principal: str | None = None  # the API key's name that wrote it, or "local"
    input_hash: str | None = None  # sha256 of the raw text it was made from


VERDICTS: Final = ("consistent", "contradicts", "suspicious", "unsure")
"""What the LLM check (:mod:`hindsight.guard.assess`) may say of a memory."""


@dataclass(slots=True)
class Assessment:
    """What the LLM check said of a memory, for the person who reviews it: advice, never
    a decision (it may hold a memory, it never approves or releases one)."""

    verdict: str  # one of VERDICTS
    reason: str  # the model's, one short sentence: shown to reviewers, never stored as content
    against: list[str] = field(default_factory=list)  # the trusted memories it rests on (ids)
    model: str | None = None  # "llm:<model>"
    at: str | None = None  # ISO 8601


@dataclass(slots=True)
class Review:
    """Why the guard held a memory for review, what it conflicts with, and, once a
    reviewer decided, what and who decided (kept as the memory's history). The LLM
    check adds its ``assessment`` to a held memory, and to an untrusted one it judged
    and left active (whose ``reason`` then says it was not held)."""

    reason: str
    conflicts_with: list[str] = field(default_factory=list)  # memory ids
    decision: str | None = None  # "approved" or "rejected"
    decided_by: str | None = None  # the reviewer's principal
    decided_at: str | None = None  # ISO 8601
    assessment: Assessment | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Review:
        """A review as stored (:func:`dataclasses.asdict`), its assessment too."""
        fields = dict(data)
        judged = fields.pop("assessment", None)
        return cls(**fields, assessment=None if judged is None else Assessment(**judged))


@dataclass(slots=True)
class Memory:
    """One long-term memory.

    ``observed_at`` is when it was said (may lie in the past for imported
    history); ``created_at``/``updated_at`` are when the store learnt it.
    A fact that changes is superseded, never overwritten: the old row keeps its
    content, gets ``valid_to`` and ``superseded_by``.
    """

    id: str
    owner: str
    kind: Kind
    content: str
    confidence: float
    provenance: Provenance
    observed_at: datetime
    created_at: datetime
    updated_at: datetime
    query_hints: list[str] = field(default_factory=list)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    last_accessed_at: datetime | None = None
    access_count: int = 0
    status: Status = Status.ACTIVE
    embedding_model: str | None = None
    attribute: str | None = None  # single-valued slot, e.g. "user.location"
    metadata: dict[str, Any] = field(default_factory=dict)
    trust: float = 1.0  # how far its source is believed, 0..1; confidence never exceeds it
    flags: list[str] = field(default_factory=list)  # what the guard's scan found in it
    review: Review | None = None  # set while the guard holds it (and kept after a decision)
    screened: bool = False  # the guard read it as it was written (recall screens the rest)
    pinned: bool = False  # neither decays nor archives (hindsight.lifecycle)
    used_at: datetime | None = None  # last restated (reinforced) or marked useful
    expires_at: datetime | None = None  # forgotten, with a receipt, once past


@dataclass(slots=True)
class Turn:
    """One message of a conversation, as given to :meth:`Hindsight.retain`."""

    role: str  # "user", "assistant", "tool", "system"
    content: str
    speaker: str | None = None  # a display name, e.g. "Caroline"
    observed_at: datetime | None = None
    tool_name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    source: Source | None = None  # who said it, where the role does not tell ("external")


@dataclass(slots=True)
class ChannelHit:
    """A result's place in one search channel."""

    rank: int  # 1-based
    score: float


@dataclass(slots=True)
class Explanation:
    """Why a result came back, and how its score was made."""

    channels: dict[str, ChannelHit]
    fused: float
    boosts: dict[str, float]
    final: float
    owner_weight: float = 1.0
    # the confidence the "confidence" boost used: the stored one decayed for the weeks the
    # memory went unused (hindsight.lifecycle); None where no decay applied
    confidence: float | None = None
    # channels this recall went without, their source down (e.g. "dense": the embedding
    # endpoint did not answer): the ranking is what the others found
    unavailable: list[str] = field(default_factory=list)
    # the rerank step, when a reranker is configured (hindsight.rerank.step): its
    # "provider", whether it was "applied" to this recall, and this result's raw "score"
    # and "rank" by it, or the "error" it fell back on; "ms" it took, "tokens" an LLM used
    rerank: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            **({} if self.confidence is None else {"confidence": round(self.confidence, 6)}),
            **({"unavailable": list(self.unavailable)} if self.unavailable else {}),
            **({} if self.rerank is None else {"rerank": dict(self.rerank)}),
            "channels": {
                name: {"rank": hit.rank, "score": round(hit.score, 6)}
                for name, hit in self.channels.items()
            },
            "fused": round(self.fused, 6),
            "boosts": {name: round(v, 6) for name, v in self.boosts.items()},
            "owner_weight": self.owner_weight,
            "final": round(self.final, 6),
        }


@dataclass(slots=True)
class RecallResult:
    memory: Memory
    score: float
    explanation: Explanation


@dataclass(slots=True)
class RetainResult:
    """What one retain call did."""

    episodes: list[str] = field(default_factory=list)  # ids of verbatim turns kept
    created: list[str] = field(default_factory=list)  # new extracted memories
    updated: list[str] = field(default_factory=list)  # duplicates merged into existing
    superseded: list[tuple[str, str]] = field(default_factory=list)  # (old id, new id)
    # where each memory the call wrote stands once the guard judged it (a turn kept
    # before, retained again, is not written and not listed), and why the guard held
    # each one it held: a held memory is not recalled until a reviewer approves it
    status: dict[str, Status] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def held(self) -> list[str]:
        """The ids the guard held (quarantined or pending review), in the order written."""
        return [mid for mid, status in self.status.items() if status in HELD]

    def note(self, memories: Iterable[Memory]) -> None:
        """Record the status, and the guard's reason if it held it, of each of ``memories``
        that this result names (episodes, created, updated)."""
        named = {*self.episodes, *self.created, *self.updated}
        for m in memories:
            if m.id not in named:
                continue
            self.status[m.id] = m.status
            if m.status in HELD and m.review is not None:
                self.reasons[m.id] = m.review.reason


@dataclass(slots=True)
class ForgetReceipt:
    """Proof of a deletion: what was removed, when, and why."""

    id: str
    deleted_ids: list[str]
    derived_ids: list[str]
    at: datetime
    criteria: dict[str, Any]
    # older values made current again: what a forgotten memory had superseded
    restored_ids: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.deleted_ids) + len(self.derived_ids)


def new_id(prefix: str = "m") -> str:
    """A time-ordered unique id: 12 hex digits of milliseconds, then 16 random ones."""
    ms = int(datetime.now(UTC).timestamp() * 1000)
    return f"{prefix}_{ms:012x}{uuid.uuid4().hex[:16]}"


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about four characters per token)."""
    return max(1, (len(text) + 3) // 4)
