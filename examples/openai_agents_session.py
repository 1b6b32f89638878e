"""An OpenAI Agents SDK agent whose session is kept in hindsight. Runs offline (a fake model
at the SDK's Model seam): python examples/openai_agents_session.py"""

import asyncio
import tempfile
from typing import Any

from agents import Agent, Runner
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.run import RunConfig
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from hindsight import Hindsight, Settings
from hindsight.integrations.openai_agents import HindsightSession


class EchoModel(Model):
    """Says how many items of history it was given."""

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kw: Any):
        text = ResponseOutputText(
            type="output_text", text=f"I see {len(input)} items.", annotations=[]
        )
        message = ResponseOutputMessage(
            type="message", id="m", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


async def main(memory: Hindsight) -> None:
    session = HindsightSession("chat-1", memory=memory, owner="user:alice")
    agent = Agent(name="helper", model=EchoModel())
    config = RunConfig(tracing_disabled=True)
    for said in ["I live in Lisbon and I prefer trains.", "Plan me a weekend trip."]:
        result = await Runner.run(agent, said, session=session, run_config=config)
        print(said, "->", result.final_output)
    print(await session.get_items(limit=2))
    # what Alice said is her long-term memory, for any later session or agent
    print([r.memory.content for r in memory.recall("user:alice", "how does she travel?", k=3)])


with tempfile.TemporaryDirectory() as home, Hindsight(Settings(home=home)) as memory:
    asyncio.run(main(memory))
