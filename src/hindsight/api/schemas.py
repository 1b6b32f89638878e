"""The REST API's request and response bodies (pydantic), and their conversions from the library.

Request models type the JSON only; the library validates values (owners, session
ids, kinds, times, limits), so every interface answers bad input with the same
message. The schema still states those rules (patterns, enums, bounds) for readers
and generated clients. Times are ISO 8601 strings, as the library accepts them.

Types are strict: a value of the wrong JSON type is refused (422, naming the field),
never coerced (``"k": "5"``, ``"k": true``, ``"dry_run": "yes"``); a whole number is
a number, ``1`` where a number is asked. A query string is text by nature: an integer
parameter takes digits (``?limit=5``) and a boolean ``true`` or ``false``, nothing else.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, get_type_hints

from fastapi import Path, Query
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model
from pydantic_core import PydanticCustomError

from hindsight import validate, views
from hindsight.foresight import Item
from hindsight.guard.review import ReviewItem
from hindsight.lifecycle.history import History
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
from hindsight.store import AuditEntry, StoreStats, WorkingTurn

Role = Literal["user", "assistant", "tool", "system"]
TIME_HELP: Final = "An ISO 8601 date or time, e.g. 2024-05-01 or 2024-05-01T14:30:00Z."
OWNER_RULE: Final[dict[str, Any]] = {
    "pattern": f"^{validate.OWNER_RE.pattern}$",
    "examples": ["user:alice"],
}
SESSION_RULE: Final[dict[str, Any]] = {
    "pattern": f"^{validate.SESSION_RE.pattern}$",
    "examples": ["s1"],
}
OWNER_HELP: Final = "Whose memory, as namespace:name, e.g. user:alice."


def one_of(enum: type[StrEnum], *, nullable: bool = False) -> dict[str, Any]:
    values: list[str | None] = [member.value for member in enum]
    return {"enum": [*values, None] if nullable else values}


def _owner() -> Any:
    return Field(description=OWNER_HELP, json_schema_extra=OWNER_RULE)


def _session(description: str = "The session.") -> Any:
    return Field(default=None, description=description, json_schema_extra=SESSION_RULE)


KIND_RULE: Final = one_of(Kind)
STATUS_RULE: Final = one_of(Status)
OwnerQuery = Annotated[str, Query(description=OWNER_HELP, json_schema_extra=OWNER_RULE)]
SessionPath = Annotated[str, Path(description="The session.", json_schema_extra=SESSION_RULE)]


# -- query strings: text parsed strictly (after Query(...) in Annotated, so the schema holds) --
_DIGITS: Final = re.compile(r"-?[0-9]+")


def _whole_number(value: object) -> object:
    if isinstance(value, str) and not _DIGITS.fullmatch(value):
        raise PydanticCustomError("int_parsing", "Input should be an integer, in digits")
    return value


def _truth(value: object) -> object:
    if isinstance(value, str):
        if value.lower() not in ("true", "false"):
            raise PydanticCustomError("bool_parsing", "Input should be true or false")
        return value.lower() == "true"
    return value


WHOLE: Final = BeforeValidator(_whole_number)
"""An integer query parameter: ``Annotated[int, Query(...), WHOLE]`` (not ``5.0``, ``1_000``)."""
TRUTH: Final = BeforeValidator(_truth)
"""A boolean query parameter: ``Annotated[bool, Query(...), TRUTH]`` (not ``yes`` or ``1``)."""
QueryBool = Annotated[bool, Query(), TRUTH]


class _In(BaseModel):
    """A request body: unknown fields are an error, so a typo is not silently ignored, and
    types are strict, so a value of the wrong JSON type is refused, not coerced.

    Infinity and NaN (which Python's JSON reader accepts) are refused as numbers.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)


# -- errors -----------------------------------------------------------------------------------
class ErrorDetail(BaseModel):
    type: str = Field(description="The error class, e.g. ValidationError or NotFoundError.")
    message: str = Field(description="What was wrong, naming the argument.")


class ErrorBody(BaseModel):
    error: ErrorDetail


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


class MessageIn(_In):
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


class RetainIn(_In):
    owner: str = _owner()
    content: str | None = Field(default=None, description="A message; or give messages.")
    messages: list[MessageIn] | None = Field(default=None, description="A conversation.")
    kind: str | None = Field(
        default=None,
        description="Store content as one memory of this kind, verbatim (no extraction).",
        json_schema_extra=one_of(Kind, nullable=True),
    )
    session_id: str | None = _session("The session the text belongs to.")
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


def _recall_in() -> type[_In]:
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
    return create_model("RecallIn", __base__=_In, __doc__=doc, **fields)


if TYPE_CHECKING:
    RecallIn = _In
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


class UpdateIn(_In):
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


class ForgetIn(_In):
    owner: str = _owner()
    session_id: str | None = _session("Only this session's memories (and its working memory).")
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


class ImportIn(_In):
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


# -- feedback and history --------------------------------------------------------------------
class FeedbackIn(_In):
    useful: bool = Field(
        description="true: the memory was of use (confidence rises toward its trust, and "
        "it counts as used); false: it was not (confidence falls)."
    )


class HistoryEventOut(BaseModel):
    at: datetime
    principal: str | None = Field(description="Who: an API key's name, or local.")
    action: str = Field(description="The operation: retain, update, review, feedback, forget, ...")
    what: str = Field(
        description="What it did to this version: created, imported, restated, changed, "
        "superseded, held for review, approved, rejected, marked useful, marked not useful, "
        "current again."
    )
    memory_id: str
    detail: dict[str, Any] = Field(
        description="superseded_by, receipt, useful and confidence [before, after], as they apply."
    )


class VersionOut(BaseModel):
    memory: MemoryOut
    events: list[HistoryEventOut] = Field(description="What happened to it, oldest first.")


class HistoryOut(BaseModel):
    memory_id: str = Field(description="The memory asked about: one of the versions.")
    versions: list[VersionOut] = Field(description="Oldest first.")
    derived: list[MemoryOut] = Field(
        default_factory=list,
        description="What was derived from the memory asked about: a turn's facts, a "
        "summary or lesson drawing on it.",
    )

    @classmethod
    def of(cls, h: History) -> HistoryOut:
        return cls.model_validate(views.history(h), strict=False)


# -- the review queue and the audit log -------------------------------------------------------
class ReviewItemOut(BaseModel):
    memory: MemoryOut = Field(description="The held memory; its review says why.")
    conflicts: list[MemoryOut] = Field(description="The owner's memories it conflicts with.")

    @classmethod
    def of(cls, item: ReviewItem) -> ReviewItemOut:
        return cls.model_validate(views.review_item(item), strict=False)


class ReviewPage(BaseModel):
    items: list[ReviewItemOut]
    limit: int
    offset: int
    next_offset: int | None = Field(description="The offset of the next page; null on the last.")


class RejectIn(_In):
    forget: bool | None = Field(
        default=None,
        description="Delete it (the answer is then a receipt), or keep it as rejected "
        "history; by default the server's on_reject setting.",
    )


class AuditEntryOut(BaseModel):
    seq: int | None = Field(description="Its place in the log; page back with before_seq.")
    at: datetime
    principal: str = Field(description="Who did it: an API key's name, or local.")
    owner: str | None
    action: str = Field(description="retain, update, import, forget, review, recall, ...")
    memory_ids: list[str]
    request_id: str | None
    detail: dict[str, Any]
    hash: str | None = Field(description="The entry's hash, chained to the entry before.")

    @classmethod
    def of(cls, e: AuditEntry) -> AuditEntryOut:
        return cls.model_validate(views.audit_entry(e), strict=False)


class AuditPage(BaseModel):
    entries: list[AuditEntryOut]
    next_before_seq: int | None = Field(
        description="before_seq for the next (older) page; null on the last."
    )


class AuditCheckOut(BaseModel):
    entries: int = Field(description="How many entries were checked.")
    intact: bool
    broken_at: int | None = Field(description="The first entry whose hash does not chain.")


# -- working memory ---------------------------------------------------------------------------
class ObserveIn(_In):
    owner: str = _owner()
    content: str
    role: Role = "user"
    speaker: str | None = None
    tool_name: str | None = None
    metadata: dict[str, Any] | None = None


class ObserveOut(BaseModel):
    consolidated: bool = Field(description="Whether the window moved to long-term memory.")
    retained: RetainOut | None


class OwnerIn(_In):
    owner: str = _owner()


class TurnOut(BaseModel):
    seq: int
    owner: str
    session_id: str
    role: str
    content: str
    tokens: int
    created_at: datetime
    expires_at: datetime
    speaker: str | None
    tool_name: str | None
    metadata: dict[str, Any]

    @classmethod
    def of(cls, t: WorkingTurn) -> TurnOut:
        return cls.model_validate(views.turn(t), strict=False)


class WindowOut(BaseModel):
    turns: list[TurnOut]


class SessionOut(BaseModel):
    session_id: str
    turns: int
    tokens: int


class SessionsOut(BaseModel):
    sessions: list[SessionOut]


class ReflectIn(_In):
    owner: str = _owner()
    session_id: str | None = _session("Reflect on this session only.")
    since: str | None = Field(default=None, description=TIME_HELP)
    until: str | None = Field(default=None, description=TIME_HELP)


# -- probes -----------------------------------------------------------------------------------
class HealthOut(BaseModel):
    status: Literal["ok"] = "ok"


# -- the lifecycle ------------------------------------------------------------------------------
class MaintainIn(_In):
    as_of: str | None = Field(
        default=None, description="Run the pass as if at this time (ISO 8601; default: now)."
    )


class MaintainOut(BaseModel):
    archived: int = Field(description="Memories archived: stale, unpinned and unused.")
    expired: int = Field(description="Memories forgotten past their expires_at.")
    forgotten: int = Field(description="Memories forgotten past their owner's retention.")
    owners: int = Field(description="Owners the pass went over.")
