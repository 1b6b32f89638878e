"""qdrant-edge alone: ingest N random 384-d points (ten owners, batches of 1,000), search
exactly, build HNSW with optimize(), search again. Run from the repository's root:

    PYTHONPATH=src python bench/qdrant/edge_build.py 20000
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hindsight.store.vectors.qdrant_engines import EdgeEngine, Hnsw, Where


def main(n: int, dim: int = 384) -> None:
    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as d:
        engine = EdgeEngine(Path(d) / "c", dim, hnsw=Hnsw())
        started = time.perf_counter()
        for i in range(0, n, 1000):
            engine.upsert(
                [
                    (k + 1, vecs[k].tolist(), {"owner": f"user:{k % 10}", "observed_at": float(k)})
                    for k in range(i, min(n, i + 1000))
                ]
            )
        ingest = time.perf_counter() - started

        def p50(owners: list[str]) -> float:
            times = []
            for q in vecs[:200]:
                t = time.perf_counter()
                engine.search(q.tolist(), 100, Where(owners=owners), 200)
                times.append(time.perf_counter() - t)
            return statistics.median(times) * 1000

        everyone = [f"user:{i}" for i in range(10)]
        exact, exact_one = p50(everyone), p50(["user:1"])
        started = time.perf_counter()
        engine.optimize()
        build = time.perf_counter() - started
        hnsw, hnsw_one = p50(everyone), p50(["user:1"])
        print(
            f"n={n} ingest {n / ingest:.0f}/s; unindexed p50 all {exact:.1f} ms, one owner "
            f"(10%) {exact_one:.1f} ms; optimize {build:.1f} s; HNSW p50 all {hnsw:.1f} ms, "
            f"one owner {hnsw_one:.1f} ms; unindexed left {engine.unindexed()}"
        )
        engine.close()


if __name__ == "__main__":
    main(int(sys.argv[1]))
