"""Long-term memory routes: retain, recall, get, list, update, forget, export, import, stats,
pin, unpin, restore, the maintenance pass and foresight.

Each handler calls one library method, as the caller (the library checks its scope), through
:meth:`Ctx.call` and converts the answer; errors are mapped in :mod:`hindsight.api.errors`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any, Final

from fastapi import Query, Request
from fastapi.responses import StreamingResponse

from hindsight import foresight
from hindsight.api.deps import Context, IdempotencyKey, Routes
from hindsight.api.schemas import (
    KIND_RULE,
    OWNER_RULE,
    SESSION_RULE,
    WHOLE,
    ForesightItemOut,
    ForesightOut,
    ForgetIn,
    ImportIn,
    ImportOut,
    MaintainIn,
    MaintainOut,
    MemoryOut,
    MemoryPage,
    OwnerQuery,
    OwnersOut,
    QueryBool,
    RecallHit,
    RecallIn,
    RecallOut,
    ReceiptOut,
    RetainIn,
    RetainOut,
    StatsOut,
    UpdateIn,
    one_of,
)
from hindsight.engine import MAX_K
from hindsight.errors import ValidationError
from hindsight.models import Status
from hindsight.recall.request import RecallRequest

EXPORT_BATCH: Final = 200  # records fetched per worker-thread hop while streaming
MAX_OFFSET: Final = 2**62  # beyond what the store's integers hold

routes = Routes("/v1", "memories")


@routes("POST", "/memories")
async def retain(ctx: Context, body: RetainIn, idempotency_key: IdempotencyKey = None) -> RetainOut:
    """Remember a message, a conversation, or (with ``kind``) one memory as given."""
    messages = None if body.messages is None else [m.model_dump() for m in body.messages]
    result = await ctx.call(
        ctx.hs.retain,
        body.owner,
        body.content,
        messages=messages,
        kind=body.kind,
        session_id=body.session_id,
        source=body.source,
        observed_at=body.observed_at,
        confidence=body.confidence,
        metadata=body.metadata,
        request_id=idempotency_key,
        expires_at=body.expires_at,
    )
    return RetainOut.of(result)


@routes("POST", "/recall")
async def recall(ctx: Context, body: RecallIn) -> RecallOut:
    """The memories that best answer ``query``, each with why it came back.

    Searching several owners needs read access to each of them.
    """
    results = await ctx.call(ctx.hs.recall, RecallRequest(**body.model_dump()))
    return RecallOut(results=[RecallHit.of(r) for r in results])


@routes("GET", "/memories/{memory_id}")
async def get(ctx: Context, memory_id: str) -> MemoryOut:
    """One memory by id."""
    return MemoryOut.of(await ctx.call(ctx.hs.get, memory_id))


@routes("GET", "/memories")
async def list_memories(
    ctx: Context,
    request: Request,
    owner: OwnerQuery,
    kind: Annotated[
        list[str] | None,
        Query(description="Only these kinds (repeat).", json_schema_extra={"items": KIND_RULE}),
    ] = None,
    session_id: Annotated[str | None, Query(json_schema_extra=SESSION_RULE)] = None,
    include_history: QueryBool = False,
    status: Annotated[str, Query(json_schema_extra=one_of(Status))] = "active",
    limit: Annotated[int, Query(json_schema_extra={"minimum": 1, "maximum": MAX_K}), WHOLE] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET), WHOLE] = 0,
) -> MemoryPage:
    """An owner's memories, newest observed first, a page at a time."""
    memories = await ctx.call(
        ctx.hs.list_memories,
        owner,
        kinds=kind,
        session_id=session_id,
        include_history=include_history,
        status=status,
        limit=limit,
        offset=offset,
    )
    # a full page may have a successor; the last page of a multiple of limit is then empty
    next_offset = offset + limit if len(memories) == limit else None
    return MemoryPage(
        memories=[MemoryOut.of(m) for m in memories],
        limit=limit,
        offset=offset,
        next_offset=next_offset,
        next=None
        if next_offset is None
        else str(request.url.include_query_params(offset=next_offset)),
    )


@routes("PATCH", "/memories/{memory_id}")
async def update(ctx: Context, memory_id: str, body: UpdateIn) -> MemoryOut:
    """Change a memory in place: only the fields given; new content is re-embedded.

    New content is judged as a new write by this key (an attack is quarantined, held for
    review); ``status`` moves a memory between active and archived only. A memory held
    for review, or rejected, takes no change (409): a reviewer decides on it.
    """
    changes = {name: getattr(body, name) for name in body.model_fields_set}
    if not changes:
        raise ValidationError(
            "nothing to update: give content, metadata, confidence, query_hints, status "
            "or expires_at"
        )
    return MemoryOut.of(await ctx.call(ctx.hs.update, memory_id, **changes))


