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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from hindsight.errors import LLMTruncatedError, ValidationError
from hindsight.registry import Registry

if TYPE_CHECKING:
    from hindsight.llm.lenient import Leniency
    from hindsight.llm.structured import Structured

Role = Literal["system", "user", "assistant"]
#: How a request asks for JSON: by schema (the server constrains the answer), as JSON
#: mode with the schema in the prompt (servers that reject schemas), or not at all.
Format = Literal["json_schema", "json_object", "text"]


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation."""

    role: Role
    content: str

    def __post_init__(self) -> None:
        if self.role not in ("system", "user", "assistant"):
            raise ValidationError(f"unknown role {self.role!r}: system, user or assistant")


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one call (or several, added up) used, as the provider reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """What to ask. ``model`` None means the provider's default; ``schema`` (a JSON
    schema of an object) with ``format`` ``json_schema`` or ``json_object`` asks for JSON."""

    messages: tuple[Message, ...]
    model: str | None = None
    max_tokens: int = 1_024
    temperature: float = 0.0
    schema: Mapping[str, Any] | None = None
    schema_name: str = "answer"
    format: Format = "text"

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValidationError("a completion needs at least one message")
        if self.max_tokens <= 0:
            raise ValidationError(f"max_tokens must be positive, not {self.max_tokens}")
        if self.format == "json_schema" and self.schema is None:
            raise ValidationError("format json_schema needs a schema")


@dataclass(frozen=True, slots=True)
class Completion:
    """The provider's answer. ``finish_reason`` is ``length`` when the answer was cut off
    at ``max_tokens`` (whatever the vendor calls it); ``retries`` counts the transport
    retries it took."""

    text: str
    finish_reason: str
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    retries: int = 0

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


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
