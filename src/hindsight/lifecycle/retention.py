"""Retention: how long an owner's memories are kept, by a glob on the owner.

``{"session:*": 30, "user:*": None}`` keeps a session owner's memories 30 days from when
hindsight learnt them, and a user's until they are forgotten. When several patterns
match, the most specific wins: an exact name over any glob, then the pattern with more
literal characters (``"session:eu-*"`` over ``"session:*"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fnmatch import fnmatchcase

from hindsight.models import Memory

_WILD = frozenset("*?[")


def _specificity(pattern: str) -> tuple[bool, int, str]:
    literal = sum(1 for c in pattern if c not in _WILD)
    return (not any(c in _WILD for c in pattern), literal, pattern)


@dataclass(frozen=True, slots=True)
class Retention:
    """Days kept by owner pattern (None: no limit)."""

    rules: Mapping[str, int | None] = field(default_factory=dict)

    def days(self, owner: str) -> int | None:
        """The days ``owner``'s memories are kept, by the most specific matching rule."""
        matching = [p for p in self.rules if fnmatchcase(owner, p)]
        if not matching:
            return None
        return self.rules[max(matching, key=_specificity)]

    def cutoff(self, owner: str, now: datetime) -> datetime | None:
        """Memories of ``owner`` learnt before this are past retention at ``now``."""
        days = self.days(owner)
        return None if days is None else now - timedelta(days=days)


def is_expired(memory: Memory, now: datetime) -> bool:
    """Whether the memory's own ``expires_at`` has passed at ``now``."""
    return memory.expires_at is not None and memory.expires_at <= now


def is_retired(memory: Memory, cutoff: datetime | None) -> bool:
    """Whether the memory is past its owner's retention (learnt before ``cutoff``)."""
    return cutoff is not None and memory.created_at < cutoff
