"""hindsight: long-term memory for LLM agents, embedded and offline by default.

>>> from hindsight import Hindsight                      # doctest: +SKIP
>>> with Hindsight() as memory:                          # doctest: +SKIP
...     memory.retain("user:alice", "I moved to Berlin last month.")
...     memory.recall("user:alice", "where does Alice live?")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hindsight.access import Principal
from hindsight.config import VERSION, Settings
from hindsight.engine import UNSET, Hindsight
from hindsight.errors import (
    AccessError,
    AuthenticationError,
    ConflictError,
    EmbeddingError,
    EmbeddingMismatchError,
    ExtractionError,
    HindsightError,
    MissingExtraError,
    NotFoundError,
    PermissionDeniedError,
    PluginError,
    StoreError,
    StoreTimeoutError,
    ValidationError,
    WriteRefusedError,
)
from hindsight.lifecycle.history import History, HistoryEvent
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
    Tag,
    Turn,
)
from hindsight.recall.request import RecallRequest

if TYPE_CHECKING:
    from hindsight.client import AsyncClient, Client

__version__ = VERSION

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
    "ExtractionError",
    "ForgetReceipt",
    "Hindsight",
    "HindsightError",
    "History",
    "HistoryEvent",
    "Kind",
    "Memory",
    "MissingExtraError",
    "NotFoundError",
    "PermissionDeniedError",
    "PluginError",
    "Principal",
    "Provenance",
    "RecallRequest",
    "RecallResult",
    "RetainResult",
    "Settings",
    "Source",
    "Status",
    "StoreError",
    "StoreTimeoutError",
    "Tag",
    "Turn",
    "ValidationError",
    "WriteRefusedError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    # The clients load on first use, so ``import hindsight`` works without httpx.
    if name in ("Client", "AsyncClient"):
        from hindsight import client

        return getattr(client, name)
    raise AttributeError(f"module 'hindsight' has no attribute {name!r}")
