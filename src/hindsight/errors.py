"""The one exception tree of hindsight.

Every error the library raises on purpose derives from :class:`HindsightError`;
each boundary (CLI, REST, MCP) maps these classes once::

    HindsightError
    ├── ValidationError        bad input: nothing was changed
    ├── NotFoundError          no such memory, session or owner
    ├── ConflictError          the write clashes with the store's state
    │   ├── EmbeddingMismatchError   vectors of another model or dimension
    │   └── WriteRefusedError  a write checkpoint refused the write
    ├── AccessError            the caller may not do this
    │   ├── AuthenticationError  no valid API key was given
    │   └── PermissionDeniedError  the key does not cover this owner
    ├── StoreError             the store failed or is unreachable
    │   ├── StoreTimeoutError  the store did not answer in time
    │   └── VectorsUnavailableError  the vector engine (Qdrant) cannot be used now;
    │                          the rows hold every write, caught up when it can
    ├── EmbeddingError         the embedding provider failed
    │   └── EmbeddingUnavailableError  its endpoint is down, timing out or failing (5xx)
    │                          after every retry: writes queue their vectors
    ├── ExtractionError        the extractor failed: nothing was written
    ├── LLMError               the LLM provider failed (hindsight.llm); callers keep the
    │   │                      offline path
    │   ├── LLMUnavailableError  no LLM is configured (provider "none")
    │   ├── LLMBudgetError     the owner's daily token budget is spent: defer, do not drop
    │   ├── LLMRequestError    the provider refused the request (a 4xx other than 429)
    │   ├── LLMTransportError  unreachable, 429 or 5xx after every retry
    │   │   └── LLMTimeoutError  no answer within the timeout
    │   └── LLMOutputError     the answer was unusable and was dropped (not JSON, the
    │       │                  schema echoed, not its object, every item invalid)
    │       └── LLMTruncatedError  the answer was cut off at max_tokens
    ├── RerankError            the reranker failed or answered nonsense: recall keeps
    │                          the fused order and says so
    ├── PluginError            a plugin could not be loaded
    └── MissingExtraError      an optional dependency is not installed
"""

from __future__ import annotations


class HindsightError(Exception):
    """Base of every error hindsight raises on purpose."""


class ValidationError(HindsightError, ValueError):
    """The input was invalid; the store was not changed."""


class NotFoundError(HindsightError, LookupError):
    """The memory, session or owner asked for does not exist."""


class ConflictError(HindsightError):
    """The operation clashes with what the store holds."""


class EmbeddingMismatchError(ConflictError):
    """The store holds vectors of another embedding model or dimension."""


class WriteRefusedError(ConflictError):
    """A write checkpoint refused the write (the message says which and why); nothing
    of it was stored."""


class AccessError(HindsightError):
    """The caller may not do this."""


class AuthenticationError(AccessError):
    """No valid API key was presented."""


class PermissionDeniedError(AccessError, PermissionError):
    """The caller's key does not cover the owner it asked about."""


class StoreError(HindsightError):
    """The store failed or could not be reached."""


class StoreTimeoutError(StoreError, TimeoutError):
    """The store did not answer within the configured time."""


class VectorsUnavailableError(StoreError):
    """The vector engine could not be reached or used (Qdrant down, its shard held by
    another process). The rows and their vectors' outbox are intact: recall falls back
    to its keyword channel, and the vectors catch up once the engine is back."""


class EmbeddingError(HindsightError):
    """The embedding provider failed."""


class EmbeddingUnavailableError(EmbeddingError):
    """The embedding endpoint could not be reached, timed out or failed (429, 5xx) after
    every retry. A retain still succeeds and queues its vectors; recall drops the dense
    channel and says so."""


class ExtractionError(HindsightError):
    """The extractor failed on the turns it was given; nothing of the write was stored."""


class LLMError(HindsightError):
    """The LLM provider failed. ``retries`` counts the transport retries made,
    ``prompt_tokens`` and ``completion_tokens`` what the provider reported before it
    failed, and ``dropped_items`` the items of its answers found invalid (all for
    accounting)."""

    def __init__(self, message: str, *, retries: int = 0) -> None:
        super().__init__(message)
        self.retries = retries
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.dropped_items = 0


class LLMUnavailableError(LLMError):
    """No LLM is configured (``HINDSIGHT_LLM_PROVIDER`` is ``none``): take the offline path."""


class LLMBudgetError(LLMError):
    """The owner's daily token budget is spent: the work should wait for the next day."""


class LLMRequestError(LLMError):
    """The provider refused the request (a 4xx other than 429); sending it again would not
    help. ``status`` is the HTTP status."""

    def __init__(self, message: str, *, status: int, retries: int = 0) -> None:
        super().__init__(message, retries=retries)
        self.status = status


class LLMTransportError(LLMError):
    """The provider could not be reached, or answered 429 or 5xx to every try."""


class LLMTimeoutError(LLMTransportError, TimeoutError):
    """The provider did not answer within the configured timeout, on every try."""


class LLMOutputError(LLMError):
    """The answer could not be used (not JSON, the schema echoed back, not the schema's
    object, or every item of it invalid, even after one retry that quoted the error); it
    was dropped."""


class LLMTruncatedError(LLMOutputError):
    """The answer was cut off (finish reason ``length`` / ``max_tokens``); not parsed."""


class RerankError(HindsightError):
    """The reranker failed, timed out or answered something unusable. Recall never
    raises it: it keeps its own order and flags the result's explanation."""


class PluginError(HindsightError):
    """A provider installed as a plugin could not be loaded (the message names it)."""


class MissingExtraError(HindsightError, ImportError):
    """An optional dependency is missing; the message says what to install."""

    def __init__(self, extra: str, package: str) -> None:
        super().__init__(
            f"{package} is not installed: install hindsight's {extra!r} extra "
            f"(from its checkout: pip install '.[{extra}]')"
        )
        self.extra = extra
        self.package = package
