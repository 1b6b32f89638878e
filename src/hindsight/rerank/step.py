"""The rerank step of recall: the reranker reorders the best candidates, within a deadline.

After the engine has scored and ordered a recall's candidates (fusion, boosts, the
guard's screen) and before the results are packed into ``k`` and the token budget, the
first ``max(rerank_candidates, k)`` are sent to the reranker. Each one's new score blends
the two (:func:`blend`), ``rerank_weight`` of it the reranker's. The default, 0.7, leans
on the reranker, which is why one is configured (a cross-encoder reads the query and a
memory together, which neither channel does), while the engine's share keeps what the
reranker cannot see: confidence, source, recency, a time the query names, a value since
superseded. 1.0 is the reranker's order alone. No benchmark chose it: without a real
cross-encoder model offline, quality could not be measured (see BENCHMARKS.md).

The reranker runs on a thread of its own and is waited for ``rerank_timeout`` seconds at
most. On a timeout or any error the recall keeps the engine's order; every result's
explanation says so (``rerank: {"provider", "applied": false, "error"}``), and the
answer is not kept in the recall cache.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, Final

from hindsight.models import RecallResult

if TYPE_CHECKING:
    from hindsight.config import Settings
    from hindsight.rerank.base import Ranking, Reranker

_log = logging.getLogger("hindsight.rerank")
_WORKERS: Final = 4  # reranks in flight; one stuck past its deadline holds one


def blend(
    scores: Sequence[float], ranked: Sequence[float], *, weight: float, floor: float = 0.0
) -> list[float]:
    """New scores for candidates of engine ``scores`` (best first) that the reranker
    scored ``ranked``: ``weight`` of each is the reranker's score scaled to 0..1 over
    them (min-max: its scale is its own), the rest the engine's scaled by the best. The
    result spans ``floor`` (the best score of the candidates not reranked, so those stay
    below) to the best engine score."""
    if not scores:
        return []
    top = max(scores)
    low, high = min(ranked), max(ranked)
    span = high - low
    out = []
    for mine, theirs in zip(scores, ranked, strict=True):
        own = mine / top if top > 0 else 1.0
        their = (theirs - low) / span if span > 0 else 1.0
        mixed = (1 - weight) * own + weight * their
        out.append(floor + mixed * (max(top, floor) - floor))
    return out


class RerankStep:
    """The configured reranker applied to recall results (nothing, with none)."""

    def __init__(self, settings: Settings, reranker: Reranker | None) -> None:
        self.settings = settings
        self.reranker = reranker
        self._pool: ThreadPoolExecutor | None = None

    def apply(
        self, results: list[RecallResult], query: str, *, k: int, owner: str
    ) -> list[RecallResult]:
        """``results`` (best first) with the first ``max(rerank_candidates, k)`` reranked."""
        reranker = self.reranker
        if reranker is None or not results:
            return results
        n = max(self.settings.rerank_candidates, k)
        window, rest = results[:n], results[n:]
        documents = [r.memory.content for r in window]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(_WORKERS, thread_name_prefix="hindsight-rerank")
        started = time.perf_counter()
        future = self._pool.submit(reranker.rank, query, documents, owner=owner)
        ranking: Ranking | None = None
        error = ""
        try:
            ranking = future.result(timeout=self.settings.rerank_timeout)
        except FutureTimeout:
            future.cancel()
            error = f"no answer within {self.settings.rerank_timeout:g} s"
        except Exception as exc:  # a plugin may raise anything: flagged, logged, never fatal
            error = f"{type(exc).__name__}: {exc}"
        info: dict[str, Any] = {
            "provider": reranker.name,
            "applied": ranking is not None,
            "ms": round((time.perf_counter() - started) * 1000, 3),
        }
        if ranking is None:
            _log.warning("rerank failed, the engine's order kept: %s", error)
            info["error"] = error[:300]
            for r in results:
                r.explanation.rerank = dict(info)
            return results
        if ranking.tokens:
            info["tokens"] = ranking.tokens
        return _reordered(window, rest, ranking.scores, info, self.settings.rerank_weight)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        if self.reranker is not None:
            self.reranker.close()


def _reordered(
    window: list[RecallResult],
    rest: list[RecallResult],
    ranked: Sequence[float],
    info: dict[str, Any],
    weight: float,
) -> list[RecallResult]:
    floor = max((r.score for r in rest), default=0.0)
    new = blend([r.score for r in window], ranked, weight=weight, floor=floor)
    order = sorted(range(len(window)), key=lambda i: -ranked[i])
    place = {i: rank for rank, i in enumerate(order, start=1)}
    for i, (r, score) in enumerate(zip(window, new, strict=True)):
        if r.score > 0:
            r.explanation.boosts["rerank"] = score / r.score
        r.score = r.explanation.final = score
        r.explanation.rerank = {**info, "score": ranked[i], "rank": place[i]}
    for r in rest:
        r.explanation.rerank = dict(info)
    window = sorted(window, key=lambda r: (-r.score, r.memory.id))
    return window + rest
