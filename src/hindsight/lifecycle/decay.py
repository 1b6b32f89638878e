"""Decay: a memory's confidence fades while it goes unused, and is computed, not stored.

Effective confidence = stored confidence x ``per_week`` ^ (weeks since last use), where
last use is the latest of when hindsight learnt the memory (``created_at``; not
``observed_at``: a conversation of 2023 imported today is not stale on arrival), when it
was last restated or marked useful (``used_at``) and, when recalls count as use, when it
was last recalled (``last_accessed_at``). A pinned memory does not decay.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from hindsight.models import Memory

WEEK: Final = timedelta(weeks=1)


@dataclass(frozen=True, slots=True)
class Decay:
    """How fast unused memories fade: ``per_week`` (1.0: never) and whether a recall is use."""

    per_week: float = 0.98
    counts_recall: bool = False

    def last_use(self, memory: Memory) -> datetime:
        """When the memory was last learnt, restated, marked useful or (if counted) recalled."""
        times = [memory.created_at]
        if memory.used_at is not None:
            times.append(memory.used_at)
        if self.counts_recall and memory.last_accessed_at is not None:
            times.append(memory.last_accessed_at)
        return max(times)

    def factor(self, memory: Memory, now: datetime) -> float:
        """What the stored confidence is multiplied by at ``now`` (1.0 for a pinned memory)."""
        if memory.pinned or self.per_week >= 1.0:
            return 1.0
        idle = (now - self.last_use(memory)) / WEEK
        return float(self.per_week ** max(0.0, idle))

    def confidence(self, memory: Memory, now: datetime) -> float:
        """The memory's effective confidence at ``now``."""
        return memory.confidence * self.factor(memory, now)

    def idle_since(self, memory: Memory, now: datetime) -> timedelta:
        """How long the memory has gone unused at ``now`` (never negative)."""
        return max(timedelta(0), now - self.last_use(memory))
