"""An AutoGen memory kept in hindsight: ``HindsightMemory(memory=..., owner=...)``.

``add`` retains the content as the owner's (extracted like any retained text; the exact
content, MIME type and metadata kept with it); ``query`` and ``update_context`` recall the
owner's memories, best first, each result's metadata carrying its hindsight id, owner,
time and score under ``"hindsight"``. ``clear`` forgets every memory of that owner only.

Needs the ``autogen`` extra: ``pip install '.[autogen]'``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from autogen_core import CancellationToken
from autogen_core.memory import (
    Memory,
    MemoryContent,
    MemoryMimeType,
    MemoryQueryResult,
    UpdateContextResult,
)
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import SystemMessage

from hindsight import validate
from hindsight.integrations._memory import MemoryApi, checked
from hindsight.models import RecallResult

__all__ = ["HindsightMemory"]

MARK = "autogen"  # the metadata key that holds what was added, exactly


class HindsightMemory(Memory):
    """``autogen_core.memory.Memory`` over a :class:`hindsight.Hindsight` or a sync
    :class:`hindsight.Client`: the long-term memory of ``owner``."""

    def __init__(self, *, memory: Any, owner: str, k: int = 5) -> None:
        self.memory: MemoryApi = checked(memory)
        self.owner = validate.owner(owner)
        self.k = k

    async def add(
        self, content: MemoryContent, cancellation_token: CancellationToken | None = None
    ) -> None:
        """Retain ``content`` (text, or a JSON object) as the owner's."""
        data = content.content
        if isinstance(data, str):
            text = data
        elif isinstance(data, dict):
            text = json.dumps(data, ensure_ascii=False)
        else:
            raise TypeError(f"hindsight keeps text or JSON objects, not {type(data).__name__}")
        mime = content.mime_type
        kept = {
            "content": data,
            "mime_type": mime.value if isinstance(mime, MemoryMimeType) else mime,
            "metadata": content.metadata,
        }
        await asyncio.to_thread(self.memory.retain, self.owner, text, metadata={MARK: kept})

    async def query(
        self,
        query: str | MemoryContent,
        cancellation_token: CancellationToken | None = None,
        **kwargs: Any,
    ) -> MemoryQueryResult:
        """The owner's memories that best answer ``query``, best first (``k=`` how many)."""
        text = query if isinstance(query, str) else str(query.content)
        k = int(kwargs.get("k", self.k))
        hits = await asyncio.to_thread(self.memory.recall, self.owner, text, k=k)
        return MemoryQueryResult(results=[_content(hit) for hit in hits])

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """Add a system message of what the owner's memory holds on the last message."""
        messages = await model_context.get_messages()
        last = next((m for m in reversed(messages) if isinstance(m.content, str)), None)
        if last is None or not str(last.content).strip():
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        found = await self.query(str(last.content))
        if found.results:
            lines = [f"{i}. {r.content!s}" for i, r in enumerate(found.results, 1)]
            text = "Relevant memory content (in order of relevance):\n" + "\n".join(lines)
            await model_context.add_message(SystemMessage(content=text))
        return UpdateContextResult(memories=found)

    async def clear(self) -> None:
        """Forget every memory of the owner (of no other)."""
        await asyncio.to_thread(self.memory.forget, owner=self.owner)

    async def close(self) -> None:
        """Nothing to release: the engine or client is the caller's to close."""


def _content(hit: RecallResult) -> MemoryContent:
    m = hit.memory
    about = {
        "id": m.id,
        "owner": m.owner,
        "kind": m.kind.value,
        "created_at": m.created_at.isoformat(),
        "observed_at": m.observed_at.isoformat(),
        "score": hit.score,
    }
    kept = m.metadata.get(MARK)
    if isinstance(kept, dict):
        return MemoryContent(
            content=kept["content"],
            mime_type=kept["mime_type"],
            metadata={**(kept.get("metadata") or {}), "hindsight": about},
        )
    return MemoryContent(
        content=m.content, mime_type=MemoryMimeType.TEXT, metadata={"hindsight": about}
    )
