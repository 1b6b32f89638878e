"""A local model of the user's choice: a sentence-transformers export in ONNX form.

``HINDSIGHT_EMBEDDING_PROVIDER=onnx`` with ``HINDSIGHT_EMBEDDING_MODEL_DIR`` naming a
folder laid out as sentence-transformers exports one::

    model.onnx (or onnx/model.onnx)   the transformer; outputs per-token states
    tokenizer.json                    a WordPiece tokenizer (BERT's family), lower-casing
    sentence_bert_config.json         max_seq_length
    modules.json                      the pipeline: Transformer, Pooling, [Normalize]
    1_Pooling/config.json             mean, cls or max pooling
    2_Normalize/                      optional: vectors are made unit length anyway

It runs on onnxruntime as the bundled model does (:class:`OnnxModel`, which
:class:`~hindsight.embed.minilm.MiniLM` is too): each text alone, so padding never
moves a vector. A folder that lacks any of it is an error naming the setting, never a
fall-back to the bundled model. The stored model id is ``onnx:<folder name>``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np

from hindsight.embed.base import Embeddings, Vectors
from hindsight.embed.wordpiece import WordPiece
from hindsight.errors import EmbeddingError

Pooling = Literal["mean", "cls", "max"]
SETTING: Final = "HINDSIGHT_EMBEDDING_MODEL_DIR"
_POOLING_KEYS: Final[dict[str, Pooling]] = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
}


class OnnxModel(Embeddings):
    """A transformer on onnxruntime with a WordPiece tokenizer and a pooling step.

    Each text runs alone, one inference call per text, on ``workers`` threads at once:
    a quantized model scales its activations per call, so texts run together would
    move each other's vectors (and padding would too); alone, a text's vector depends
    on nothing but the text.
    """

    batch_size = 1_024  # texts handed to embed_batch at once

    def __init__(
        self,
        model: Path,
        tokenizer: WordPiece,
        *,
        model_id: str,
        pooling: Pooling = "mean",
        dimension: int | None = None,
        workers: int | None = None,
    ) -> None:
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise EmbeddingError(f"onnxruntime is not installed: {exc}") from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self._session: Any = ort.InferenceSession(
                str(model), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"cannot load the ONNX model {model}: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        if "input_ids" not in self._inputs:
            raise EmbeddingError(f"{model} takes no input_ids: not a transformer export")
        self._output = self._session.get_outputs()[0].name
        self._tokenizer = tokenizer
        self._pooling = pooling
        self.model_id = model_id
        self._workers = workers or _cores()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0  # a forked child has none of its parent's pool threads
        # the pool is shared state: one caller at a time
        self._lock = threading.Lock()
        self.dimension = dimension or int(self._run(tokenizer.encode("")).shape[0])

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            rows = [self._tokenizer.encode(text) for text in texts]
            pool = self._pool
            if len(rows) > 1 and self._workers > 1 and self._pool_pid != os.getpid():
                pool = self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="onnx")
                self._pool_pid = os.getpid()
        if len(rows) == 1 or pool is None:
            return np.stack([self._run(row) for row in rows])
        return np.stack(list(pool.map(self._run, rows)))

    def _run(self, row: list[int]) -> Vectors:
        """The pooled embedding of one text's token ids."""
        ids = np.array([row], dtype=np.int64)
        feeds = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feeds["attention_mask"] = np.ones_like(ids)
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            (hidden,) = self._session.run([self._output], feeds)
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"embedding failed: {exc}") from exc
        if hidden.ndim == 2:  # the export pools by itself: one vector per text
            pooled: Vectors = hidden[0].astype(np.float32)
        elif self._pooling == "cls":
            pooled = hidden[0, 0].astype(np.float32)
        elif self._pooling == "max":
            pooled = hidden[0].max(axis=0).astype(np.float32)
        else:
            pooled = hidden[0].mean(axis=0, dtype=np.float32)
        return pooled


