"""Results mapped back to the benchmark's turns: an episode is its turn, a derived memory
counts for the turns it was derived from."""

from __future__ import annotations

from collections.abc import Sequence

from hindsight.bench.quality.metrics import dedupe
from hindsight.models import Kind, Memory
from hindsight.store import Store


class TurnMap:
    """Memory id -> the benchmark turn ids it stands for, cached per conversation."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._turns: dict[str, tuple[str, ...]] = {}

    def learn(self, memory_id: str, turn_id: str) -> bool:
        """Map an episode to its turn; False when the id already stands for another turn."""
        if memory_id in self._turns:
            return False
        self._turns[memory_id] = (turn_id,)
        return True

    def of_memory(self, memory: Memory, depth: int = 0) -> tuple[str, ...]:
        if memory.id in self._turns:
            return self._turns[memory.id]
        turn_id = memory.metadata.get("turn_id")
        if memory.kind is Kind.EPISODE and isinstance(turn_id, str):
            turns: tuple[str, ...] = (turn_id,)
        elif depth < 4:  # a derived memory counts for the turns it came from
            turns = tuple(dedupe(self.of_ids(memory.provenance.derived_from, depth + 1)))
        else:
            turns = ()
        self._turns[memory.id] = turns
        return turns

    def of_ids(self, ids: Sequence[str], depth: int = 0) -> list[str]:
        missing = [i for i in ids if i not in self._turns]
        if missing:
            for memory in self._store.get(missing):
                self.of_memory(memory, depth)
        return [t for i in ids for t in self._turns.get(i, ())]
