"""The wire: one HTTP request described (``_Call``) with how its answer is read, the
library error an error answer stands for, and the readers and paths the operations share.

Nothing here sends: :mod:`hindsight.client.transport` does, for both clients.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Generic, TypeVar
from urllib.parse import quote

from hindsight import errors, views
from hindsight.models import Memory

T = TypeVar("T")
_ERRORS: Final[dict[str, type[errors.HindsightError]]] = {
    cls.__name__: cls
    for cls in (
        errors.ValidationError,
        errors.NotFoundError,
        errors.ConflictError,
        errors.EmbeddingMismatchError,
        errors.WriteRefusedError,
        errors.AccessError,
        errors.AuthenticationError,
        errors.PermissionDeniedError,
        errors.StoreError,
        errors.StoreTimeoutError,
        errors.EmbeddingError,
    )
}
_BY_STATUS: Final[dict[int, type[errors.HindsightError]]] = {
    400: errors.ValidationError,
    401: errors.AuthenticationError,
    403: errors.PermissionDeniedError,
    404: errors.NotFoundError,
    409: errors.ConflictError,
    413: errors.ValidationError,
    422: errors.ValidationError,
    503: errors.StoreError,
    504: errors.StoreTimeoutError,
}


@dataclass(frozen=True, slots=True)
class _Call(Generic[T]):
    """One HTTP request, and how to turn its JSON answer into the library's return value."""

    method: str
    path: str
    read: Callable[[Any], T]
    params: dict[str, Any] | None = None
    body: Any = None
    headers: dict[str, str] | None = None

    @property
    def retryable(self) -> bool:
        """Whether sending it again is safe: a read, or a write under an idempotency key."""
        return self.method == "GET" or "Idempotency-Key" in (self.headers or {})

    def content(self) -> bytes | None:
        if self.body is None:
            return None
        return views.dumps(self.body).encode("utf-8")


def error(status: int, content: bytes) -> errors.HindsightError:
    """The library error an error answer stands for."""
    try:
        detail = json.loads(content)["error"]
        type_, message = str(detail["type"]), str(detail["message"])
    except (ValueError, KeyError, TypeError):
        type_, message = "", f"HTTP {status}: {content[:200].decode('utf-8', 'replace')}"
    cls = _ERRORS.get(type_) or _BY_STATUS.get(status, errors.HindsightError)
    return cls(message)


def read_memory(data: Any) -> Memory:
    """Reads an answer that is one memory."""
    return views.memory_from(data)


def read_memories(key: str) -> Callable[[Any], list[Memory]]:
    """A reader of an answer that lists memories under ``key``."""
    return lambda data: [views.memory_from(m) for m in data[key]]


def iso(x: datetime | str | None) -> str | None:
    """A time as a query parameter carries it."""
    return x.isoformat() if isinstance(x, datetime) else x


def _memory_id(memory_id: str) -> str:
    if not isinstance(memory_id, str) or not memory_id:
        raise errors.NotFoundError(f"no memory with id {memory_id!r}")
    return quote(memory_id, safe="")


def memory_path(memory_id: str) -> str:
    return f"/v1/memories/{_memory_id(memory_id)}"


def entity_path(name: str) -> str:
    """The page of the entity called ``name``; an empty name is refused as the library
    refuses it (the path would be the list's)."""
    if not isinstance(name, str) or not name.strip():
        raise errors.ValidationError("name must be a non-empty string")
    return f"/v1/entities/{quote(name, safe='')}"


def review_path(memory_id: str, decision: str) -> str:
    return f"/v1/review/{_memory_id(memory_id)}/{decision}"


def once(request_id: str | None) -> dict[str, str]:
    """The header that has a write kept once: under ``request_id``, or a new key."""
    return {"Idempotency-Key": request_id or uuid.uuid4().hex}
