"""Working memory: a session's recent turns, and their move into long-term memory.

A turn observed is kept in the session's window (in the store's database, or in
Redis) until the window passes the turn or token threshold, or the turn states an
event (a correction, a tool failure, a preference, a task completed:
:func:`~hindsight.extract.triggers`): then
the window is consolidated, extracted once and written through the write door like
any retain, and cleared up to the last turn written.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from hindsight.access import Principal
from hindsight.config import Settings
from hindsight.extract import triggers
from hindsight.models import RetainResult, Turn, estimate_tokens
from hindsight.store import WorkingMemory, WorkingTurn
from hindsight.write.decide import Plan
from hindsight.write.door import Once, Operation, WriteContext
from hindsight.write.ingest import Ingest


class Sessions:
    """Observe, window, consolidate and close the sessions of one working memory."""

    def __init__(
        self,
        settings: Settings,
        working: WorkingMemory,
        ingest: Ingest,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.settings = settings
        self.working = working
        self.ingest = ingest
        self.clock = clock

    def observe(
        self,
        principal: Principal,
        owner: str,
        sid: str,
        turn: Turn,
        *,
        request_id: str | None = None,
    ) -> RetainResult | None:
        now = self.clock()
        asked = [owner, sid, turn.role, turn.content, turn.speaker, turn.tool_name, turn.metadata]
        once = Once.of(request_id, asked, lambda plan: {"kept": True})
        if once is not None:
            # the key is claimed before the turn is kept: a retry while the first call
            # still runs, or after it, finds it and keeps nothing again
            context = WriteContext(principal, Operation.OBSERVE, (owner,), now)
            if self.ingest.door.commit(context, lambda known: Plan(), once=once).replayed:
                return None  # kept by the first call
        self.working.wm_append(
            WorkingTurn(
                seq=0,
                owner=owner,
                session_id=sid,
                role=turn.role,
                content=turn.content,
                tokens=estimate_tokens(turn.content),
                created_at=now,
                expires_at=now + timedelta(seconds=self.settings.wm_ttl_seconds),
                speaker=turn.speaker,
                tool_name=turn.tool_name,
                metadata=turn.metadata,
            )
        )
        window = self.working.wm_window(owner, sid, now)
        full = (
            len(window) >= self.settings.wm_max_turns
            or sum(t.tokens for t in window) >= self.settings.wm_max_tokens
        )
        return self.consolidate(principal, owner, sid) if full or triggers(turn) else None

    def window(self, owner: str, sid: str) -> list[WorkingTurn]:
        return self.working.wm_window(owner, sid, self.clock())

    def sessions(self, owner: str) -> list[tuple[str, int, int]]:
        return self.working.wm_sessions(owner, self.clock())

    def consolidate(self, principal: Principal, owner: str, sid: str) -> RetainResult:
        window = self.window(owner, sid)
        if not window:
            return RetainResult()
        turns = [
            Turn(
                role=t.role,
                content=t.content,
                speaker=t.speaker,
                observed_at=t.created_at,
                tool_name=t.tool_name,
                metadata=t.metadata,
            )
            for t in window
        ]
        context = WriteContext(principal, Operation.CONSOLIDATE, (owner,), self.clock())
        result = self.ingest.turns(context, owner, turns, session_id=sid, metadata={})
        self.working.wm_clear(owner, sid, up_to_seq=window[-1].seq)
        return result

    def clear(self, owner: str, sid: str | None) -> None:
        """Drop a session's window, or every session's of the owner."""
        for session in [sid] if sid else [s for s, _, _ in self.sessions(owner)]:
            self.working.wm_clear(owner, session)

    def purge_expired(self) -> int:
        return self.working.wm_purge_expired(self.clock())
