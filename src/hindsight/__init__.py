"""hindsight: long-term memory for LLM agents, embedded and offline by default.

>>> from hindsight import Hindsight                      # doctest: +SKIP
>>> with Hindsight() as memory:                          # doctest: +SKIP
...     memory.retain("user:alice", "I moved to Berlin last month.")
...     memory.recall("user:alice", "where does Alice live?")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hindsight.config import Settings
from hindsight.engine import UNSET, Hindsight
from hindsight.errors import (
    AccessError,
    AuthenticationError,
    ConflictError,
    EmbeddingError,
    EmbeddingMismatchError,
    HindsightError,
    MissingExtraError,
    NotFoundError,
    PermissionDeniedError,
    StoreError,
    StoreTimeoutError,
    ValidationError,
)
from hindsight.models import (
    Explanation,
    ForgetReceipt,
    Kind,
    Memory,
    Provenance,
    RecallResult,
    RetainResult,
    Source,
    Status,
    Turn,
)

if TYPE_CHECKING:
    from hindsight.client import AsyncClient, Client

__version__ = "0.1.0"

__all__ = [
    "UNSET",
    "AccessError",
    "AsyncClient",
    "AuthenticationError",
    "Client",
    "ConflictError",
    "EmbeddingError",
    "EmbeddingMismatchError",
    "Explanation",
    "ForgetReceipt",
    "Hindsight",
    "HindsightError",
    "Kind",
    "Memory",
    "MissingExtraError",
    "NotFoundError",
    "PermissionDeniedError",
    "Provenance",
    "RecallResult",
    "RetainResult",
    "Settings",
    "Source",
    "Status",
    "StoreError",
    "StoreTimeoutError",
    "Turn",
    "ValidationError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    # The clients load on first use, so ``import hindsight`` works without httpx.
    if name in ("Client", "AsyncClient"):
        from hindsight import client

        return getattr(client, name)
    raise AttributeError(f"module 'hindsight' has no attribute {name!r}")
