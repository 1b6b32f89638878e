"""Sending a described call over httpx, for both clients: the connection's headers, the
retries (a read, or a write under an idempotency key, after a dropped connection or a
502/503/504), and the library error a failure to reach the server stands for."""

from __future__ import annotations

import random
from typing import Any, Final, TypeVar

from hindsight import errors
from hindsight.client.wire import _Call, error

DEFAULT_TIMEOUT: Final = 30.0
DEFAULT_RETRIES: Final = 2
RETRY_STATUSES: Final = frozenset({502, 503, 504})
T = TypeVar("T")


def load_httpx() -> Any:
    """httpx, imported when a client is made: ``import hindsight`` works without it."""
    try:
        import httpx
    except ImportError:
        raise errors.MissingExtraError("client", "httpx") from None
    return httpx


def default_headers(api_key: str | None) -> dict[str, str]:
    """The headers of every request: JSON both ways, and the API key if there is one."""
    headers = {"accept": "application/json", "content-type": "application/json"}
    if api_key is not None:
        headers["authorization"] = f"Bearer {api_key}"
    return headers


def request(http: Any, call: _Call[Any]) -> Any:
    """The httpx request for ``call``; parameters given as None are left out."""
    params = {k: v for k, v in (call.params or {}).items() if v is not None}
    return http.build_request(
        call.method, call.path, params=params, content=call.content(), headers=call.headers
    )


def answer(call: _Call[T], response: Any) -> T:
    """What the call returns, or the library error its answer stands for."""
    if response.status_code >= 400:
        raise error(response.status_code, response.content)
    return call.read(response.json())


def backoff(attempt: int) -> float:
    """Seconds before the next try: 0.25, 0.5, 1, ... with jitter, at most 4."""
    return float(min(4.0, 0.25 * 2**attempt) * random.uniform(0.5, 1.0))


class Transport:
    """What both clients share: the base URL, the error mapping for transport failures."""

    base_url: str
    timeout: float

    def _unreachable(self, exc: Exception) -> errors.HindsightError:
        hx = load_httpx()
        if isinstance(exc, hx.TimeoutException):
            return errors.StoreTimeoutError(
                f"the hindsight server at {self.base_url} did not answer within {self.timeout:g} s"
            )
        return errors.StoreError(f"cannot reach the hindsight server at {self.base_url}: {exc}")
