"""The LLM seam: one required method, :meth:`LLM.complete`, and conveniences on top.

A provider turns a :class:`CompletionRequest` (messages, model, limits and, for
structured output, a JSON schema) into a :class:`Completion` (the text, why it stopped,
the tokens it used). Everything else (plain text, structured output with validation
and fallbacks: :mod:`hindsight.llm.structured`) is built here, once, for every
provider. Providers register by name in :data:`registry`, built-ins as a plugin would.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hindsight.errors import LLMTruncatedError
from hindsight.llm.messages import Completion, CompletionRequest, Format, Message, Role, Usage
from hindsight.registry import Registry

if TYPE_CHECKING:
    from hindsight.llm.lenient import Leniency
    from hindsight.llm.structured import Structured

__all__ = [
    "LLM",
    "Completion",
    "CompletionRequest",
    "Format",
    "Message",
    "Role",
    "Usage",
    "registry",
]


class LLM(abc.ABC):
    """A chat model behind one method, :meth:`complete`; the rest is built on it.

    ``json_schema`` is whether the provider takes a JSON schema; structured output turns
    it off (for this provider) when the server rejects one, and asks in JSON mode after.
    """

    name: str = "llm"
    model: str | None = None
    json_schema: bool = True

    @abc.abstractmethod
    def complete(self, request: CompletionRequest) -> Completion:
        """Send ``request`` and return the answer, or raise an
        :class:`~hindsight.errors.LLMError`. A cut-off answer is returned (``truncated``);
        the conveniences refuse it."""

    def text(
        self,
        prompt: str,
        *,
        system: str | None = None,
        model: str | None = None,
        max_tokens: int = 1_024,
        temperature: float = 0.0,
    ) -> Completion:
        """Ask one question; a cut-off answer raises :class:`LLMTruncatedError`."""
        messages = (Message("system", system),) if system else ()
        request = CompletionRequest(
            (*messages, Message("user", prompt)),
            model=model,
            max_tokens=max_tokens,
            temperature=temperature,
        )
        answer = self.complete(request)
        if answer.truncated:
            exc = LLMTruncatedError(
                f"the answer was cut off at {max_tokens} tokens", retries=answer.retries
            )
            exc.prompt_tokens = answer.usage.prompt_tokens
            exc.completion_tokens = answer.usage.completion_tokens
            raise exc
        return answer

    def structured(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        *,
        name: str = "answer",
        model: str | None = None,
        max_tokens: int = 1_024,
        temperature: float = 0.0,
        leniency: Leniency | None = None,
    ) -> Structured:
        """A JSON object valid against ``schema`` (see :func:`hindsight.llm.structured.ask`),
        or an :class:`~hindsight.errors.LLMError`; nothing invalid is returned."""
        from hindsight.llm.lenient import STRICT
        from hindsight.llm.structured import ask

        return ask(
            self,
            messages,
            schema,
            name=name,
            model=model,
            max_tokens=max_tokens,
            temperature=temperature,
            leniency=leniency or STRICT,
        )

    def close(self) -> None:  # noqa: B027 - a hook: providers with connections close them
        """Release connections; the provider is not used after."""


registry: Registry[LLM] = Registry("llm", "LLM provider")
