"""The engine's LLM: the configured provider, a model per operation, every call accounted.

:class:`Meter` is what hindsight's own LLM work (extraction, summaries, reflection,
query understanding, reranking) calls, always for an owner and an operation. Each call, whether it
succeeds, fails or has its answer dropped as invalid, becomes one
:class:`~hindsight.store.UsageEntry` in the store: the tokens the provider reported,
the retries, whether its answer was dropped, how many items of its answers were
dropped as invalid, and the cost where ``llm_prices`` names the model. With
``llm_daily_token_budget`` set, an owner past it gets :class:`LLMBudgetError` before
anything is sent: the work should be deferred to the next UTC day, not dropped
(:meth:`Meter.over_budget` asks first).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from hindsight.errors import (
    LLMBudgetError,
    LLMError,
    LLMOutputError,
    LLMUnavailableError,
    ValidationError,
)
from hindsight.llm.base import LLM, Completion, CompletionRequest, Message, Usage
from hindsight.store.records import UsageEntry

if TYPE_CHECKING:
    from hindsight.config import Settings
    from hindsight.llm.lenient import Leniency
    from hindsight.llm.structured import Structured
    from hindsight.store import Store

#: What hindsight asks an LLM to do; each may have a model of its own (``llm_models``).
OPERATIONS: Final = ("extract", "summarize", "reflect", "query", "assess", "rerank")


class Meter:
    """The provider the settings name (``make`` makes it on first use), accounted in
    ``store``."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        make: Callable[[], LLM],
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self._make = make
        self._llm: LLM | None = None
        self._clock = clock or (lambda: datetime.now(UTC))  # the engine's, when it has one
        self._lock = threading.Lock()

    @property
    def provider(self) -> LLM:
        """The provider; made (and its key read) on first use."""
        with self._lock:
            if self._llm is None:
                self._llm = self._make()
            return self._llm

    @property
    def configured(self) -> bool:
        """Whether an LLM is configured at all (the provider is not ``none``)."""
        return self.settings.llm_configured

    def model_for(self, operation: str) -> str | None:
        """The model ``operation`` uses: its own, else ``llm_model``, else the provider's."""
        _operation(operation)
        return self.settings.llm_models.get(operation) or self.settings.llm_model

    def over_budget(self, owner: str) -> bool:
        """Whether ``owner`` has spent today's token budget (UTC days); never without one."""
        budget = self.settings.llm_daily_token_budget
        if budget is None:
            return False
        now = self._clock().astimezone(UTC)
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return self.store.tokens_used(owner, midnight) >= budget

    def complete(
        self,
        owner: str,
        operation: str,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        """A plain answer for ``owner``'s ``operation``; a cut-off one is returned
        (``truncated``) and accounted as a failure."""
        model = self._ready(owner, operation)
        request = CompletionRequest(
            tuple(messages),
            model=model,
            max_tokens=max_tokens or self.settings.llm_max_tokens,
            temperature=temperature,
        )
        llm = self.provider
        try:
            answer = llm.complete(request)
        except LLMError as exc:
            self._account(owner, operation, model, exc=exc)
            raise
        self._account(
            owner,
            operation,
            model,  # as asked: a server's answer may name a dated variant, unpriced
            usage=answer.usage,
            retries=answer.retries,
            failed=answer.truncated,
        )
        return answer

    def structured(
        self,
        owner: str,
        operation: str,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        *,
        name: str = "answer",
        max_tokens: int | None = None,
        temperature: float = 0.0,
        leniency: Leniency | None = None,
    ) -> Structured:
        """A valid JSON object for ``owner``'s ``operation`` (see
        :func:`hindsight.llm.structured.ask`); a dropped answer is counted and raised,
        and so are the items dropped from a kept one."""
        model = self._ready(owner, operation)
        llm = self.provider
        try:
            result = llm.structured(
                messages,
                schema,
                name=name,
                model=model,
                max_tokens=max_tokens or self.settings.llm_max_tokens,
                temperature=temperature,
                leniency=leniency,
            )
        except LLMError as exc:
            self._account(owner, operation, model, exc=exc)
            raise
        self._account(
            owner,
            operation,
            model,
            usage=result.usage,
            retries=result.retries,
            dropped_items=result.dropped,
        )
        return result

    def close(self) -> None:
        with self._lock:
            if self._llm is not None:
                self._llm.close()
                self._llm = None

    def _ready(self, owner: str, operation: str) -> str | None:
        model = self.model_for(operation)
        if self.over_budget(owner):
            raise LLMBudgetError(
                f"owner {owner!r} has used its {self.settings.llm_daily_token_budget} tokens "
                "for today: the work waits for tomorrow (UTC)"
            )
        return model

    def _account(
        self,
        owner: str,
        operation: str,
        model: str | None,
        *,
        usage: Usage | None = None,
        retries: int = 0,
        failed: bool = False,
        dropped_items: int = 0,
        exc: LLMError | None = None,
    ) -> None:
        if exc is not None:
            if isinstance(exc, LLMUnavailableError):
                return  # no call was made: nothing to account
            usage = Usage(exc.prompt_tokens, exc.completion_tokens)
            retries, failed, dropped_items = exc.retries, True, exc.dropped_items
        usage = usage or Usage()
        model = model or self.provider.model
        self.store.record_usage(
            UsageEntry(
                at=self._clock(),
                owner=owner,
                operation=operation,
                provider=self.provider.name,
                model=model,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                failed=failed,
                retries=retries,
                dropped=isinstance(exc, LLMOutputError),
                dropped_items=dropped_items,
                cost=cost(self.settings.llm_prices, model, usage),
            )
        )


def cost(
    prices: Mapping[str, Mapping[str, float]], model: str | None, usage: Usage
) -> float | None:
    """USD for ``usage`` at ``prices`` (per million tokens), or None when unpriced."""
    price = prices.get(model or "")
    if price is None:
        return None
    return (
        usage.prompt_tokens * price["prompt"] + usage.completion_tokens * price["completion"]
    ) / 1_000_000


def _operation(operation: str) -> None:
    if operation not in OPERATIONS:
        raise ValidationError(f"unknown operation {operation!r}: one of {', '.join(OPERATIONS)}")
