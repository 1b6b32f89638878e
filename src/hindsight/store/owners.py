"""The per-owner entries of an in-process cache, least recently used first, bounded.

The keyword and vector indexes keep one entry per owner they have searched. A server
that meets many owners must not keep them all: past a bound on what the entries hold
(documents, vectors), the owners searched longest ago are let go, and the cache that
owns them releases each (saving it first when that is worth it).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

E = TypeVar("E")


class Owners(Generic[E]):
    """Owner -> entry, in order of use. Thread-safe."""

    def __init__(self, make: Callable[[str], E], size: Callable[[E], int], limit: int | None):
        self._make = make
        self._size = size
        self._limit = limit
        self._entries: OrderedDict[str, E] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def get(self, owner: str) -> E:
        """The owner's entry, made if new; it becomes the most recently used."""
        with self._lock:
            entry = self._entries.get(owner)
            if entry is None:
                entry = self._entries[owner] = self._make(owner)
            self._entries.move_to_end(owner)
            return entry

    def peek(self, owner: str) -> E | None:
        with self._lock:
            return self._entries.get(owner)

    def pop(self, owner: str) -> E | None:
        with self._lock:
            return self._entries.pop(owner, None)

    def items(self) -> list[tuple[str, E]]:
        with self._lock:
            return list(self._entries.items())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def over(self, used: E) -> list[tuple[str, E]]:
        """Take out the least recently used entries, never ``used``, until the sizes of
        those left fit the limit; the caller releases what is returned."""
        if self._limit is None:
            return []
        going = []
        with self._lock:
            held = sum(self._size(entry) for entry in self._entries.values())
            for owner, entry in list(self._entries.items()):
                if held <= self._limit:
                    break
                if entry is not used:
                    del self._entries[owner]
                    held -= self._size(entry)
                    going.append((owner, entry))
        return going
