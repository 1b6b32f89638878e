"""The local embedding model and the store's refusal to mix models."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from hindsight import EmbeddingMismatchError, Hindsight, Settings, ValidationError
from hindsight.embed import Embeddings, Vectors, registry


def test_minilm_embeds_meaning_offline(embedder: Embeddings) -> None:
    vectors = embedder.encode_documents(
        ["The cat sleeps on the sofa.", "A kitten is napping on the couch.", "Stock prices fell."]
    )
    assert vectors.shape == (3, embedder.dimension) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > 0.6 > vectors[0] @ vectors[2] + 0.3


def test_batches_agree_with_single_queries(embedder: Embeddings) -> None:
    texts = [f"sentence number {i} about {w}" for i, w in enumerate(["tea", "rain", "maps"] * 30)]
    together = embedder.encode_documents(texts)
    alone = np.stack([embedder.encode_query(t) for t in texts[:5]])
    assert np.allclose(together[:5], alone, atol=1e-4)  # padding does not leak into the mean


def test_long_text_is_truncated_not_refused(embedder: Embeddings) -> None:
    (vector,) = embedder.encode_documents(["word " * 5_000])
    assert np.isfinite(vector).all()


class TinyHash(Embeddings):
    """A deterministic 8-d provider registered through the real registry."""

    model_id = "tiny-hash"
    dimension = 8

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, sum(map(ord, word)) % self.dimension] += 1.0
        return out


def test_a_store_refuses_another_model(settings: Settings, embedder: Embeddings) -> None:
    with Hindsight(settings, embedder=embedder) as hs:
        hs.retain("user:alice", "I love jazz.")
    registry.register("tiny-hash", TinyHash)
    other = settings.model_copy(update={"embedding_provider": "tiny-hash"})
    with pytest.raises(EmbeddingMismatchError, match="export, then import"):
        Hindsight(other)


def test_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(ValidationError, match="minilm"):
        registry.create("no-such-model")
