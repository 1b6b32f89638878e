"""LLM providers. ``registry.create(name, settings)`` builds one by name.

Built in: ``none`` (the default: every call raises
:class:`~hindsight.errors.LLMUnavailableError`, and callers keep their offline path),
``openai`` and ``anthropic`` (:mod:`hindsight.llm.providers`). A plugin registers more
under ``llm.<name>`` (see :mod:`hindsight.registry`). The API key is
``HINDSIGHT_LLM_API_KEY``, else the vendor's usual variable (``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``), read here, when the provider is made: never at import, never
stored or logged. Options (``HINDSIGHT_PROVIDER_OPTIONS='{"llm.openai": {...}}'``) may
give ``base_url`` and ``model`` over the settings'.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from hindsight.llm.base import (
    LLM,
    Completion,
    CompletionRequest,
    Format,
    Message,
    Usage,
    registry,
)
from hindsight.llm.lenient import Leniency
from hindsight.llm.meter import OPERATIONS, Meter
from hindsight.llm.structured import Structured
from hindsight.registry import Options, no_options

if TYPE_CHECKING:
    from hindsight.config import Settings
    from hindsight.llm.http import Transport

DEFAULT_PROVIDER: Final = "none"
_OPTIONS: Final = frozenset({"base_url", "model"})


def _none(settings: Settings, options: Options) -> LLM:
    from hindsight.llm.providers import NoLLM

    no_options("LLM provider", DEFAULT_PROVIDER, options)
    return NoLLM()


def _transport(settings: Settings, options: Options, default_url: str, name: str) -> Transport:
    from hindsight.errors import ValidationError
    from hindsight.llm.http import Transport

    if unknown := sorted(set(options) - _OPTIONS):
        raise ValidationError(f"LLM provider {name!r} takes base_url and model, not {unknown}")
    return Transport(
        base_url=str(options.get("base_url") or settings.llm_base_url or default_url),
        timeout=settings.llm_timeout_seconds,
        max_retries=settings.llm_max_retries,
        retry_base=settings.llm_retry_base_seconds,
        retry_max_wait=settings.llm_retry_max_wait_seconds,
        concurrency=settings.llm_concurrency,
    )


def api_key(settings: Settings, vendor_variable: str) -> str | None:
    """The key: ``HINDSIGHT_LLM_API_KEY``, else ``vendor_variable``; None for servers
    that take none (a local vLLM or Ollama)."""
    if settings.llm_api_key is not None:
        return settings.llm_api_key.get_secret_value()
    return os.environ.get(vendor_variable) or None


def _openai(settings: Settings, options: Options) -> LLM:
    from hindsight.llm.providers import OPENAI_URL, OpenAIChat

    return OpenAIChat(
        _transport(settings, options, OPENAI_URL, "openai"),
        api_key=api_key(settings, "OPENAI_API_KEY"),
        model=str(options.get("model") or settings.llm_model or "") or None,
    )


def _anthropic(settings: Settings, options: Options) -> LLM:
    from hindsight.llm.providers import ANTHROPIC_URL, AnthropicMessages

    return AnthropicMessages(
        _transport(settings, options, ANTHROPIC_URL, "anthropic"),
        api_key=api_key(settings, "ANTHROPIC_API_KEY"),
        model=str(options.get("model") or settings.llm_model or "") or None,
    )


registry.register(DEFAULT_PROVIDER, _none)
registry.register("openai", _openai)
registry.register("anthropic", _anthropic)

__all__ = [
    "DEFAULT_PROVIDER",
    "LLM",
    "OPERATIONS",
    "Completion",
    "CompletionRequest",
    "Format",
    "Leniency",
    "Message",
    "Meter",
    "Structured",
    "Usage",
    "api_key",
    "registry",
]
