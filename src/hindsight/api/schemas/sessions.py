"""The bodies of working memory (sessions and their turns), reflection, the health
probe and the maintenance pass."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from hindsight import views
from hindsight.api.schemas.base import TIME_HELP, In, Role, owner_field, session_field
from hindsight.api.schemas.memories import RetainOut
from hindsight.store import WorkingTurn


# -- working memory ---------------------------------------------------------------------------
class ObserveIn(In):
    owner: str = owner_field()
    content: str
    role: Role = "user"
    speaker: str | None = None
    tool_name: str | None = None
    metadata: dict[str, Any] | None = None


class ObserveOut(BaseModel):
    consolidated: bool = Field(description="Whether the window moved to long-term memory.")
    retained: RetainOut | None


class OwnerIn(In):
    owner: str = owner_field()


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


class ReflectIn(In):
    owner: str = owner_field()
    session_id: str | None = session_field("Reflect on this session only.")
    since: str | None = Field(default=None, description=TIME_HELP)
    until: str | None = Field(default=None, description=TIME_HELP)


# -- probes -----------------------------------------------------------------------------------
class HealthOut(BaseModel):
    status: Literal["ok"] = "ok"


# -- the lifecycle ------------------------------------------------------------------------------
class MaintainIn(In):
    as_of: str | None = Field(
        default=None, description="Run the pass as if at this time (ISO 8601; default: now)."
    )


class MaintainOut(BaseModel):
    archived: int = Field(description="Memories archived: stale, unpinned and unused.")
    expired: int = Field(description="Memories forgotten past their expires_at.")
    forgotten: int = Field(description="Memories forgotten past their owner's retention.")
    owners: int = Field(description="Owners the pass went over.")
