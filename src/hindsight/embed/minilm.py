"""The default embedder: all-MiniLM-L6-v2 as int8 ONNX, fully offline.

The model and its WordPiece vocabulary ship inside hindsight (``embed/data``, 23 MB,
built by ``scripts/build_model.py``; no PyTorch, no download), tokenized by
:mod:`hindsight.embed.wordpiece`. Mean pooling over the attention mask, as
sentence-transformers does for this model.
"""

from __future__ import annotations

from importlib import resources

from hindsight.embed.onnx import OnnxModel
from hindsight.embed.wordpiece import WordPiece

MAX_TOKENS = 256  # the model's max_seq_length


class MiniLM(OnnxModel):
    """The bundled model, run as :class:`~hindsight.embed.onnx.OnnxModel` runs any.

    Each text runs alone: the model quantizes its activations with one scale per call.
    One call of a short text cannot keep two cores busy, so documents run on parallel
    single-threaded calls (LoCoMo turns on two cores: 700 texts/s, against 550 one call
    at a time on two threads; batched calls were no faster).
    """

    def __init__(self, *, workers: int | None = None) -> None:
        data = resources.files("hindsight.embed") / "data"
        with resources.as_file(data / "minilm-vocab.txt") as path:
            tokenizer = WordPiece.from_file(path, max_tokens=MAX_TOKENS)
        with resources.as_file(data / "minilm-l6-q8.onnx") as path:
            super().__init__(
                path,
                tokenizer,
                model_id="all-MiniLM-L6-v2-q8",
                pooling="mean",
                dimension=384,
                workers=workers,
            )
