"""Embedding providers. ``registry.create(name, settings)`` builds one by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindsight.embed.base import Embeddings, Vectors, registry
from hindsight.errors import EmbeddingError, ValidationError
from hindsight.registry import Options, no_options

if TYPE_CHECKING:
    from hindsight.config import Settings

DEFAULT_PROVIDER = "minilm"


def _minilm(settings: Settings, options: Options) -> Embeddings:
    from hindsight.embed.minilm import MiniLM

    no_options("embedder", DEFAULT_PROVIDER, options)
    return MiniLM()


def _openai(settings: Settings, options: Options) -> Embeddings:
    from hindsight.embed.openai import OpenAIEmbeddings

    no_options("embedder", "openai", options)
    if not settings.embedding_base_url:
        raise EmbeddingError(
            "the openai embedding provider needs HINDSIGHT_EMBEDDING_BASE_URL, e.g. "
            "http://127.0.0.1:11434/v1"
        )
    if not settings.embedding_model:
        raise EmbeddingError("the openai embedding provider needs HINDSIGHT_EMBEDDING_MODEL")
    key = settings.embedding_api_key
    return OpenAIEmbeddings(
        base_url=settings.embedding_base_url,
        model=settings.embedding_model,
        api_key=None if key is None else key.get_secret_value(),
        dimensions=settings.embedding_dimensions,
        timeout=settings.embedding_timeout_seconds,
        max_retries=settings.embedding_max_retries,
        retry_base=settings.embedding_retry_base_seconds,
        batch_size=settings.embedding_batch_size,
        cooldown=settings.embedding_down_seconds,
    )


def _onnx(settings: Settings, options: Options) -> Embeddings:
    from hindsight.embed.onnx import from_folder

    no_options("embedder", "onnx", options)
    return from_folder(settings.embedding_model_dir)


def from_settings(settings: Settings) -> Embeddings:
    """The provider ``settings.embedding_provider`` names; an unknown name says the setting."""
    if settings.embedding_provider not in registry.names():
        raise ValidationError(
            f"HINDSIGHT_EMBEDDING_PROVIDER={settings.embedding_provider!r} is no embedding "
            f"provider; known: {', '.join(registry.names())}"
        )
    return registry.create(settings.embedding_provider, settings)


registry.register(DEFAULT_PROVIDER, _minilm)
registry.register("openai", _openai)
registry.register("onnx", _onnx)

__all__ = ["DEFAULT_PROVIDER", "Embeddings", "Vectors", "from_settings", "registry"]
