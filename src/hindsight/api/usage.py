"""LLM usage: tokens, calls and cost by owner, operation and model.

As every route, the handler calls one library method as the caller: one owner's usage
needs read access to it, every owner's a key that reads every owner.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from pydantic import BaseModel, Field

from hindsight import views
from hindsight.api.deps import Context, Routes
from hindsight.api.schemas import OWNER_RULE, TIME_HELP
from hindsight.store import UsageRow

routes = Routes("/v1", "usage")


class UsageRowOut(BaseModel):
    owner: str = Field(description="Whose work the calls did ('' for none).")
    operation: str = Field(description="extract, summarize, reflect or query.")
    model: str | None
    calls: int
    failures: int = Field(description="Calls that failed (the error was raised).")
    retries: int = Field(description="Transport retries (429, 5xx, dropped connections).")
    dropped: int = Field(description="Answers dropped as invalid against their schema.")
    dropped_items: int = Field(
        description="Items of answers dropped as invalid, the rest of each answer kept."
    )
    prompt_tokens: int
    completion_tokens: int
    cost: float | None = Field(description="USD, where the model has a price; else null.")

    @classmethod
    def of(cls, r: UsageRow) -> UsageRowOut:
        return cls.model_validate(views.usage_row(r))


class UsageTotal(BaseModel):
    calls: int
    failures: int
    retries: int
    dropped: int
    dropped_items: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


class UsagePage(BaseModel):
    usage: list[UsageRowOut]
    total: UsageTotal


@routes("GET", "/usage")
async def usage(
    ctx: Context,
    owner: Annotated[
        str | None,
        Query(
            description="Only this owner's (default: every owner).", json_schema_extra=OWNER_RULE
        ),
    ] = None,
    since: Annotated[str | None, Query(description=TIME_HELP)] = None,
) -> UsagePage:
    """LLM use by owner, operation and model: calls, failures, retries, dropped answers
    and items, prompt and completion tokens, and cost.

    Every owner's at once needs a key that reads every owner (``"*"``).
    """
    rows = await ctx.call(ctx.hs.usage, owner, since=since)
    return UsagePage(
        usage=[UsageRowOut.of(r) for r in rows],
        total=UsageTotal.model_validate(views.usage_total(rows)),
    )
