"""hindsight.integrations.autogen: an AutoGen memory over the engine or a Client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("autogen_core")
pytest.importorskip("autogen_agentchat")

from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import SystemMessage, UserMessage
from autogen_ext.models.replay import ReplayChatCompletionClient

from hindsight import Hindsight
from hindsight.integrations.autogen import HindsightMemory


def test_add_query_round_trip(adapter_memory: Any, adapter_engine: Hindsight) -> None:
    mem = HindsightMemory(memory=adapter_memory, owner="user:alice")

    async def scenario() -> None:
        await mem.add(
            MemoryContent(
                content="The user prefers metric units",
                mime_type=MemoryMimeType.TEXT,
                metadata={"category": "units"},
            )
        )
        await mem.add(MemoryContent(content={"city": "Oslo"}, mime_type=MemoryMimeType.JSON))
        found = await mem.query("which units does the user like?")
        best = found.results[0]
        assert best.content == "The user prefers metric units"
        assert best.mime_type == "text/plain"
        assert best.metadata is not None and best.metadata["category"] == "units"
        about = best.metadata["hindsight"]
        stored = adapter_engine.get(about["id"])
        assert stored.owner == about["owner"] == "user:alice"
        assert about["created_at"] == stored.created_at.isoformat()
        scores = [r.metadata["hindsight"]["score"] for r in found.results if r.metadata]
        assert scores == sorted(scores, reverse=True)
        as_content = await mem.query(MemoryContent(content="Oslo", mime_type="text/plain"))
        assert {"city": "Oslo"} in [r.content for r in as_content.results]

    asyncio.run(scenario())


def test_clear_forgets_that_owner_only(adapter_memory: Any, adapter_engine: Hindsight) -> None:
    alice = HindsightMemory(memory=adapter_memory, owner="user:alice")
    bob = HindsightMemory(memory=adapter_memory, owner="user:bob")

    async def scenario() -> None:
        await alice.add(MemoryContent(content="Alice plays chess", mime_type="text/plain"))
        await bob.add(MemoryContent(content="Bob plays chess", mime_type="text/plain"))
        await alice.clear()
        assert (await alice.query("chess")).results == []
        assert next(r.content for r in (await bob.query("chess")).results) == "Bob plays chess"
        await alice.close()

    asyncio.run(scenario())
    assert adapter_engine.list_memories("user:alice", include_history=True) == []


def test_update_context_and_assistant_agent(adapter_memory: Any) -> None:
    mem = HindsightMemory(memory=adapter_memory, owner="user:carol")

    async def scenario() -> None:
        await mem.add(MemoryContent(content="Carol is allergic to peanuts", mime_type="text/plain"))
        context = UnboundedChatCompletionContext()
        await context.add_message(UserMessage(content="any allergies?", source="user"))
        result = await mem.update_context(context)
        assert result.memories.results[0].content == "Carol is allergic to peanuts"
        messages = await context.get_messages()
        assert isinstance(messages[-1], SystemMessage)
        assert "peanuts" in messages[-1].content

        model = ReplayChatCompletionClient(["No peanuts for you."])
        agent = AssistantAgent("helper", model_client=model, memory=[mem])
        answer = await agent.run(task="What should I avoid eating?")
        assert answer.messages[-1].content == "No peanuts for you."
        kinds = [type(m).__name__ for m in answer.messages]
        assert "MemoryQueryEvent" in kinds
        seen = model.create_calls[0]["messages"]
        assert any("peanuts" in str(m.content) for m in seen if isinstance(m, SystemMessage))

    asyncio.run(scenario())
