"""The bodies of the long-term memory routes: retain, recall, foresight, list, update,
forget, import, owners and stats."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, get_type_hints

from pydantic import BaseModel, Field, create_model

from hindsight import views
from hindsight.api.schemas.base import (
    KIND_RULE,
    STATUS_RULE,
    TIME_HELP,
    In,
    Role,
    one_of,
    owner_field,
    session_field,
)
from hindsight.foresight import Item
from hindsight.models import (
    ForgetReceipt,
    Kind,
    Memory,
    RecallResult,
    RetainResult,
    Source,
    Status,
)
from hindsight.recall import request
from hindsight.recall.request import RecallRequest
from hindsight.store import StoreStats


# -- memories ---------------------------------------------------------------------------------
class ProvenanceOut(BaseModel):
    source: str
    session_id: str | None
    speaker: str | None
    derived_from: list[str]
    principal: str | None = Field(description="The API key's name that wrote it, or local.")
    input_hash: str | None = Field(description="sha256 of the raw text it was made from.")


class AssessmentOut(BaseModel):
    verdict: str = Field(description="consistent, contradicts, suspicious or unsure.")
    reason: str = Field(description="The model's reason, for the reviewer (its text, as data).")
    against: list[str] = Field(description="The trusted memories the verdict rests on.")
    model: str | None = Field(default=None, description="The model that judged it.")
    at: str | None = Field(default=None, description="When, ISO 8601.")


class ReviewOut(BaseModel):
    reason: str = Field(description="Why the guard held the memory.")
    conflicts_with: list[str] = Field(description="The memories it conflicts with.")
    decision: str | None = Field(default=None, description="approved or rejected, once decided.")
    decided_by: str | None = Field(default=None, description="Who decided.")
    decided_at: str | None = Field(default=None, description="When, ISO 8601.")
    assessment: AssessmentOut | None = Field(
        default=None, description="What the LLM check said of it (advice: it decides nothing)."
    )


class MemoryOut(BaseModel):
    """One long-term memory, as exported (without the export format number)."""

    id: str
    owner: str
    kind: str
    content: str
    query_hints: list[str]
    confidence: float
    provenance: ProvenanceOut
    observed_at: datetime
    created_at: datetime
    updated_at: datetime
    valid_from: datetime | None
    valid_to: datetime | None
    superseded_by: str | None
    last_accessed_at: datetime | None
    access_count: int
    status: str
    embedding_model: str | None
    attribute: str | None
    metadata: dict[str, Any]
    trust: float = Field(description="How far its source is believed, 0..1.")
    flags: list[str] = Field(description="What the guard's safety scan found in it.")
    review: ReviewOut | None = Field(description="Why the guard held it, if it did.")
    screened: bool = Field(description="Whether the guard read it as it was written.")
    pinned: bool = Field(default=False, description="Pinned: it neither decays nor archives.")
    used_at: datetime | None = Field(
        default=None, description="When it was last restated or marked useful."
    )
    expires_at: datetime | None = Field(
        default=None, description="When it is forgotten (with a receipt), if ever."
    )

    @classmethod
    def of(cls, memory: Memory) -> MemoryOut:
        return cls.model_validate(views.memory(memory), strict=False)


class MessageIn(In):
    role: Role = "user"
    content: str
    speaker: str | None = None
    observed_at: str | None = Field(default=None, description=TIME_HELP)
    tool_name: str | None = None
    metadata: dict[str, Any] | None = None
    source: str | None = Field(
        default=None,
        description="Who said it, where the role does not tell (e.g. external).",
        json_schema_extra=one_of(Source, nullable=True),
    )


class RetainIn(In):
    owner: str = owner_field()
    content: str | None = Field(default=None, description="A message; or give messages.")
    messages: list[MessageIn] | None = Field(default=None, description="A conversation.")
    kind: str | None = Field(
        default=None,
        description="Store content as one memory of this kind, verbatim (no extraction).",
        json_schema_extra=one_of(Kind, nullable=True),
    )
    session_id: str | None = session_field("The session the text belongs to.")
    source: str = Field(default="user", json_schema_extra=one_of(Source))
    observed_at: str | None = Field(default=None, description=TIME_HELP)
    confidence: float | None = Field(default=None, json_schema_extra={"minimum": 0, "maximum": 1})
    metadata: dict[str, Any] | None = None
    expires_at: str | None = Field(
        default=None,
        description="Forget what this creates after this time (ISO 8601 with its zone).",
    )


class Superseded(BaseModel):
    old: str
    new: str


class RetainOut(BaseModel):
    episodes: list[str]
    created: list[str]
    updated: list[str]
    superseded: list[Superseded]
    status: dict[str, Annotated[str, Field(json_schema_extra=STATUS_RULE)]] = Field(
        default_factory=dict,
        description="Each memory the call wrote, by id, and its status once the guard judged "
        "it: quarantined or pending_review means held, not recalled until a reviewer "
        "approves it.",
    )
    reasons: dict[str, str] = Field(
        default_factory=dict, description="Why the guard held each held memory, by id."
    )

    @classmethod
    def of(cls, r: RetainResult) -> RetainOut:
        return cls.model_validate(views.retained(r))


#: JSON's types for the fields of a recall request where the library takes more (times
#: as datetimes, kinds as enum members, owners as any sequence or mapping).
_RECALL_WIRE: Final[dict[str, Any]] = {
    "owners": str | list[str] | dict[str, float],
    "kinds": list[Annotated[str, Field(json_schema_extra=KIND_RULE)]] | None,
    "since": str | None,
    "until": str | None,
}


def _recall_in() -> type[In]:
    """The body of POST /v1/recall: the fields of :class:`RecallRequest`, their
    defaults, help and bounds, in JSON's types."""
    hints = get_type_hints(RecallRequest)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(RecallRequest):
        default = ... if f.default is dataclasses.MISSING else f.default
        bounds = request.bounds_of(f.name)
        fields[f.name] = (
            _RECALL_WIRE.get(f.name, hints[f.name]),
            Field(
                default,
                description=request.help_of(f.name),
                json_schema_extra=bounds or None,  # type: ignore[arg-type]
            ),
        )
    doc = "A recall: whose memories (owners), what (query), and how."
    return create_model("RecallIn", __base__=In, __doc__=doc, **fields)


