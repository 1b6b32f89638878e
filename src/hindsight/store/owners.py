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

    def __init__(self, make: Callable[[str], E], limit: int | None) -> None:
        self._make = make
        self._limit = limit
        self._entries: OrderedDict[str, E] = OrderedDict()  # least recently used first
        self._sizes: dict[str, int] = {}  # as last reported to used()
        self._held = 0  # their sum
        self._lock = threading.Lock()

    def get(self, owner: str) -> E:
        """The owner's entry, made if new; it becomes the most recently used."""
        with self._lock:
            entry = self._entries.get(owner)
            if entry is None:
                entry = self._entries[owner] = self._make(owner)
            self._entries.move_to_end(owner)
            return entry

    def size(self, owner: str) -> int | None:
        """What the owner's entry held when last used; None if it is not held."""
        with self._lock:
            return self._sizes.get(owner)

    def peek(self, owner: str) -> E | None:
        with self._lock:
            return self._entries.get(owner)

    def pop(self, owner: str) -> E | None:
        with self._lock:
            self._held -= self._sizes.pop(owner, 0)
            return self._entries.pop(owner, None)

    def items(self) -> list[tuple[str, E]]:
        with self._lock:
            return list(self._entries.items())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._sizes.clear()
            self._held = 0

    def used(self, owner: str, entry: E, size: int) -> list[tuple[str, E]]:
        """Note that ``entry`` now holds ``size``; take out the least recently used other
        entries until the sizes held fit the limit, and return them for the caller to
        release."""
        going: list[tuple[str, E]] = []
        with self._lock:
            if self._entries.get(owner) is not entry:
                return going  # let go meanwhile by another thread: not held any more
            self._held += size - self._sizes.get(owner, 0)
            self._sizes[owner] = size
            if self._limit is None:
                return going
            for other, held in list(self._entries.items()):
                if self._held <= self._limit:
                    break
                if held is not entry:
                    del self._entries[other]
                    self._held -= self._sizes.pop(other, 0)
                    going.append((other, held))
        return going
