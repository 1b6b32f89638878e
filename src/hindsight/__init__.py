"""hindsight: long-term memory for LLM agents, embedded and offline by default.

>>> from hindsight import Hindsight                      # doctest: +SKIP
>>> with Hindsight() as memory:                          # doctest: +SKIP
...     memory.retain("user:alice", "I moved to Berlin last month.")
...     memory.recall("user:alice", "where does Alice live?")
"""

from __future__ import annotations

from hindsight.config import Settings
from hindsight.engine import UNSET, Hindsight
from hindsight.errors import (
    ConflictError,
    EmbeddingError,
    EmbeddingMismatchError,
    HindsightError,
    MissingExtraError,
    NotFoundError,
    StoreError,
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

__version__ = "0.1.0"

__all__ = [
    "UNSET",
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
    "Provenance",
    "RecallResult",
    "RetainResult",
    "Settings",
    "Source",
    "Status",
    "StoreError",
    "Turn",
    "ValidationError",
    "__version__",
]
