"""A cross-encoder of the user's choice, exported to ONNX, run in process.

``HINDSIGHT_RERANK_MODEL_DIR`` holds ``model.onnx`` (at the top or under ``onnx/``, as
sentence-transformers and Optimum export it) and ``tokenizer.json`` with an uncased
WordPiece model (BERT, MiniLM and ELECTRA cross-encoders such as
``cross-encoder/ms-marco-MiniLM-L-6-v2``), tokenized by hindsight's own WordPiece
(:mod:`hindsight.embed.wordpiece`). Each candidate is paired with the query as BERT
pairs are, ``[CLS] query [SEP] candidate [SEP]`` with token type 0 then 1, at most
the tokenizer's ``max_length`` (512 when it names none; the query keeps at most half),
and all of them run as one padded batch. The score is the model's logit (the last
column, for a model with two classes).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from hindsight.embed.wordpiece import WordPiece
from hindsight.errors import RerankError, ValidationError
from hindsight.rerank.base import Reranker

DEFAULT_MAX_TOKENS: Final = 512
SETTING: Final = "HINDSIGHT_RERANK_MODEL_DIR"


def model_file(directory: Path) -> Path:
    """The folder's ``model.onnx``, at the top or under ``onnx/``; else a clear error."""
    for path in (directory / "model.onnx", directory / "onnx" / "model.onnx"):
        if path.is_file():
            return path
    raise ValidationError(
        f"{SETTING}={directory}: no model.onnx in it or in its onnx/ folder "
        "(export a cross-encoder to ONNX, e.g. with optimum-cli export onnx)"
    )


def tokenizer(directory: Path) -> tuple[WordPiece, int]:
    """The folder's WordPiece tokenizer and the most tokens a pair may have."""
    path = directory / "tokenizer.json"
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        raise ValidationError(f"{SETTING}={directory}: no readable tokenizer.json") from None
    except ValueError:
        raise ValidationError(f"{SETTING}={directory}: tokenizer.json is not JSON") from None
    model = spec.get("model") if isinstance(spec, dict) else None
    if not isinstance(model, dict) or model.get("type") != "WordPiece":
        raise ValidationError(f"{SETTING}={directory}: tokenizer.json is not a WordPiece model")
    normalizer = spec.get("normalizer") or {}
    if isinstance(normalizer, dict) and normalizer.get("lowercase") is False:
        raise ValidationError(
            f"{SETTING}={directory}: a cased tokenizer; only uncased WordPiece is supported"
        )
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not {"[UNK]", "[CLS]", "[SEP]"} <= set(vocab):
        raise ValidationError(
            f"{SETTING}={directory}: tokenizer.json's vocabulary lacks [UNK], [CLS] or [SEP]"
        )
    truncation = spec.get("truncation") or {}
    limit = truncation.get("max_length") if isinstance(truncation, dict) else None
    max_tokens = limit if isinstance(limit, int) and limit > 3 else DEFAULT_MAX_TOKENS
    return WordPiece(vocab, max_tokens=max_tokens), max_tokens


class ONNXReranker(Reranker):
    name = "onnx"

    def __init__(self, directory: Path) -> None:
        import onnxruntime as ort

        path = model_file(directory)
        self._tokenizer, self.max_tokens = tokenizer(directory)
        self._pad = int(self._tokenizer.vocab.get("[PAD]", 0))
        try:
            self._session: Any = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ValidationError(
                f"{SETTING}={directory}: {path.name} does not load: {exc}"
            ) from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        if "input_ids" not in self._inputs:
            raise ValidationError(f"{SETTING}={directory}: the model takes no input_ids")
        self.directory = directory

    def __repr__(self) -> str:
        return f"ONNXReranker({str(self.directory)!r})"

    def pair(self, query: str, document: str) -> tuple[list[int], list[int]]:
        """The ids and token types of ``[CLS] query [SEP] document [SEP]``."""
        room = self.max_tokens - 3
        asked = self._tokenizer.encode(query)[1:-1][: room // 2]
        read = self._tokenizer.encode(document)[1:-1][: room - len(asked)]
        cls, sep = self._tokenizer.cls, self._tokenizer.sep
        ids = [cls, *asked, sep, *read, sep]
        return ids, [0] * (len(asked) + 2) + [1] * (len(read) + 1)

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        pairs = [self.pair(query, d) for d in documents]
        width = max(len(ids) for ids, _ in pairs)
        ids = np.full((len(pairs), width), self._pad, dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        for row, (tokens, kinds) in enumerate(pairs):
            ids[row, : len(tokens)] = tokens
            types[row, : len(kinds)] = kinds
            mask[row, : len(tokens)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        try:
            (logits,) = self._session.run(
                None, {name: v for name, v in feeds.items() if name in self._inputs}
            )[:1]
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise RerankError(f"the cross-encoder failed: {exc}") from exc
        out = np.asarray(logits, dtype=np.float64).reshape(len(pairs), -1)
        return [float(v) for v in out[:, -1]]
