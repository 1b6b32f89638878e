"""An OpenAI Agents SDK session kept in hindsight:
``HindsightSession(session_id=..., memory=..., owner=...)``.

Each item the SDK adds is retained as a turn of the owner's session (a message by its
role, a function call as the assistant's, its output as a tool's), kept verbatim as an
episode with the exact item in its metadata: the history survives the process, and what
the user said is extracted into the owner's long-term memory at once, like any session's
turns. ``pop_item`` forgets the latest item (and what was derived from it alone);
``clear_session`` forgets that session's memories only.

Needs the ``openai-agents`` extra: ``pip install '.[openai-agents]'``.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from agents.memory import SessionSettings

from hindsight import validate
from hindsight.integrations._memory import MemoryApi, checked, every
from hindsight.models import HELD, Memory, Status

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["HindsightSession"]

MARK = "openai_agents"  # the metadata key that holds an item, exactly, and its place
ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
MAX_TEXT = 8_000


def _turn(item: Any, index: int) -> dict[str, Any]:
    """The turn an item is retained as."""
    kind = item.get("type")
    role = ROLES.get(str(item.get("role")), "system")
    tool_name = None
    if kind == "function_call":
        role, tool_name = "assistant", item.get("name")
        text = f"called {item.get('name')}({item.get('arguments', '')})"
    elif kind == "function_call_output":
        role, text = "tool", _text(item.get("output"))
    else:
        text = _text(item.get("content"))
    text = text.strip() or json.dumps(item, ensure_ascii=False, sort_keys=True)
    turn: dict[str, Any] = {
        "role": role,
        "content": text[:MAX_TEXT],
        "metadata": {MARK: {"index": index, "item": item}},
    }
    if tool_name:
        turn["tool_name"] = tool_name
    return turn


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") or p.get("refusal") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return "" if content is None else json.dumps(content, ensure_ascii=False)


class HindsightSession:
    """An ``agents.memory.Session`` over a :class:`hindsight.Hindsight` or a sync
    :class:`hindsight.Client`: one session of ``owner``'s conversations."""

    def __init__(
        self,
        session_id: str,
        *,
        memory: Any,
        owner: str,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id: str = validate.session_id(session_id) or ""
        if not self.session_id:
            raise ValueError("session_id is required")
        self.memory: MemoryApi = checked(memory)
        self.owner = validate.owner(owner)
        self.session_settings: SessionSettings | None = session_settings or SessionSettings()

    def _kept(self) -> list[Memory]:
        """The session's items as memories, oldest first (held ones too: history is history)."""
        found = [
            m
            for m in every(
                self.memory, self.owner, session_id=self.session_id, statuses=(Status.ACTIVE, *HELD)
            )
            if MARK in m.metadata
        ]
        return sorted(found, key=lambda m: (m.observed_at, m.metadata[MARK]["index"]))

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items in order: the latest ``limit`` (by default the settings')."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        kept = await asyncio.to_thread(self._kept)
        if limit is not None:
            kept = kept[-limit:] if limit > 0 else []
        return [m.metadata[MARK]["item"] for m in kept]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Retain ``items`` as the session's next turns."""
        if not items:
            return
        turns = [_turn(dict(item), i) for i, item in enumerate(items)]
        await asyncio.to_thread(
            self.memory.retain, self.owner, messages=turns, session_id=self.session_id
        )

    async def pop_item(self) -> TResponseInputItem | None:
        """Forget the latest item and return it (``None`` if the session is empty)."""
        kept = await asyncio.to_thread(self._kept)
        if not kept:
            return None
        last = kept[-1]
        await asyncio.to_thread(self.memory.forget, last.id, owner=self.owner)
        item: TResponseInputItem = last.metadata[MARK]["item"]
        return item

    async def clear_session(self) -> None:
        """Forget this session's memories (of no other session)."""
        await asyncio.to_thread(self.memory.forget, owner=self.owner, session_id=self.session_id)