if TYPE_CHECKING:
    RecallIn = In
else:
    RecallIn = _recall_in()


class ChannelHitOut(BaseModel):
    rank: int
    score: float


class RerankOut(BaseModel):
    """The rerank step of the recall (with a reranker configured)."""

    provider: str
    applied: bool = Field(description="Whether the reranker's scores were used this time.")
    ms: float = Field(description="What the rerank step took, in milliseconds.")
    score: float | None = Field(
        default=None, description="This result's score by the reranker, on its own scale."
    )
    rank: int | None = Field(default=None, description="This result's rank by the reranker.")
    tokens: int | None = Field(default=None, description="LLM tokens the step used.")
    error: str | None = Field(
        default=None,
        description="Why the reranker was not applied (down, slow, misconfigured, an "
        "unreadable answer): the results keep the engine's order.",
    )


class ExplanationOut(BaseModel):
    channels: dict[str, ChannelHitOut]
    fused: float
    boosts: dict[str, float]
    owner_weight: float
    final: float
    confidence: float | None = Field(
        default=None,
        description="The effective confidence the confidence boost used: the stored one, "
        "decayed for the weeks the memory went unused.",
    )
    unavailable: list[str] = Field(
        default_factory=list,
        description="Channels this recall went without, their source down (dense: the "
        "embedding endpoint did not answer); the ranking is what the others found.",
    )
    rerank: RerankOut | None = None