def from_folder(folder: Path | None) -> OnnxModel:
    """The model a sentence-transformers ONNX export in ``folder`` holds (see the module)."""
    if folder is None:
        raise EmbeddingError(f"the onnx embedding provider needs {SETTING}: a model's folder")
    if not folder.is_dir():
        raise EmbeddingError(f"{SETTING}={folder} is not a folder")
    places = (folder / "model.onnx", folder / "onnx" / "model.onnx")
    model = next((p for p in places if p.is_file()), None)
    if model is None:
        raise EmbeddingError(
            f"{SETTING}={folder} holds no model.onnx (at the top or under onnx/): "
            "export the model to ONNX first"
        )
    config = _json(folder / "sentence_bert_config.json", required=False)
    tokenizer = _tokenizer(folder / "tokenizer.json", config.get("max_seq_length"))
    return OnnxModel(
        model, tokenizer, model_id=f"onnx:{folder.resolve().name}", pooling=_pooling(folder)
    )


def _json(path: Path, *, required: bool) -> dict[str, Any]:
    if not path.is_file():
        if required:
            raise EmbeddingError(f"{SETTING}: {path} is missing")
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"{SETTING}: cannot read {path}: {exc}") from None
    if not isinstance(data, dict | list):
        raise EmbeddingError(f"{SETTING}: {path} is not a JSON object")
    return data if isinstance(data, dict) else {"modules": data}


def _tokenizer(path: Path, max_seq_length: object) -> WordPiece:
    """The WordPiece vocabulary ``tokenizer.json`` carries; any other kind is refused,
    as is a cased one (the shipped tokenizer lower-cases, as BERT's uncased models do)."""
    data = _json(path, required=True)
    model = data.get("model") or {}
    kind = model.get("type")
    if kind != "WordPiece" or not isinstance(model.get("vocab"), dict):
        raise EmbeddingError(
            f"{SETTING}: {path} is a {kind or 'unknown'} tokenizer; only WordPiece (BERT's "
            "family: MiniLM, BGE, E5, GTE, nomic) is supported"
        )
    normalizer = data.get("normalizer") or {}
    if normalizer.get("type") == "BertNormalizer" and normalizer.get("lowercase") is False:
        raise EmbeddingError(f"{SETTING}: {path} is a cased WordPiece tokenizer: unsupported")
    vocab = {str(k): int(v) for k, v in model["vocab"].items()}
    if missing := [t for t in ("[UNK]", "[CLS]", "[SEP]") if t not in vocab]:
        raise EmbeddingError(f"{SETTING}: {path} lacks the tokens {', '.join(missing)}")
    truncation = data.get("truncation") or {}
    limits = [n for n in (max_seq_length, truncation.get("max_length")) if isinstance(n, int)]
    return WordPiece(vocab, max_tokens=min(limits) if limits else 512)


def _pooling(folder: Path) -> Pooling:
    """The pooling ``modules.json`` names (mean when the export names none)."""
    modules = _json(folder / "modules.json", required=False).get("modules", [])
    paths = [
        str(m.get("path", ""))
        for m in modules
        if isinstance(m, dict) and str(m.get("type", "")).endswith("Pooling")
    ]
    config = _json(folder / (paths[0] if paths else "1_Pooling") / "config.json", required=False)
    chosen = [mode for key, mode in _POOLING_KEYS.items() if config.get(key)]
    if len(chosen) > 1:
        raise EmbeddingError(f"{SETTING}: the pooling config asks for {' and '.join(chosen)}")
    asked = [k for k, v in config.items() if k.startswith("pooling_mode") and v]
    other = [k for k in asked if k not in _POOLING_KEYS]
    if other:
        raise EmbeddingError(f"{SETTING}: unsupported pooling {', '.join(other)}")
    return chosen[0] if chosen else "mean"


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no affinity call
        return os.cpu_count() or 1
