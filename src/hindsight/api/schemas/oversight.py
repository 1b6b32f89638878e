"""The bodies of feedback, a memory's history, the review queue and the audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from hindsight import views
from hindsight.api.schemas.base import In
from hindsight.api.schemas.memories import MemoryOut
from hindsight.guard.review import ReviewItem
from hindsight.lifecycle.history import History
from hindsight.store import AuditEntry


# -- feedback and history --------------------------------------------------------------------
class FeedbackIn(In):
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


class RejectIn(In):
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
