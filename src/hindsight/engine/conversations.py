"""The engine's conversation operations: working memory (observe, windows, consolidate),
summaries and reflections. Part of :class:`hindsight.Hindsight` (its base class), kept
in a file of its own so that the facade reads in one sitting."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from hindsight import validate
from hindsight.errors import ValidationError
from hindsight.models import Memory, RetainResult
from hindsight.store import WorkingTurn
from hindsight.write.door import Operation, WriteContext

if TYPE_CHECKING:
    from hindsight.access import Principal
    from hindsight.sessions.distil import Distil
    from hindsight.sessions.working import Sessions
    from hindsight.write.ingest import Ingest


class _Engine(Protocol):
    """What these operations use of the engine."""

    principal: Principal
    _ingest: Ingest
    _sessions: Sessions
    _distil: Distil

    def _now(self) -> datetime: ...
    def _readable(self, owner: object) -> str: ...
    def _context(self, operation: Operation, owner: str) -> WriteContext: ...
    def consolidate(self, owner: str, session_id: str) -> RetainResult: ...


def session_of(session_id: object, what: str) -> str:
    """A valid session id, required ``what`` it is for."""
    sid = validate.session_id(session_id)
    if sid is None:
        raise ValidationError(f"session_id is required {what}")
    return sid


class Conversations:
    """Working memory, summaries and reflections (see :class:`hindsight.Hindsight`)."""

    # -- working memory --------------------------------------------------------------
    def observe(
        self: _Engine,
        owner: str,
        session_id: str,
        content: str,
        *,
        role: str = "user",
        speaker: str | None = None,
        tool_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        request_id: str | None = None,
    ) -> RetainResult | None:
        """Add a turn to a session's working memory.

        The window moves to long-term memory when it passes the turn or token
        threshold, or at once when the turn states a correction or a tool failure.
        Returns what was retained then, else ``None``. With ``request_id``, the turn is
        kept once: the same call again keeps nothing and returns ``None``.
        """
        owner = validate.owner(owner)
        sid = session_of(session_id, "for working memory")
        turn = self._ingest.reader.turn(
            {
                "role": role,
                "content": content,
                "speaker": speaker,
                "tool_name": tool_name,
                "metadata": dict(metadata or {}),
            },
            0,
            self._now(),
        )
        self.principal.check_write(owner)
        return self._sessions.observe(self.principal, owner, sid, turn, request_id=request_id)

    def sessions(self: _Engine, owner: str) -> list[tuple[str, int, int]]:
        """An owner's open sessions as (session id, turns, estimated tokens), latest first."""
        return self._sessions.sessions(self._readable(owner))

    def window(self: _Engine, owner: str, session_id: str) -> list[WorkingTurn]:
        """A session's working memory, oldest first."""
        owner = validate.owner(owner)
        sid = session_of(session_id, "for working memory")
        self.principal.check_read(owner)
        return self._sessions.window(owner, sid)

    def consolidate(self: _Engine, owner: str, session_id: str) -> RetainResult:
        """Move a session's working memory into long-term memory and clear the window."""
        owner = validate.owner(owner)
        sid = session_of(session_id, "for working memory")
        self.principal.check_write(owner)
        return self._sessions.consolidate(self.principal, owner, sid)

    def close_session(self: _Engine, owner: str, session_id: str) -> RetainResult:
        """End a session: consolidate what is left of its window."""
        return self.consolidate(owner, session_id)

    def purge_expired(self: _Engine) -> int:
        """Drop working-memory turns past their TTL, of every owner; returns how many."""
        self.principal.check_write_all()
        return self._sessions.purge_expired()

    # -- summaries and reflections ------------------------------------------------------
    def summarize(self: _Engine, owner: str, session_id: str) -> Memory:
        """Summarize a session into one ``summary`` memory and return it.

        The session's working memory is consolidated first, so no turn is lost. The
        summary names who took part and when, and lists the key points the extractor
        found and the most telling turns, in at most ``reflect.MAX_SUMMARY_CHARS``
        characters. It derives from the session's turns, so forgetting them forgets
        it. Summarizing again with nothing new returns the stored summary and writes
        nothing; after new turns, a new summary supersedes it.
        """
        owner = validate.owner(owner)
        sid = session_of(session_id, "to summarize a session")
        self.consolidate(owner, sid)
        return self._distil.summarize(self._context(Operation.SUMMARIZE, owner), sid)

    def reflect(
        self: _Engine,
        owner: str,
        *,
        session_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
    ) -> list[Memory]:
        """Distil lasting lessons from an owner's memories into ``reflection`` memories.

        Looks at all of them, one session (its working memory consolidated first), or
        those observed in ``since``..``until``: a tool that failed repeatedly, a
        correction the user made, an attribute whose value changed, a preference
        stated again and again. Each lesson derives from its evidence and has a stable
        ``metadata["key"]``: rerunning on the same evidence writes nothing, new
        evidence updates or supersedes the lesson. Returns the reflections this run
        created or changed.
        """
        owner = validate.owner(owner)
        sid = validate.session_id(session_id)
        start = validate.timestamp(since, field="since")
        end = validate.timestamp(until, field="until")
        if start is not None and end is not None and start > end:
            raise ValidationError(f"since ({start.isoformat()}) is after until ({end.isoformat()})")
        context = self._context(Operation.REFLECT, owner)
        if sid is not None:
            self.consolidate(owner, sid)
        return self._distil.reflect(context, sid=sid, since=start, until=end)
