"""A small embedding provider for tests that need a second model, registered as "tiny-hash"."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hindsight.embed import Embeddings, Vectors, registry


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


registry.register("tiny-hash", lambda settings, options: TinyHash())
