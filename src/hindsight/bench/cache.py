"""``hindsight bench cache``: what a recall answered from the recall cache costs, beside
the same recall searched, on one store in one run.

The store holds ``n`` generated memories of one owner (``bench scale``'s text, imported
in bulk). Then the same ``queries`` distinct questions are asked three times: with the
cache off (every recall searches), with it on for the first time (a miss: the search,
plus reading the owner's generation and keeping the answer), and again (a hit). Every
recall is audited and counted, cached or not, as the defaults say. The cache is where the
settings put it: Redis with ``HINDSIGHT_REDIS_URL``, else this process.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hindsight.bench.scale import OWNER, sentences
from hindsight.config import Settings
from hindsight.engine import Hindsight
from hindsight.errors import ValidationError

_BATCH = 2_000


@dataclass(slots=True)
class CacheResult:
    n: int
    queries: int
    backend: str  # where the cache lived: "redis" or "process"
    uncached_p50_ms: float  # the cache off
    uncached_p95_ms: float
    miss_p50_ms: float  # the cache on, first asked
    hit_p50_ms: float  # the cache on, asked again
    hit_p95_ms: float
    speedup_p50: float  # uncached p50 / hit p50
    hits_equal_misses: bool  # each hit returned what its miss did

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(self).items()}


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _timed(hs: Hindsight, asked: list[str]) -> tuple[list[float], list[list[str]]]:
    times, answers = [], []
    for query in asked:
        start = time.perf_counter()
        results = hs.recall(OWNER, query, k=10)
        times.append((time.perf_counter() - start) * 1000)
        answers.append([r.memory.id for r in results])
    return times, answers


def run(
    settings: Settings,
    n: int,
    *,
    queries: int = 200,
    progress: Callable[[int], None] | None = None,
) -> CacheResult:
    """Build a store of ``n`` memories, then time ``queries`` recalls uncached, missed, hit."""
    if settings.recall_cache_seconds == 0:
        raise ValidationError("the recall cache is off (HINDSIGHT_RECALL_CACHE_SECONDS=0)")
    base = datetime(2024, 1, 1, tzinfo=UTC)
    off = settings.model_copy(update={"recall_cache_seconds": 0})
    with Hindsight(off) as hs:
        pending: list[dict[str, Any]] = []
        for i, text in enumerate(sentences(n)):
            when = (base + timedelta(minutes=i)).isoformat()
            pending.append(
                {
                    "id": f"b_{i:09d}",
                    "owner": OWNER,
                    "kind": "fact",
                    "content": text,
                    "observed_at": when,
                }
            )
            if len(pending) == _BATCH or i == n - 1:
                hs.import_records(pending)
                if progress:
                    progress(len(pending))
                pending = []
        asked = [f"what about {text.split(' (note')[0]}?" for text in sentences(queries, seed=5)]
        asked = list(dict.fromkeys(asked))  # distinct: each first recall is a miss
        hs.recall(OWNER, "warm up the index")
        uncached, _ = _timed(hs, asked)
    with Hindsight(settings) as hs:
        hs.recall(OWNER, "warm up the index, cached")
        missed, first = _timed(hs, asked)
        hit, again = _timed(hs, asked)
    return CacheResult(
        n=n,
        queries=len(asked),
        backend="process" if settings.redis_url is None else "redis",
        uncached_p50_ms=statistics.median(uncached),
        uncached_p95_ms=_p(uncached, 0.95),
        miss_p50_ms=statistics.median(missed),
        hit_p50_ms=statistics.median(hit),
        hit_p95_ms=_p(hit, 0.95),
        speedup_p50=statistics.median(uncached) / statistics.median(hit),
        hits_equal_misses=first == again,
    )
