"""hindsight.integrations.llama_index: a LlamaIndex memory block over the engine or a Client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory
from sqlalchemy.ext.asyncio import create_async_engine

from hindsight import Hindsight, Kind
from hindsight.integrations.llama_index import HindsightMemoryBlock


def test_put_and_get(adapter_memory: Any, adapter_engine: Hindsight) -> None:
    block = HindsightMemoryBlock(memory=adapter_memory, owner="user:alice", session_id="li")
    assert block.name == "hindsight"

    async def scenario() -> None:
        await block.aput(
            [
                ChatMessage(role="user", content="I am vegetarian and I live in Oslo."),
                ChatMessage(role="assistant", content="Noted!"),
            ]
        )
        kept = adapter_engine.list_memories("user:alice", kinds=[Kind.EPISODE])
        assert {(m.content, m.metadata["role"], m.provenance.session_id) for m in kept} == {
            ("I am vegetarian and I live in Oslo.", "user", "li"),
            ("Noted!", "assistant", "li"),
        }
        text = await block.aget([ChatMessage(role="user", content="what should I cook tonight?")])
        assert "vegetarian" in text.splitlines()[0]
        assert await block.aget([]) == ""

    asyncio.run(scenario())


def test_in_memory_from_defaults(
    adapter_memory: Any, adapter_engine: Hindsight, tmp_path: Path
) -> None:
    block = HindsightMemoryBlock(memory=adapter_memory, owner="user:bob")

    async def scenario() -> list[ChatMessage]:
        # the chat store's engine is the test's, so the test closes it
        engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}")
        memory = Memory.from_defaults(
            session_id="s",
            token_limit=60,
            token_flush_size=20,
            memory_blocks=[block],
            async_engine=engine,
        )
        try:
            return await converse(memory)
        finally:
            await engine.dispose()

    async def converse(memory: Memory) -> list[ChatMessage]:
        await memory.aput(ChatMessage(role="user", content="My sister Ana lives in Madrid."))
        for i in range(6):
            await memory.aput(ChatMessage(role="assistant", content=f"filler reply {i} " * 4))
        await memory.aput(ChatMessage(role="user", content="where does Ana live?"))
        return await memory.aget()

    messages = asyncio.run(scenario())
    kept = [m.content for m in adapter_engine.list_memories("user:bob", kinds=[Kind.EPISODE])]
    assert "My sister Ana lives in Madrid." in kept  # flushed from the queue into hindsight
    assert "Madrid" in str(messages[0].content)  # the block's text, in the system message
    assert messages[0].role.value == "system"
