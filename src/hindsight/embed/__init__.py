"""Embedding providers. ``registry.create(name, settings)`` builds one by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindsight.embed.base import Embeddings, Vectors, registry
from hindsight.registry import Options, no_options

if TYPE_CHECKING:
    from hindsight.config import Settings

DEFAULT_PROVIDER = "minilm"


def _minilm(settings: Settings, options: Options) -> Embeddings:
    from hindsight.embed.minilm import MiniLM

    no_options("embedder", DEFAULT_PROVIDER, options)
    return MiniLM()


registry.register(DEFAULT_PROVIDER, _minilm)

__all__ = ["DEFAULT_PROVIDER", "Embeddings", "Vectors", "registry"]
