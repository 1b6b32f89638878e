"""hindsight.integrations.openai_agents: an Agents SDK session over the engine or a Client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, function_tool
from agents.items import ModelResponse
from agents.memory import Session
from agents.models.interface import Model
from agents.run import RunConfig
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from hindsight import Hindsight, Kind, Settings
from hindsight.embed import Embeddings
from hindsight.integrations.openai_agents import HindsightSession

ITEMS: list[Any] = [
    {"role": "user", "content": "I live in Lisbon and I prefer trains."},
    {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"c": "L"}'},
    {"type": "function_call_output", "call_id": "c1", "output": "sunny, 24C"},
    {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}],
    },
    {"role": "user", "content": [{"type": "input_text", "text": "Thanks!"}]},
]


def test_items_round_trip(adapter_memory: Any, adapter_engine: Hindsight) -> None:
    session = HindsightSession("chat-1", memory=adapter_memory, owner="user:alice")
    other = HindsightSession("chat-2", memory=adapter_memory, owner="user:alice")
    assert isinstance(session, Session)

    async def scenario() -> None:
        await session.add_items(ITEMS[:2])
        await session.add_items(ITEMS[2:])
        await other.add_items([{"role": "user", "content": "another chat"}])
        assert await session.get_items() == ITEMS
        assert await session.get_items(limit=2) == ITEMS[-2:]
        assert await session.pop_item() == ITEMS[-1]
        assert await session.get_items() == ITEMS[:-1]
        # what the user said is the owner's long-term memory
        hits = adapter_engine.recall("user:alice", "where does she live?")
        assert any("Lisbon" in h.memory.content for h in hits)
        assert any(m.kind is not Kind.EPISODE for m in adapter_engine.list_memories("user:alice"))
        await session.clear_session()
        assert await session.get_items() == []
        assert await session.pop_item() is None
        assert await other.get_items() == [{"role": "user", "content": "another chat"}]

    asyncio.run(scenario())
    assert adapter_engine.list_memories("user:alice", session_id="chat-1") == []


def test_persists_across_processes(tmp_path: Path, embedder: Embeddings) -> None:
    settings = Settings(home=tmp_path / "home", sqlite_synchronous="OFF")
    with Hindsight(settings, embedder=embedder) as first:
        session = HindsightSession("s", memory=first, owner="user:bob")
        asyncio.run(session.add_items(ITEMS))
    with Hindsight(settings, embedder=embedder) as second:
        session = HindsightSession("s", memory=second, owner="user:bob")
        assert asyncio.run(session.get_items()) == ITEMS


class FakeModel(Model):
    """Calls the weather tool once, then answers with what it saw."""

    def __init__(self) -> None:
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kw: Any):  # type: ignore[no-untyped-def]
        self.inputs.append(input)
        done = isinstance(input, list) and any(
            isinstance(i, dict) and i.get("type") == "function_call_output" for i in input[-2:]
        )
        if not done:
            call = ResponseFunctionToolCall(
                type="function_call", call_id=f"c{len(self.inputs)}", name="weather", arguments="{}"
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        text = ResponseOutputText(type="output_text", text="Sunny in Lisbon.", annotations=[])
        message = ResponseOutputMessage(
            type="message", id="m1", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool
def weather() -> str:
    """The weather where the user is."""
    return "sunny"


def test_runner_keeps_its_history(adapter_memory: Any) -> None:
    session = HindsightSession("run", memory=adapter_memory, owner="user:carol")
    model = FakeModel()
    agent = Agent(name="helper", model=model, tools=[weather])
    config = RunConfig(tracing_disabled=True)

    async def scenario() -> None:
        first = await Runner.run(agent, "I live in Lisbon.", session=session, run_config=config)
        assert first.final_output == "Sunny in Lisbon."
        items = await session.get_items()
        assert items[0] == {"role": "user", "content": "I live in Lisbon."}
        assert [i.get("type") for i in items[1:]] == [
            "function_call",
            "function_call_output",
            "message",
        ]
        await Runner.run(agent, "And tomorrow?", session=session, run_config=config)
        seen = model.inputs[-2]
        assert seen[: len(items)] == items  # the second run starts from the stored history

    asyncio.run(scenario())
