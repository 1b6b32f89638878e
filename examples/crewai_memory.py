"""crewAI's Memory kept in hindsight. Runs offline: hindsight's local model embeds for
crewAI, and each memory names its scope, categories and importance, so no LLM is asked.
pip install . 'crewai>=1,<2'; python examples/crewai_memory.py"""

import os
import tempfile

from crewai import Memory

from hindsight import Hindsight, Settings
from hindsight.integrations.crewai import HindsightStorage


def main(memory: Hindsight) -> None:
    def embed(texts: list[str]) -> list[list[float]]:  # any crewAI embedder will do
        return [v.tolist() for v in memory.embedder.encode_documents(texts)]

    storage = HindsightStorage(memory=memory, owner="agent:crew")
    crew_memory = Memory(storage=storage, embedder=embed, consolidation_threshold=1.0)
    try:
        crew_memory.remember(
            "The client's Q3 budget is 40,000 euros",
            scope="/project/finance",
            categories=["budget"],
            importance=0.9,
        )
        crew_memory.remember(
            "The launch event is in Lisbon in October",
            scope="/project/events",
            categories=["events"],
            importance=0.6,
        )
        for match in crew_memory.recall("How much can we spend?", depth="shallow", limit=1):
            print(f"{match.score:.2f} {match.record.scope}: {match.record.content}")
        print(crew_memory.tree("/project"))
    finally:
        crew_memory.close()


os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")  # offline: crewAI sends nothing
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
with tempfile.TemporaryDirectory() as home, Hindsight(Settings(home=home)) as memory:
    main(memory)
