"""The session tools: working memory (append a turn, read the window) and what a session
is distilled into, a summary and lessons (reflections)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from hindsight import views
from hindsight.engine import Hindsight
from hindsight.mcpserver.arguments import Owner, RequestId, Role, SessionId, Since, Until
from hindsight.mcpserver.toolbase import ToolGroup
from hindsight.store import WorkingTurn


class SessionTools(ToolGroup):
    """The tools on a conversation's sessions."""

    def tools(self) -> list[Callable[..., Any]]:
        return [
            self.memory_summarize,
            self.memory_reflect,
            self.session_append,
            self.session_window,
        ]

    # -- what a session is distilled into ----------------------------------------------------
    async def memory_summarize(self, owner: Owner, session_id: SessionId) -> dict[str, Any]:
        """Write a summary of one conversation session of an owner, and return it.

        Call it when a long session ends, so that later searches find its gist. The
        summary is stored as a memory of kind 'summary'. Returns `summary`: the memory
        written (id, kind, content, provenance, times).
        """
        hs = self._caller()
        return await self._call(self._summarize, hs, owner, session_id)

    def _summarize(self, hs: Hindsight, owner: str, session_id: str) -> dict[str, Any]:
        return {"summary": views.memory(hs.summarize(owner, session_id))}

    async def memory_reflect(
        self,
        owner: Owner,
        session_id: Annotated[
            str | None, Field(description="Reflect on this session only (optional).")
        ] = None,
        since: Since = None,
        until: Until = None,
    ) -> dict[str, Any]:
        """Draw lasting lessons from an owner's memories and store them as reflections.

        Reflections are higher-level memories (patterns, stable preferences, what worked
        and what failed) of kind 'reflection'; later searches find them. Optionally
        limit the material to one session or a period. Returns `reflections`: the
        memories written (an empty list when there was too little to reflect on).
        """
        hs = self._caller()
        return await self._call(self._reflect, hs, owner, session_id, since, until)

    def _reflect(
        self,
        hs: Hindsight,
        owner: str,
        session_id: str | None,
        since: str | None,
        until: str | None,
    ) -> dict[str, Any]:
        written = hs.reflect(owner, session_id=session_id, since=since, until=until)
        return {"reflections": [views.memory(m) for m in written]}

    # -- working memory ------------------------------------------------------------------
    async def session_append(
        self,
        owner: Owner,
        session_id: SessionId,
        content: Annotated[str, Field(description="The text of the turn.")],
        role: Annotated[
            Role, Field(description="Who said it: user, assistant, tool or system.")
        ] = "user",
        speaker: Annotated[
            str | None, Field(description="Optional display name of the speaker, e.g. 'Caroline'.")
        ] = None,
        request_id: RequestId = None,
    ) -> dict[str, Any]:
        """Add one turn of a conversation to the session's working memory.

        Working memory is short-term and per session. It moves into long-term memory on
        its own when the session grows past its turn or token limit, or at once when a
        turn corrects the agent or reports a tool failure. Returns ok and
        `consolidated`: null while the turn stays in working memory, else what was
        written to long-term memory then (as memory_write reports it).
        """
        hs = self._caller()
        return await self._call(
            self._append,
            hs,
            owner,
            session_id,
            content,
            role=role,
            speaker=speaker,
            request_id=request_id,
        )

    def _append(
        self,
        hs: Hindsight,
        owner: str,
        session_id: str,
        content: str,
        *,
        role: str,
        speaker: str | None,
        request_id: str | None,
    ) -> dict[str, Any]:
        result = hs.observe(
            owner, session_id, content, role=role, speaker=speaker, request_id=request_id
        )
        return {"ok": True, "consolidated": None if result is None else self._retained(hs, result)}

    async def session_window(self, owner: Owner, session_id: SessionId) -> dict[str, Any]:
        """The turns of a session still in working memory (not yet consolidated), oldest first.

        Use it to recall the recent conversation of a session. Returns `turns` (seq,
        role, speaker, content, created_at) and `tokens`, their estimated size.
        """
        hs = self._caller()
        return await self._call(self._window, hs, owner, session_id)

    def _window(self, hs: Hindsight, owner: str, session_id: str) -> dict[str, Any]:
        turns = hs.window(owner, session_id)
        return {"turns": [_turn(t) for t in turns], "tokens": sum(t.tokens for t in turns)}


def _turn(t: WorkingTurn) -> dict[str, Any]:
    return {
        "seq": t.seq,
        "role": t.role,
        "speaker": t.speaker,
        "content": t.content,
        "created_at": t.created_at.isoformat(),
    }
