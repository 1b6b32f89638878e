"""A LlamaIndex memory block kept in hindsight: ``HindsightMemoryBlock(memory=..., owner=...)``.

Messages flushed from a ``llama_index.core.memory.Memory``'s short-term queue are retained
as the owner's turns (kept verbatim, extracted into long-term memory); ``aget`` recalls
what the owner's memory holds on the recent messages, as lines of text for the prompt.

Needs the ``llama-index`` extra: ``pip install '.[llama-index]'``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import Field, field_validator

from hindsight import validate
from hindsight.integrations._memory import MemoryApi, checked

__all__ = ["HindsightMemoryBlock"]

ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
RECENT = 3  # how many of the latest messages make the query
MAX_QUERY = 2_000


class HindsightMemoryBlock(BaseMemoryBlock[str]):
    """A ``BaseMemoryBlock`` over a :class:`hindsight.Hindsight` or a sync
    :class:`hindsight.Client`: the long-term memory of ``owner``."""

    name: str = Field(default="hindsight", description="The name of the memory block.")
    description: str | None = Field(default="What hindsight remembers of the user.")
    memory: Any = Field(description="A hindsight.Hindsight or a sync hindsight.Client.")
    owner: str = Field(description="Whose memory, e.g. 'user:alice'.")
    session_id: str | None = Field(default=None, description="The session flushed turns join.")
    k: int = Field(default=5, description="How many memories aget returns at most.")

    @field_validator("memory")
    @classmethod
    def _memory(cls, value: Any) -> MemoryApi:
        return checked(value)

    @field_validator("owner")
    @classmethod
    def _owner(cls, value: str) -> str:
        return validate.owner(value)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        said = [m for m in messages or [] if m.content and m.content.strip()]
        if not said:
            return ""
        # the user's latest words, else the latest messages: what the reply must answer
        asked = [m for m in said if m.role.value == "user"][-1:] or said[-RECENT:]
        query = "\n".join(str(m.content) for m in asked)[-MAX_QUERY:]
        hits = await asyncio.to_thread(self.memory.recall, self.owner, query, k=self.k)
        return "\n".join(f"- {hit.memory.content}" for hit in hits)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        turns = [
            {"role": ROLES.get(str(m.role.value), "tool"), "content": m.content}
            for m in messages
            if m.content and m.content.strip()
        ]
        if turns:
            await asyncio.to_thread(
                self.memory.retain, self.owner, messages=turns, session_id=self.session_id
            )
