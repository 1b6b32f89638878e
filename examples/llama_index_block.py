"""A LlamaIndex Memory with a hindsight memory block. Runs offline:
python examples/llama_index_block.py"""

import asyncio
import tempfile

from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory

from hindsight import Hindsight, Settings
from hindsight.integrations.llama_index import HindsightMemoryBlock


async def main(memory: Hindsight) -> None:
    block = HindsightMemoryBlock(memory=memory, owner="user:alice")
    chat = Memory.from_defaults(
        session_id="chat-1", token_limit=60, token_flush_size=20, memory_blocks=[block]
    )
    await chat.aput(ChatMessage(role="user", content="My sister Ana lives in Madrid."))
    for i in range(6):  # enough to flush the first message out of the short-term queue
        await chat.aput(ChatMessage(role="assistant", content=f"reply number {i} " * 4))
    await chat.aput(ChatMessage(role="user", content="Where does Ana live?"))
    for message in await chat.aget():
        print(message.role.value, ":", message.content)


with tempfile.TemporaryDirectory() as home, Hindsight(Settings(home=home)) as memory:
    asyncio.run(main(memory))
