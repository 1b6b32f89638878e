"""The operations on sessions: working memory (add a turn, read the window, consolidate,
close) and what a session is distilled into, a summary and reflections."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

from hindsight import errors, validate, views
from hindsight.client.wire import _Call, once, read_memories, read_memory
from hindsight.models import Memory, RetainResult
from hindsight.store import WorkingTurn


def _turns(data: Any) -> list[WorkingTurn]:
    return [views.turn_from(t) for t in data["turns"]]


def _observed(data: Any) -> RetainResult | None:
    return None if data["retained"] is None else views.retained_from(data["retained"])


def _session_path(session_id: str, action: str) -> str:
    sid = validate.session_id(session_id)
    if sid is None:
        raise errors.ValidationError("session_id is required for working memory")
    return f"/v1/sessions/{quote(sid, safe='')}/{action}"


class SessionOps:
    """Each operation on sessions: the library's signature in, its HTTP request and reader
    out."""

    @staticmethod
    def observe(
        owner: str,
        session_id: str,
        content: str,
        *,
        role: str = "user",
        speaker: str | None = None,
        tool_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        request_id: str | None = None,
    ) -> _Call[RetainResult | None]:
        """Add a turn to a session's working memory; returns what was retained, if it moved
        (kept once under ``request_id``, by default a new one, as for :meth:`retain`)."""
        body = {
            "owner": owner,
            "content": content,
            "role": role,
            "speaker": speaker,
            "tool_name": tool_name,
            "metadata": metadata,
        }
        path = _session_path(session_id, "turns")
        return _Call("POST", path, _observed, body=body, headers=once(request_id))

    @staticmethod
    def sessions(owner: str) -> _Call[list[tuple[str, int, int]]]:
        """An owner's open sessions as (session id, turns, estimated tokens), latest first."""

        def read(data: Any) -> list[tuple[str, int, int]]:
            return [(s["session_id"], s["turns"], s["tokens"]) for s in data["sessions"]]

        return _Call("GET", "/v1/sessions", read, params={"owner": owner})

    @staticmethod
    def window(owner: str, session_id: str) -> _Call[list[WorkingTurn]]:
        """A session's working memory, oldest first."""
        return _Call("GET", _session_path(session_id, "turns"), _turns, params={"owner": owner})

    @staticmethod
    def consolidate(owner: str, session_id: str) -> _Call[RetainResult]:
        """Move a session's working memory into long-term memory and clear the window."""
        return _Call(
            "POST",
            _session_path(session_id, "consolidate"),
            views.retained_from,
            body={"owner": owner},
        )

    @staticmethod
    def close_session(owner: str, session_id: str) -> _Call[RetainResult]:
        """End a session: consolidate what is left of its window."""
        return _Call(
            "POST", _session_path(session_id, "close"), views.retained_from, body={"owner": owner}
        )

    @staticmethod
    def summarize(owner: str, session_id: str) -> _Call[Memory]:
        """Summarize a session into one long-term memory, and return it."""
        return _Call(
            "POST", _session_path(session_id, "summarize"), read_memory, body={"owner": owner}
        )

    @staticmethod
    def reflect(
        owner: str,
        *,
        session_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
    ) -> _Call[list[Memory]]:
        """Reflect on an owner's memories (one session, or a period); returns what was written."""
        body = {"owner": owner, "session_id": session_id, "since": since, "until": until}
        return _Call("POST", "/v1/reflect", read_memories("memories"), body=body)
