"""The default embedder: all-MiniLM-L6-v2 as int8 ONNX, fully offline.

The model and its WordPiece vocabulary ship inside hindsight (``embed/data``, 23 MB,
built by ``scripts/build_model.py``; no PyTorch, no download), tokenized by
:mod:`hindsight.embed.wordpiece`. Mean pooling over the attention mask, as
sentence-transformers does for this model.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Any, ClassVar

import numpy as np

from hindsight.embed.base import Embeddings, Vectors
from hindsight.embed.wordpiece import WordPiece
from hindsight.errors import EmbeddingError

MAX_TOKENS = 256  # the model's max_seq_length


class MiniLM(Embeddings):
    """Each text runs alone, one inference call per text, on ``workers`` threads at once.

    The model quantizes its activations with one scale per call, so texts run together
    would move each other's vectors (and padding would too): alone, a text's vector
    depends on nothing but the text. One call of a short text cannot keep two cores
    busy, so documents run on parallel single-threaded calls (LoCoMo turns on two
    cores: 700 texts/s, against 550 one call at a time on two threads; batched calls
    were no faster).
    """

    model_id: ClassVar[str] = "all-MiniLM-L6-v2-q8"
    dimension: ClassVar[int] = 384
    batch_size = 1_024  # texts handed to embed_batch at once

    def __init__(self, *, workers: int | None = None) -> None:
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise EmbeddingError(f"the local embedding model is not installed: {exc}") from exc
        data = resources.files("hindsight.embed") / "data"
        with resources.as_file(data / "minilm-vocab.txt") as path:
            self._tokenizer = WordPiece.from_file(path, max_tokens=MAX_TOKENS)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        with resources.as_file(data / "minilm-l6-q8.onnx") as path:
            self._session: Any = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        self._workers = workers or _cores()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0  # a forked child has none of its parent's pool threads
        # the pool is shared state: one caller at a time
        self._lock = threading.Lock()

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            rows = [self._tokenizer.encode(text) for text in texts]
            pool = self._pool
            if len(rows) > 1 and self._workers > 1 and self._pool_pid != os.getpid():
                pool = self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="minilm")
                self._pool_pid = os.getpid()
        if len(rows) == 1 or pool is None:
            return np.stack([self._run(row) for row in rows])
        return np.stack(list(pool.map(self._run, rows)))

    def _run(self, row: list[int]) -> Vectors:
        """The mean-pooled embedding of one text's token ids."""
        ids = np.array([row], dtype=np.int64)
        feeds = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        try:
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"embedding failed: {exc}") from exc
        pooled: Vectors = hidden[0].mean(axis=0, dtype=np.float32)
        return pooled


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no affinity call
        return os.cpu_count() or 1
