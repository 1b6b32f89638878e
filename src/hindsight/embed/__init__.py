"""Embedding providers. ``registry.create(name)`` builds one by name."""

from __future__ import annotations

from hindsight.embed.base import Embeddings, Vectors, registry

DEFAULT_PROVIDER = "minilm"


def _minilm() -> Embeddings:
    from hindsight.embed.minilm import MiniLM

    return MiniLM()


registry.register(DEFAULT_PROVIDER, _minilm)

__all__ = ["DEFAULT_PROVIDER", "Embeddings", "Vectors", "registry"]
