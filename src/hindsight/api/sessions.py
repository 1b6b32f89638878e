"""Working-memory routes (turns, windows, sessions, consolidation) and summarize, reflect."""

from __future__ import annotations

from hindsight.api.deps import Context, IdempotencyKey, Routes
from hindsight.api.schemas import (
    MemoryList,
    MemoryOut,
    ObserveIn,
    ObserveOut,
    OwnerIn,
    OwnerQuery,
    ReflectIn,
    RetainOut,
    SessionOut,
    SessionPath,
    SessionsOut,
    TurnOut,
    WindowOut,
)

routes = Routes("/v1", "working memory")


@routes("POST", "/sessions/{session_id}/turns")
async def observe(
    ctx: Context, session_id: SessionPath, body: ObserveIn, idempotency_key: IdempotencyKey = None
) -> ObserveOut:
    """Add a turn to a session's working memory.

    The window moves to long-term memory when it is full, or at once when the
    turn states a correction or a tool failure; ``retained`` then says what was kept.
    """
    result = await ctx.call(
        ctx.hs.observe,
        body.owner,
        session_id,
        body.content,
        role=body.role,
        speaker=body.speaker,
        tool_name=body.tool_name,
        metadata=body.metadata,
        request_id=idempotency_key,
    )
    return ObserveOut(
        consolidated=result is not None, retained=None if result is None else RetainOut.of(result)
    )


@routes("GET", "/sessions/{session_id}/turns")
async def window(ctx: Context, session_id: SessionPath, owner: OwnerQuery) -> WindowOut:
    """A session's working memory, oldest turn first."""
    turns = await ctx.call(ctx.hs.window, owner, session_id)
    return WindowOut(turns=[TurnOut.of(t) for t in turns])


@routes("GET", "/sessions")
async def sessions(ctx: Context, owner: OwnerQuery) -> SessionsOut:
    """An owner's open sessions with their turn and token counts, latest first."""
    rows = await ctx.call(ctx.hs.sessions, owner)
    return SessionsOut(sessions=[SessionOut(session_id=s, turns=n, tokens=t) for s, n, t in rows])


@routes("POST", "/sessions/{session_id}/consolidate")
async def consolidate(ctx: Context, session_id: SessionPath, body: OwnerIn) -> RetainOut:
    """Move a session's working memory into long-term memory and clear the window."""
    return RetainOut.of(await ctx.call(ctx.hs.consolidate, body.owner, session_id))


@routes("POST", "/sessions/{session_id}/close")
async def close_session(ctx: Context, session_id: SessionPath, body: OwnerIn) -> RetainOut:
    """End a session: consolidate what is left of its window."""
    return RetainOut.of(await ctx.call(ctx.hs.close_session, body.owner, session_id))


@routes("POST", "/sessions/{session_id}/summarize")
async def summarize(ctx: Context, session_id: SessionPath, body: OwnerIn) -> MemoryOut:
    """Summarize a session into one long-term memory, and return it."""
    return MemoryOut.of(await ctx.call(ctx.hs.summarize, body.owner, session_id))


@routes("POST", "/reflect")
async def reflect(ctx: Context, body: ReflectIn) -> MemoryList:
    """Reflect on an owner's memories (of one session, or a period) and return what was written."""
    memories = await ctx.call(
        ctx.hs.reflect,
        body.owner,
        session_id=body.session_id,
        since=body.since,
        until=body.until,
    )
    return MemoryList(memories=[MemoryOut.of(m) for m in memories])
