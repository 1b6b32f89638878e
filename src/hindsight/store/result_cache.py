"""The in-process result cache: least recently used entries go first, each expires.

Used for recall results when no Redis is configured (``hindsight.recall.cache``); what a
value is and when it is stale is the caller's business, this only keeps it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from hindsight.store.base import ResultCache


class LocalCache(ResultCache):
    """At most ``entries`` values of at most ``chars`` characters in all, dropped least
    recently used first, or when expired on ``clock`` (seconds, monotonic). Thread-safe."""

    def __init__(
        self,
        entries: int,
        *,
        chars: int = 64_000_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.entries = entries
        self.chars = chars
        self.clock = clock
        self._held: OrderedDict[str, tuple[float, str]] = OrderedDict()  # oldest use first
        self._size = 0  # characters held
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            found = self._held.get(key)
            if found is None:
                return None
            if found[0] <= self.clock():
                self._drop(key)
                return None
            self._held.move_to_end(key)
            return found[1]

    def put(self, key: str, value: str, ttl_seconds: int) -> None:
        with self._lock:
            if key in self._held:
                self._drop(key)
            if len(value) > self.chars:
                return  # larger than the whole cache: not kept
            self._held[key] = (self.clock() + ttl_seconds, value)
            self._size += len(value)
            while len(self._held) > self.entries or self._size > self.chars:
                self._drop(next(iter(self._held)))

    def _drop(self, key: str) -> None:
        self._size -= len(self._held.pop(key)[1])

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)
