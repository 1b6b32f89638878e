"""The review queue (what the guard held, and decisions on it) and the audit log.

As every route, each handler calls one library method as the caller: the library
checks the key (to decide: ``"review": true`` and write on the owner, and not the key
that wrote the memory; ``"audit": true`` to read the log). A refusal to a caller that
may read the memory is a 403; an id it may not read is a 404, as an unknown one.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Body, Query

from hindsight.api.deps import Context, Routes
from hindsight.api.memories import MAX_OFFSET
from hindsight.api.schemas import (
    OWNER_RULE,
    TIME_HELP,
    WHOLE,
    AuditCheckOut,
    AuditEntryOut,
    AuditPage,
    MemoryList,
    MemoryOut,
    ReceiptOut,
    RejectIn,
    ReviewItemOut,
    ReviewPage,
)
from hindsight.engine import MAX_K
from hindsight.models import ForgetReceipt

OptionalOwner = Annotated[
    str | None,
    Query(description="Only this owner's (default: every owner).", json_schema_extra=OWNER_RULE),
]
Limit = Annotated[int, Query(json_schema_extra={"minimum": 1, "maximum": MAX_K}), WHOLE]

routes = Routes("/v1", "review and audit")


@routes("GET", "/review")
async def review_queue(
    ctx: Context,
    owner: OptionalOwner = None,
    limit: Limit = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET), WHOLE] = 0,
) -> ReviewPage:
    """What the guard held (quarantined or pending review), newest first, each beside the
    memories it conflicts with.

    Every owner's queue at once needs a key that reads every owner (``"*"``).
    """
    items = await ctx.call(ctx.hs.review_queue, owner, limit=limit, offset=offset)
    return ReviewPage(
        items=[ReviewItemOut.of(i) for i in items],
        limit=limit,
        offset=offset,
        next_offset=offset + limit if len(items) == limit else None,
    )


@routes("POST", "/review/{memory_id}/approve")
async def approve(ctx: Context, memory_id: str) -> MemoryList:
    """Make a held memory active as if it had passed the guard, with what was held with it;
    returns them, the memory first. A rejected memory too, for an ``"admin": true`` key
    (undoing the rejection).

    Needs a key with ``"review": true`` and write access to its owner, other than the key
    that wrote it: the writer is not the reviewer (403 otherwise)."""
    decided = await ctx.call(ctx.hs.approve, memory_id)
    return MemoryList(memories=[MemoryOut.of(m) for m in decided])


@routes("POST", "/review/{memory_id}/reject")
async def reject(
    ctx: Context, memory_id: str, body: Annotated[RejectIn | None, Body()] = None
) -> MemoryList | ReceiptOut:
    """Turn down a held memory, with what was held with it: kept as ``rejected`` history
    (the answer lists them), or forgotten (the answer is the receipt). Needs a key with
    ``"review": true`` and write access to its owner."""
    result = await ctx.call(ctx.hs.reject, memory_id, forget=None if body is None else body.forget)
    if isinstance(result, ForgetReceipt):
        return ReceiptOut.of(result)
    return MemoryList(memories=[MemoryOut.of(m) for m in result])


@routes("GET", "/audit")
async def audit(
    ctx: Context,
    owner: OptionalOwner = None,
    principal: Annotated[str | None, Query(description="Only what this key did.")] = None,
    action: Annotated[str | None, Query(description="Only this action, e.g. forget.")] = None,
    since: Annotated[str | None, Query(description=TIME_HELP)] = None,
    until: Annotated[str | None, Query(description=TIME_HELP)] = None,
    limit: Limit = 100,
    before_seq: Annotated[
        int | None, Query(ge=1, description="Only entries before this one: the next page."), WHOLE
    ] = None,
) -> AuditPage:
    """Audit entries, newest first: who wrote, forgot, decided or recalled which memories.

    Needs a key with ``"audit": true``; every owner's entries at once, one that reads
    every owner as well.
    """
    entries = await ctx.call(
        ctx.hs.audit,
        owner,
        principal=principal,
        action=action,
        since=since,
        until=until,
        limit=limit,
        before_seq=before_seq,
    )
    last = entries[-1].seq if len(entries) == limit and entries else None
    return AuditPage(entries=[AuditEntryOut.of(e) for e in entries], next_before_seq=last)


@routes("GET", "/audit/verify")
async def verify_audit(ctx: Context) -> AuditCheckOut:
    """Check the audit log's hash chain: an edited or deleted entry breaks it.

    Needs an audit key that reads every owner.
    """
    return AuditCheckOut.model_validate(await ctx.call(ctx.hs.verify_audit))
