"""What goes to a chat model and comes back: messages, a request, its answer, the tokens.

Plain data, shared by the LLM seam (:mod:`hindsight.llm.base`) and what is built on it
(:mod:`hindsight.llm.structured`), so neither needs the other to say what it sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from hindsight.errors import ValidationError

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


class Completer(Protocol):
    """What structured output needs of a provider: :meth:`complete`, and whether it takes
    a JSON schema (turned off when its server rejects one)."""

    json_schema: bool

    def complete(self, request: CompletionRequest) -> Completion: ...
