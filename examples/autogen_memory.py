"""An AutoGen AssistantAgent with hindsight as its memory. Runs offline (a replayed model):
python examples/autogen_memory.py"""

import asyncio
import tempfile

from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_ext.models.replay import ReplayChatCompletionClient

from hindsight import Hindsight, Settings
from hindsight.integrations.autogen import HindsightMemory


async def main(memory: Hindsight) -> None:
    alice = HindsightMemory(memory=memory, owner="user:alice")
    await alice.add(
        MemoryContent(content="Alice is allergic to peanuts", mime_type=MemoryMimeType.TEXT)
    )
    model = ReplayChatCompletionClient(["Skip the satay: it has peanuts."])
    agent = AssistantAgent("chef", model_client=model, memory=[alice])
    result = await agent.run(task="What should I avoid at the Thai place?")
    for message in result.messages:
        print(type(message).__name__, ":", message.to_text())


with tempfile.TemporaryDirectory() as home, Hindsight(Settings(home=home)) as memory:
    asyncio.run(main(memory))