@routes("DELETE", "/memories/{memory_id}")
async def forget(
    ctx: Context,
    memory_id: str,
    owner: Annotated[str | None, Query(json_schema_extra=OWNER_RULE)] = None,
    dry_run: QueryBool = False,
) -> ReceiptOut:
    """Delete one memory and what was derived only from it; returns the receipt.

    With ``owner``, the memory must be that owner's (else 404, as for an unknown id).
    With ``dry_run``, nothing is deleted: the receipt (id ``preview``) lists what would go.
    """
    return ReceiptOut.of(await ctx.call(ctx.hs.forget, memory_id, owner=owner, dry_run=dry_run))


@routes("POST", "/memories/{memory_id}/pin")
async def pin(ctx: Context, memory_id: str) -> MemoryOut:
    """Pin a memory: it neither decays nor is archived until unpinned."""
    return MemoryOut.of(await ctx.call(ctx.hs.pin, memory_id))


@routes("DELETE", "/memories/{memory_id}/pin")
async def unpin(ctx: Context, memory_id: str) -> MemoryOut:
    """Unpin a memory: it decays and may be archived again."""
    return MemoryOut.of(await ctx.call(ctx.hs.unpin, memory_id))


@routes("POST", "/memories/{memory_id}/restore")
async def restore(ctx: Context, memory_id: str) -> MemoryOut:
    """Make an archived memory active again, judged afresh by the guard (restoring counts
    as using it)."""
    return MemoryOut.of(await ctx.call(ctx.hs.restore, memory_id))


@routes("POST", "/maintain")
async def maintain(ctx: Context, body: MaintainIn) -> MaintainOut:
    """Run the maintenance pass over every owner (needs write access to every owner):
    forget what expired or passed its owner's retention, archive what went stale."""
    report = await ctx.call(ctx.hs.maintain, body.as_of)
    return MaintainOut(**report.as_dict())


@routes("POST", "/forget")
async def forget_owner(ctx: Context, body: ForgetIn) -> ReceiptOut:
    """Delete an owner's memories, optionally of one session, period, source or writer
    (``principal``, an API key's name); returns the receipt.

    With none of ``since``, ``until``, ``source`` or ``principal``, the owner's (or
    session's) working memory goes too.
    """
    receipt = await ctx.call(
        ctx.hs.forget,
        owner=body.owner,
        session_id=body.session_id,
        since=body.since,
        until=body.until,
        source=body.source,
        principal=body.principal,
        dry_run=body.dry_run,
    )
    return ReceiptOut.of(receipt)


def _take(records: Iterator[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    return list(itertools.islice(records, n))


@routes(
    "GET",
    "/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "One exported memory per line, oldest first (no vectors).",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        }
    },
)
async def export(
    ctx: Context, owner: OwnerQuery, include_history: QueryBool = True
) -> StreamingResponse:
    """Every memory of ``owner`` as JSON lines, streamed; what ``import`` reads."""
    records = ctx.hs.export(owner, include_history=include_history)
    # The first batch is read before answering, so a failing store is a 503, not a cut stream.
    first = await ctx.call(_take, records, EXPORT_BATCH)

    async def lines() -> AsyncIterator[bytes]:
        batch = first
        while batch:
            yield "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in batch).encode()
            batch = await ctx.call(_take, records, EXPORT_BATCH)

    return StreamingResponse(lines(), media_type="application/x-ndjson")


@routes("POST", "/import")
async def import_records(
    ctx: Context, body: ImportIn, idempotency_key: IdempotencyKey = None
) -> ImportOut:
    """Load exported memories, re-embedding them; ids the owner already holds are skipped,
    and ``held`` counts those imported that the guard holds for review.

    The caller must be allowed to write the owner of every record; each record is
    checked before anything is written, so one bad record imports nothing.
    """
    counts = await ctx.call(ctx.hs.import_records, body.records, request_id=idempotency_key)
    return ImportOut.model_validate(counts)


@routes("GET", "/foresight")
async def foresee(
    ctx: Context,
    owner: OwnerQuery,
    now: Annotated[
        str | None,
        Query(description="Look ahead from this time (ISO 8601; default: now)."),
    ] = None,
    days: Annotated[
        int,
        Query(
            ge=0,
            le=foresight.MAX_DAYS,
            description="How many days ahead, in the server's timezone setting's days.",
        ),
        WHOLE,
    ] = foresight.DEFAULT_DAYS,
) -> ForesightOut:
    """What lies ahead for an owner: open events, commitments, routines and goals they
    spoke of, due from today to ``days`` days ahead, then the undated ones; soonest, then
    surest, first. A later move, cancellation or completion is honoured."""
    items = await ctx.call(ctx.hs.foresee, owner, now=now, days=days)
    return ForesightOut(items=[ForesightItemOut.of(i) for i in items])


@routes("GET", "/owners")
async def owners(ctx: Context) -> OwnersOut:
    """The owners that have memories and that the caller's key may read, sorted."""
    return OwnersOut(owners=await ctx.call(ctx.hs.owners))


@routes("GET", "/stats")
async def stats(
    ctx: Context, owner: Annotated[str | None, Query(json_schema_extra=OWNER_RULE)] = None
) -> StatsOut:
    """Counts by kind and status, and the store's size and model: of one owner, or of all.

    Stats over all owners need a key that reads every owner (``"*"``).
    """
    return StatsOut.of(await ctx.call(ctx.hs.stats, owner))
