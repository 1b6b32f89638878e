"""The result cache in Redis (``HINDSIGHT_REDIS_URL``), shared by every server.

Keys are ``hindsight:rc:{key}`` (the caller's key, a digest), each set with its expiry
(``SET ... EX``): Redis drops them, and bounds them with its own ``maxmemory`` policy.
Values are text (JSON). A Redis that cannot be reached is a :class:`StoreError`; for
``retry_seconds`` after it the cache is not asked (a miss, nothing kept), so a Redis that
is down costs requests no timeouts and the log one line per outage, not one a request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from hindsight.errors import StoreError
from hindsight.store.base import ResultCache

try:
    import redis
except ImportError as exc:  # pragma: no cover - depends on the install
    raise StoreError(
        "the recall cache in Redis needs redis: install hindsight's 'redis' extra "
        "(from its checkout: pip install '.[redis]')"
    ) from exc


class RedisCache(ResultCache):
    """Values in Redis under ``prefix``, each with its expiry."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "hindsight:rc:",
        timeout: float = 1.0,
        retry_seconds: float = 5.0,
    ) -> None:
        # a cache is worth less than the time a slow Redis would cost: short timeouts
        self._redis = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=True
        )
        self._prefix = prefix
        self._retry = retry_seconds
        self._down_until = 0.0
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        if self._resting():
            return None
        value = self._call(lambda: self._redis.get(self._prefix + key))
        return None if value is None else str(value)

    def put(self, key: str, value: str, ttl_seconds: int) -> None:
        if not self._resting():
            self._call(lambda: self._redis.set(self._prefix + key, value, ex=ttl_seconds))

    def close(self) -> None:
        self._redis.close()

    def _resting(self) -> bool:
        """Whether Redis failed less than ``retry_seconds`` ago: not asked again yet (each
        failure is reported once, not once a request)."""
        with self._lock:
            return time.monotonic() < self._down_until

    def _call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except redis.RedisError as exc:
            with self._lock:
                self._down_until = time.monotonic() + self._retry
            raise StoreError(f"the recall cache (Redis) failed: {exc}") from exc
