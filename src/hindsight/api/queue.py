"""The background job queue (LLM extraction): how many jobs are in each state, the latest.

A server runs the queue itself (a worker thread, where an LLM is configured); this
route only shows it, as the caller may see it.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from pydantic import BaseModel, Field

from hindsight import views
from hindsight.api.deps import Context, Routes
from hindsight.api.schemas import OWNER_RULE, WHOLE
from hindsight.store import JOB_STATES

routes = Routes("/v1", "jobs")


class JobOut(BaseModel):
    id: str
    owner: str
    operation: str = Field(description="extract: what an LLM finds in retained turns.")
    payload: dict[str, Any] = Field(description="Its input: the turns' memory ids.")
    state: str = Field(description=", ".join(JOB_STATES))
    attempts: int
    created_at: str
    not_before: str | None = Field(description="When it may run (again).")
    updated_at: str | None
    holder: str | None = Field(description="The worker that leases it while it runs.")
    lease_until: str | None
    error: str | None = Field(description="Why it failed, was deferred or will be retried.")
    result: dict[str, Any] | None = Field(description="What a done job wrote.")


class JobQueueOut(BaseModel):
    counts: dict[str, int] = Field(description="Jobs in each state.")
    jobs: list[JobOut]


@routes("GET", "/jobs")
async def jobs(
    ctx: Context,
    owner: Annotated[
        str | None,
        Query(
            description="Only this owner's (default: every owner).", json_schema_extra=OWNER_RULE
        ),
    ] = None,
    state: Annotated[
        list[str] | None, Query(description=f"Only jobs in these states: {', '.join(JOB_STATES)}.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1_000), WHOLE] = 50,
) -> JobQueueOut:
    """The job queue: counts by state, and the latest jobs, newest first.

    Every owner's at once needs a key that reads every owner (``"*"``).
    """
    queue = await ctx.call(ctx.hs.jobs, owner, states=state, limit=limit)
    return JobQueueOut.model_validate(views.job_queue(queue))
