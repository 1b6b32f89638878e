"""What the HTTP providers share: timeouts, bounded retries, a concurrency limit, errors.

A call is tried up to ``1 + max_retries`` times: again after a connection error, a
timeout, a 429 or a 5xx, waiting ``Retry-After`` when the server says (capped at
``retry_max_wait``) or else an exponential backoff with full jitter; any other 4xx is
final (:class:`~hindsight.errors.LLMRequestError`). At most ``concurrency`` calls of
one provider are in flight; a call waiting out a backoff holds no slot. The API key
goes into headers only: it is never logged, and errors quote the server's message,
not the request.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from hindsight.errors import (
    LLMRequestError,
    LLMTimeoutError,
    LLMTransportError,
    MissingExtraError,
)
from hindsight.llm.base import LLM

if TYPE_CHECKING:
    import httpx

_log = logging.getLogger("hindsight.llm")
_MAX_MESSAGE: Final = 300


@dataclass(frozen=True, slots=True)
class Transport:
    """How a provider reaches its server."""

    base_url: str
    timeout: float = 60.0
    max_retries: int = 3
    retry_base: float = 0.5
    retry_max_wait: float = 30.0
    concurrency: int = 4


def _httpx() -> Any:
    try:
        import httpx
    except ImportError:
        raise MissingExtraError("llm", "httpx") from None
    return httpx


def retry_after(value: str | None, cap: float) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(max(seconds, 0.0), cap)


class HTTPProvider(LLM):
    """An LLM behind a JSON-over-HTTP API; subclasses build bodies and read answers."""

    def __init__(
        self,
        transport: Transport,
        *,
        headers: Mapping[str, str],
        model: str | None,
        http: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        hx = _httpx()
        self.transport = transport
        self.model = model
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(transport.concurrency)
        self._client: httpx.Client = hx.Client(
            base_url=transport.base_url.rstrip("/"),
            headers=dict(headers),
            timeout=transport.timeout,
            transport=http,
        )

    def __repr__(self) -> str:  # never the headers: they hold the key
        return f"{type(self).__name__}(base_url={self.transport.base_url!r}, model={self.model!r})"

    def close(self) -> None:
        self._client.close()

    def _wait(self, attempt: int) -> float:
        ceiling = self.transport.retry_base * 2**attempt
        return min(random.uniform(0, ceiling), self.transport.retry_max_wait)

    def post(self, path: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        """POST ``body`` as JSON; the answer's JSON and how many retries it took."""
        hx = _httpx()
        tries = 1 + self.transport.max_retries
        for attempt in range(tries):
            last = attempt + 1 == tries
            try:
                with self._slots:
                    response = self._client.post(path, json=body)
            except hx.TimeoutException:
                if last:
                    raise LLMTimeoutError(
                        f"{self.name}: no answer within {self.transport.timeout:g} s "
                        f"({tries} tries)",
                        retries=attempt,
                    ) from None
                self._sleep(self._wait(attempt))
                continue
            except hx.TransportError as exc:
                if last:
                    raise LLMTransportError(
                        f"{self.name}: cannot reach {self.transport.base_url}: "
                        f"{type(exc).__name__} ({tries} tries)",
                        retries=attempt,
                    ) from None
                self._sleep(self._wait(attempt))
                continue
            status = response.status_code
            if status < 400:
                return self._json(response, attempt), attempt
            message = _message(response)
            if status != 429 and status < 500:  # the request itself is wrong
                raise LLMRequestError(
                    f"{self.name}: the server refused the request ({status}): {message}",
                    status=status,
                    retries=attempt,
                )
            if last:
                raise LLMTransportError(
                    f"{self.name}: {status} on every one of {tries} tries: {message}",
                    retries=attempt,
                )
            wait = retry_after(response.headers.get("retry-after"), self.transport.retry_max_wait)
            _log.info("%s: %s, retrying (%d of %d)", self.name, status, attempt + 1, tries - 1)
            self._sleep(self._wait(attempt) if wait is None else wait)
        raise AssertionError("unreachable: the last try returns or raises")

    def _json(self, response: httpx.Response, attempt: int) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise LLMTransportError(
                f"{self.name}: the server answered {response.status_code} without a JSON object",
                retries=attempt,
            )
        return data


def _message(response: httpx.Response) -> str:
    """The server's own error message, short (OpenAI and Anthropic put it at error.message)."""
    try:
        data = response.json()
    except ValueError:
        return response.text[:_MAX_MESSAGE] or response.reason_phrase
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])[:_MAX_MESSAGE]
    if isinstance(error, str):
        return error[:_MAX_MESSAGE]
    return json.dumps(data)[:_MAX_MESSAGE]
