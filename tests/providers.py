"""Test providers through the real registries: a second embedding model ("tiny-hash")
and an LLM that answers from a script ("scripted")."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from hindsight.embed import Embeddings, Vectors, registry
from hindsight.llm import LLM, Completion, CompletionRequest, Usage
from hindsight.llm import registry as llms


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


# -- an LLM provider, registered as "scripted": answers from a list, counts tokens -------


class Scripted(LLM):
    """Answers each request with the next of ``answers`` (10 prompt, 5 completion tokens)."""

    name = "scripted"
    answers: ClassVar[deque[str]] = deque()
    requests: ClassVar[list[CompletionRequest]] = []

    def complete(self, request: CompletionRequest) -> Completion:
        Scripted.requests.append(request)
        return Completion(Scripted.answers.popleft(), "stop", Usage(10, 5), request.model)


llms.register("scripted", lambda settings, options: Scripted())
