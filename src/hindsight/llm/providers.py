"""The built-in providers: ``none``, ``openai`` (chat completions) and ``anthropic``.

``openai`` speaks ``POST {base_url}/chat/completions``, which OpenAI, vLLM, Ollama's
``/v1``, LM Studio and llama.cpp's server all take; a schema goes as
``response_format: {"type": "json_schema", ...}``, JSON mode as
``{"type": "json_object"}``. ``anthropic`` speaks ``POST {base_url}/v1/messages``
(``x-api-key``, ``anthropic-version``); a schema goes as one tool the model is forced
to call (``tool_choice``), whose input is the answer: the Messages API's own way to a
schema-shaped answer, sturdier than asking in prose. JSON mode there (after a server
rejected tools) is the schema in the system prompt.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from hindsight.errors import LLMTransportError, LLMUnavailableError, ValidationError
from hindsight.llm.base import LLM, Completion, CompletionRequest, Usage
from hindsight.llm.http import HTTPProvider, Transport

if TYPE_CHECKING:
    import httpx

ANTHROPIC_VERSION: Final = "2023-06-01"
OPENAI_URL: Final = "https://api.openai.com/v1"
ANTHROPIC_URL: Final = "https://api.anthropic.com"


class NoLLM(LLM):
    """The default: no LLM. Every call raises :class:`LLMUnavailableError`, so callers
    take their offline path."""

    name = "none"

    def complete(self, request: CompletionRequest) -> Completion:
        raise LLMUnavailableError(
            "no LLM is configured: set HINDSIGHT_LLM_PROVIDER (openai or anthropic) and "
            "HINDSIGHT_LLM_MODEL"
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class OpenAIChat(HTTPProvider):
    """OpenAI-compatible chat completions."""

    name = "openai"

    def __init__(
        self,
        transport: Transport,
        *,
        api_key: str | None,
        model: str | None,
        http: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        extra = {} if sleep is None else {"sleep": sleep}
        super().__init__(transport, headers=headers, model=model, http=http, **extra)

    def complete(self, request: CompletionRequest) -> Completion:
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.format == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": dict(request.schema or {})},
            }
        elif request.format == "json_object":
            body["response_format"] = {"type": "json_object"}
        if body["model"] is None:  # a llama.cpp server serves one model and needs no name
            del body["model"]
        data, retries = self.post("/chat/completions", body)
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            finish = str(choice.get("finish_reason") or "stop")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise LLMTransportError(
                f"{self.name}: the answer is not a chat completion", retries=retries
            ) from None
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return Completion(
            text=str(text),
            finish_reason="length" if finish == "length" else finish,
            usage=Usage(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))),
            model=data.get("model") if isinstance(data.get("model"), str) else body.get("model"),
            retries=retries,
        )


class AnthropicMessages(HTTPProvider):
    """Anthropic's Messages API."""

    name = "anthropic"

    def __init__(
        self,
        transport: Transport,
        *,
        api_key: str | None,
        model: str | None,
        http: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        extra = {} if sleep is None else {"sleep": sleep}
        super().__init__(transport, headers=headers, model=model, http=http, **extra)

    def complete(self, request: CompletionRequest) -> Completion:
        if not (request.model or self.model):
            raise ValidationError("the anthropic provider needs a model: set HINDSIGHT_LLM_MODEL")
        # the Messages API takes the system prompt apart from the turns
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "messages": [
                {"role": m.role, "content": m.content}
                for m in request.messages
                if m.role != "system"
            ],
        }
        if system:
            body["system"] = system
        if request.format == "json_schema":
            body["tools"] = [
                {
                    "name": request.schema_name,
                    "description": "Record the answer.",
                    "input_schema": dict(request.schema or {}),
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": request.schema_name}
        data, retries = self.post("/v1/messages", body)
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise LLMTransportError(f"{self.name}: the answer is not a message", retries=retries)
        tool = request.schema_name if request.format == "json_schema" else None
        text = _answer_text(blocks, tool)
        stop = str(data.get("stop_reason") or "end_turn")
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return Completion(
            text=text,
            finish_reason="length" if stop == "max_tokens" else stop,
            usage=Usage(_int(usage.get("input_tokens")), _int(usage.get("output_tokens"))),
            model=data.get("model") if isinstance(data.get("model"), str) else body["model"],
            retries=retries,
        )


def _answer_text(blocks: list[Any], tool: str | None) -> str:
    """The forced tool's input as JSON text, or the text blocks joined; thinking blocks
    (``type: thinking``) are never part of the answer."""
    if tool is not None:
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                return json.dumps(block.get("input"))
    return "".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )
