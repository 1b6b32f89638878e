"""The embeddings seam: one required method, conveniences on top.

A provider implements :meth:`Embeddings.embed_batch`; the base class adds
query/document encoding, batching and normalisation. Providers register by name
in :data:`registry` (built-ins the same way a plugin would).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from hindsight.errors import EmbeddingError
from hindsight.registry import Registry

Vectors = npt.NDArray[np.float32]


class Embeddings(abc.ABC):
    """Turns text into unit-length float32 vectors."""

    #: Stored beside every vector; two stores agree only if this and
    #: :attr:`dimension` match.
    model_id: str
    #: 0 until known, for a provider that learns it from its model's first answer.
    dimension: int
    batch_size: int = 64
    #: Whether the model lives behind a network (it may be down for a while): the
    #: engine then runs the job queue, where writes made during an outage queue their
    #: vectors.
    remote: bool = False

    @abc.abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed a batch of texts; returns an array of shape (len(texts), dimension)."""

    def encode_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts to be stored; normalised to unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = [
            self.embed_batch(texts[i : i + self.batch_size])
            for i in range(0, len(texts), self.batch_size)
        ]
        vectors: Vectors = np.concatenate(parts, axis=0)
        if vectors.shape != (len(texts), self.dimension):
            raise EmbeddingError(
                f"{self.model_id} returned vectors of shape {vectors.shape}, not "
                f"({len(texts)}, {self.dimension})"
            )
        return _normalise(vectors)

    def encode_query(self, text: str) -> Vectors:
        """Embed one search query; returns a 1-d unit vector.

        Symmetric models embed queries like documents; asymmetric ones override.
        """
        vector: Vectors = self.encode_documents([text])[0]
        return vector

    def settle(self, bound: tuple[str, int] | None) -> None:  # noqa: B027 - most know it
        """Called as a store opens, with the model and dimension it is bound to (None: a
        new store). A provider that learns its dimension from its model's first answer
        adopts the bound one when the model is the same (no call), else asks its model."""

    def close(self) -> None:  # noqa: B027 - nothing to release by default
        """Release connections; the provider is not used after."""


def _normalise(vectors: Vectors) -> Vectors:
    if vectors.ndim != 2:
        raise EmbeddingError(f"provider returned an array of shape {vectors.shape}")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: Vectors = (vectors / norms).astype(np.float32, copy=False)
    return unit


registry: Registry[Embeddings] = Registry("embedder", "embedding provider")
