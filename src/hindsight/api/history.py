"""A memory's use and its past: feedback, and the chain of its versions.

As every route, each handler calls one library method as the caller: feedback needs
write access to the memory's owner, history read access.
"""

from __future__ import annotations

from hindsight.api.deps import Context, Routes
from hindsight.api.schemas import FeedbackIn, HistoryOut, MemoryOut

routes = Routes("/v1", "memories")


@routes("POST", "/memories/{memory_id}/feedback")
async def feedback(ctx: Context, memory_id: str, body: FeedbackIn) -> MemoryOut:
    """Say whether a memory was of use: useful raises its confidence toward its trust and
    marks it used; not useful lowers it. A memory the guard holds takes none (409)."""
    return MemoryOut.of(await ctx.call(ctx.hs.feedback, memory_id, body.useful))


@routes("GET", "/memories/{memory_id}/history")
async def history(ctx: Context, memory_id: str) -> HistoryOut:
    """The versions of a memory, oldest first (what it superseded and what superseded
    it), each with who changed what and when."""
    return HistoryOut.of(await ctx.call(ctx.hs.history, memory_id))