class RecallHit(BaseModel):
    memory: MemoryOut
    score: float
    explanation: ExplanationOut

    @classmethod
    def of(cls, r: RecallResult) -> RecallHit:
        return cls.model_validate(views.recall_hit(r), strict=False)


class RecallOut(BaseModel):
    results: list[RecallHit]


class ForesightItemOut(BaseModel):
    """One thing ahead for an owner (:mod:`hindsight.foresight`)."""

    content: str = Field(description="The owner's words for it.")
    due: str | None = Field(
        description="When it is due: an ISO date, or a date and time with its offset; null "
        "for an undated commitment or goal."
    )
    kind: Literal["event", "commitment", "routine", "goal"]
    memory_ids: list[str] = Field(description="The owner's memories it was read from.")
    confidence: float = Field(description="How sure the reading is, 0..1.")

    @classmethod
    def of(cls, item: Item) -> ForesightItemOut:
        return cls.model_validate(views.foresight_item(item))


class ForesightOut(BaseModel):
    items: list[ForesightItemOut] = Field(description="Soonest first, undated last.")


class MemoryPage(BaseModel):
    memories: list[MemoryOut]
    limit: int
    offset: int
    next_offset: int | None = Field(description="The offset of the next page; null on the last.")
    next: str | None = Field(description="The URL of the next page; null on the last.")


class MemoryList(BaseModel):
    memories: list[MemoryOut]


class UpdateIn(In):
    """Only the fields given are changed; new content is re-embedded."""

    content: str | None = None
    metadata: dict[str, Any] | None = None
    confidence: float | None = Field(default=None, json_schema_extra={"minimum": 0, "maximum": 1})
    query_hints: list[str] | None = None
    status: str | None = Field(default=None, json_schema_extra=one_of(Status, nullable=True))
    expires_at: str | None = Field(
        default=None,
        description="Forget it after this time (ISO 8601 with its zone); null clears it.",
    )


class ForgetIn(In):
    owner: str = owner_field()
    session_id: str | None = session_field("Only this session's memories (and its working memory).")
    since: str | None = Field(default=None, description=TIME_HELP)
    until: str | None = Field(default=None, description=TIME_HELP)
    source: str | None = Field(
        default=None,
        description="Only memories from this source, e.g. tool.",
        json_schema_extra=one_of(Source, nullable=True),
    )
    principal: str | None = Field(
        default=None, description="Only memories this writer (an API key's name) wrote."
    )
    dry_run: bool = Field(
        default=False, description="Delete nothing: the receipt (id 'preview') lists what would go."
    )


class ReceiptOut(BaseModel):
    id: str
    count: int
    deleted_ids: list[str]
    derived_ids: list[str]
    restored_ids: list[str] = Field(
        default_factory=list, description="Older values made current again."
    )
    at: datetime
    criteria: dict[str, Any]

    @classmethod
    def of(cls, r: ForgetReceipt) -> ReceiptOut:
        return cls.model_validate(views.receipt(r), strict=False)


class ImportIn(In):
    records: list[dict[str, Any]] = Field(description="Memories as exported, one object each.")


class ImportOut(BaseModel):
    imported: int
    skipped: int
    held: int = Field(
        description="Of those imported, how many the guard holds (quarantined or pending "
        "review); GET /v1/review lists them with the reasons.",
    )


class OwnersOut(BaseModel):
    owners: list[str] = Field(description="Owners with memories that the key may read.")


class StatsOut(BaseModel):
    memories: int
    by_kind: dict[str, int]
    by_status: dict[str, int]
    owners: int
    working_turns: int
    embedding_model: str | None
    dimension: int | None
    size_bytes: int
    by_month: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="Of one owner: its memories by the UTC month they were learnt, by kind.",
    )
    by_month_status: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="Of one owner: its memories by the UTC month they were learnt, by status.",
    )

    @classmethod
    def of(cls, s: StoreStats) -> StatsOut:
        return cls.model_validate(views.stats(s))
