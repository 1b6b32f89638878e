"""The recall pipeline: channels, fusion, reply lifts, boosts, rerank, packing, access counts.

:class:`Search` asks the store's channels (dense vectors, BM25), fuses their
ranks, reads the best candidates whole, lifts the replies to questions among them,
scores them with :mod:`hindsight.recall.rank` (pure scoring), lets the configured reranker
reorder the best (:mod:`hindsight.rerank.step`) and packs them. Recalls are
counted in memory and written in batches, off the hot path.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Final, TypeVar

from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.errors import EmbeddingUnavailableError, StoreError, VectorsUnavailableError
from hindsight.guard import Policy, screen
from hindsight.lifecycle.decay import Decay
from hindsight.models import ChannelHit, Kind, Memory, RecallResult, Source
from hindsight.recall.rank import (
    RUN_REACH,
    Rerank,
    current_first,
    fuse_channels,
    is_question,
    lift_replies,
    lift_runs,
    pack,
    rank_channels,
    says_something,
    score,
    successors_first,
)
from hindsight.recall.request import RecallPlan
from hindsight.rerank import Reranker, RerankStep
from hindsight.store import Filter, Store
from hindsight.text.names import may_name, resolve
from hindsight.text.terms import query_terms, text_terms
from hindsight.text.timewords import asked_period

if TYPE_CHECKING:
    from hindsight.entities.cache import Graphs

# Recall reads whole only this many of the best fused candidates (at least 5 k).
HYDRATE_DEPTH: Final = 50
_FLUSH_HITS: Final = 256  # recalls counted before they are written
_FLUSH_SECONDS: Final = 5.0
_log = logging.getLogger("hindsight.recall.search")
_T = TypeVar("_T")


def _started(fn: Callable[[], _T]) -> Future[_T]:
    """``fn()``, begun on a thread of its own (in the caller's context: its reads go
    where the caller's would, :mod:`hindsight.store.replicas`)."""
    future: Future[_T] = Future()
    context = contextvars.copy_context()

    def run() -> None:
        try:
            future.set_result(fn())
        except BaseException as exc:  # raised to the caller, as if it had called fn
            future.set_exception(exc)

    threading.Thread(target=context.run, args=(run,), name="hindsight-dense", daemon=True).start()
    return future


def _unless_down(
    search: Callable[[], list[tuple[str, float]]], unavailable: list[str]
) -> list[tuple[str, float]]:
    """A dense channel's hits; none while its source is down (the embedding endpoint or
    the vector engine), noted in ``unavailable``: recall goes on with its keyword channels."""
    try:
        return search()
    except (EmbeddingUnavailableError, VectorsUnavailableError) as exc:
        _log.warning("recall without the dense channel: %s", exc)
        if "dense" not in unavailable:
            unavailable.append("dense")
        return []


class Search:
    """Recall over one store."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        embedder: Embeddings,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        reranker: Reranker | None = None,
        graphs: Graphs | None = None,
    ) -> None:
        self.settings = settings
        self.graphs = graphs if settings.entity_channel else None
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.rerank = Rerank(
            half_life_days=settings.recency_half_life_days,
            decay=Decay(settings.decay_per_week, settings.decay_counts_recall),
        )
        self.guard = Policy.of(settings) if settings.guard else None
        self.reranking = RerankStep(settings, reranker)  # hindsight.rerank.step
        # recalls not yet written: id -> (times returned, when last returned)
        self._access: dict[str, tuple[int, datetime]] = {}
        self._access_lock = threading.Lock()
        self._access_flushed = time.monotonic()

    def recall(self, plan: RecallPlan) -> list[RecallResult]:
        """The best ``plan.k`` for ``plan.query``; each of ``plan.extra`` (sub-queries an
        LLM split it into: :mod:`hindsight.recall.expand`) is searched as two more
        channels, ``dense:i`` and ``bm25:i``, fused with the query's own."""
        flt, query, k = plan.filter, plan.query, plan.k
        n = max(self.settings.candidates, k * 2)
        if may_name(query):  # "Mohammed" asked about is the "Muhhamed" who speaks in the turns
            query = resolve(
                query, [name for owner in flt.owners for name in self.store.speakers(owner)]
            )
        # the dense channel (the model's run, the index's search: native code) runs beside
        # the keyword channel
        dense = _started(
            lambda: self.store.vector_search(flt, self.embedder.encode_query(query), n)
        )
        now = self.clock()
        period = asked_period(query, now, plan.zone)
        keyword = self.store.keyword_search(flt, query, n)

        def dense_of(text: str) -> list[tuple[str, float]]:
            return self.store.vector_search(flt, self.embedder.encode_query(text), n)

        unavailable: list[str] = []
        channels = {"dense": _unless_down(dense.result, unavailable), "bm25": keyword}
        for i, sub in enumerate(plan.extra, start=1):
            if not unavailable:
                channels[f"dense:{i}"] = _unless_down(partial(dense_of, sub), unavailable)
            channels[f"bm25:{i}"] = self.store.keyword_search(flt, sub, n)
        if self.graphs is not None:
            linked = [
                hit
                for owner in flt.owners
                for hit in self.graphs.of(owner, current=False).linked(query, n)
            ]
            passed = self.store.passing(flt, [mid for mid, _ in linked]) if linked else set()
            channels["entity"] = [hit for hit in linked if hit[0] in passed]
        ranked = rank_channels(channels)
        fused = fuse_channels(ranked, fusion=self.settings.fusion, rrf_k=self.settings.rrf_k)
        # Only the best fused candidates are read whole (reading them was most of a
        # recall's time): the boosts after fusion seldom carry one from beyond into the top k.
        depth = sorted(fused, key=lambda mid: (-fused[mid], mid))[: max(HYDRATE_DEPTH, 5 * k)]
        found = {m.id: m for m in self.store.get(depth)}
        self._overlay_access(found)
        best = [found[mid] for mid in depth[: 2 * k] if mid in found]
        ranked["reply"] = self._lift_replies(fused, found, best, flt)
        lead = sorted(fused, key=lambda mid: (-fused[mid], mid))[:k]  # replies lifted too
        ranked["run"] = self._lift_runs(fused, found, lead, flt)
        outdated, successors = self._outdated(best)
        scored = score(
            found,
            ranked,
            fused,
            owner_weights=plan.weights,
            now=now,
            rerank=self.rerank.for_query(query),
            period=period,
            outdated=outdated,
        )
        if flt.min_confidence is not None:
            # the store kept stored confidence >= the bound (decay only lowers it); what a
            # user means is the effective one
            scored = [
                r
                for r in scored
                if r.explanation.confidence is None
                or r.explanation.confidence >= flt.min_confidence
            ]
        if self.guard is not None:
            scored = screen(scored, self.guard, window=max(2 * k, 20))
        # what the guard withholds is never sent to a reranker; what is newer still goes
        # first after it, and the budget packs what it chose
        scored = self.reranking.apply(scored, query, k=k, owner=flt.owners[0])
        scored = successors_first(scored, successors)
        scored = current_first(scored, query_terms(query), text_terms)
        results = pack(scored, k=k, token_budget=plan.token_budget)
        for result in results:
            result.explanation.unavailable = unavailable
        self.note_access([r.memory.id for r in results], now)
        return results

    def _outdated(self, best: list[Memory]) -> tuple[dict[str, float], dict[str, set[str]]]:
        """Of each turn among ``best`` that stated a value since superseded (a memory of
        an attribute derived from it), the share of its values superseded, and the
        memories that superseded them."""
        turns = [m.id for m in best if m.kind is Kind.EPISODE]
        stated = self.store.stated_values(turns) if turns else {}
        shares: dict[str, float] = {}
        successors: dict[str, set[str]] = {}
        for turn, by in stated.items():
            gone = [s for s in by if s]
            if gone:
                shares[turn], successors[turn] = len(gone) / len(by), set(gone)
        return shares, successors

    def _lift_replies(
        self, fused: dict[str, float], found: dict[str, Memory], best: list[Memory], flt: Filter
    ) -> dict[str, ChannelHit]:
        """Lift the turns that answer the questions among the ``best`` candidates.

        A question asked right after a top statement follows it up, and its answer
        says more about the same thing ("I finished my first screenplay!" - "What
        genre is it?" - "A mix of drama and romance."): that answer is lifted too, for
        what the statement scored.
        """
        # The engine's own weights, not the query's (Rerank.for_query): a query that asks
        # for the agent's words wants its replies, not the answers to its questions (with
        # the query's weights here too, BEAM's summaries fell: BENCHMARKS.md).
        weights = self.rerank.source_weights
        # question id -> what its answer is worth: its own (or its statement's) fused
        # score, times the trust in who asked (an agent's question counts as its other words)
        asked = {
            m.id: fused[m.id] * weights.get(m.provenance.source, 1.0)
            for m in best
            if is_question(m)
        }
        statements = [m.id for m in best if m.kind is Kind.EPISODE and not is_question(m)]
        for statement, follow_up in self.store.next_turns(statements, flt).items():
            if is_question(follow_up):
                worth = fused[statement] * weights.get(follow_up.provenance.source, 1.0)
                asked[follow_up.id] = max(asked.get(follow_up.id, 0.0), worth)
        if not asked:
            return {}
        replies = {
            question: reply
            for question, reply in self.store.next_turns(list(asked), flt).items()
            if reply.provenance.source is not Source.AGENT  # second-hand: not lifted
        }
        found.update((reply.id, reply) for reply in replies.values())
        return lift_replies(fused, {q: reply.id for q, reply in replies.items()}, asked)

    def _lift_runs(
        self, fused: dict[str, float], found: dict[str, Memory], lead: list[str], flt: Filter
    ) -> dict[str, ChannelHit]:
        """Lift the other messages of the runs the ``lead`` candidates are in, those
        that say something of their own."""
        runs = self.store.run_mates(lead, flt, reach=RUN_REACH)
        telling = self._telling([mate for run in runs.values() for mate in run])
        kept = {mid: [m.id for m in run if m.id in telling] for mid, run in runs.items()}
        found.update((mid, mate) for mid, mate in telling.items())
        return lift_runs(fused, kept)

    def _telling(self, memories: list[Memory]) -> dict[str, Memory]:
        """Of ``memories``, by id, those that use a word few of their owner's do."""
        terms = {m.id: text_terms(m.content) for m in memories}
        telling: dict[str, Memory] = {}
        for owner in {m.owner for m in memories}:
            mine = [m for m in memories if m.owner == owner]
            frequencies, size = self.store.term_frequencies(
                owner, set().union(*(terms[m.id] for m in mine))
            )
            telling.update(
                (m.id, m) for m in mine if says_something(terms[m.id], frequencies, size)
            )
        return telling

    def note_access(self, ids: Iterable[str], at: datetime) -> None:
        """Count recalls in memory (with when each id was last returned); write them in
        batches off the hot path."""
        with self._access_lock:
            for mid in ids:
                count, last = self._access.get(mid, (0, at))
                self._access[mid] = (count + 1, max(last, at))
        self.flush_access()

    def _overlay_access(self, found: dict[str, Memory]) -> None:
        """Recalls not yet written still count as use: decay reads them at once."""
        with self._access_lock:
            for mid, (_, at) in self._access.items():
                memory = found.get(mid)
                if memory is not None and (
                    memory.last_accessed_at is None or memory.last_accessed_at < at
                ):
                    memory.last_accessed_at = at

    def flush_access(self, *, force: bool = False) -> None:
        with self._access_lock:
            due = (
                len(self._access) >= _FLUSH_HITS
                or time.monotonic() - self._access_flushed > _FLUSH_SECONDS
            )
            if not self._access or not (force or due):
                return
            pending, self._access = self._access, {}
            self._access_flushed = time.monotonic()
        by_time: dict[datetime, dict[str, int]] = {}
        for mid, (count, at) in pending.items():
            by_time.setdefault(at, {})[mid] = count
        done: set[str] = set()
        try:
            for at in sorted(by_time):  # each recall's time, for decay (one write each)
                self.store.record_access(by_time[at], at)
                done.update(by_time[at])
        except StoreError as exc:  # bookkeeping: never fail the read that asked for it
            _log.warning("access counts not recorded, kept for the next flush: %s", exc)
            with self._access_lock:
                for mid, (count, at) in pending.items():
                    if mid in done:
                        continue
                    now_count, last = self._access.get(mid, (0, at))
                    self._access[mid] = (now_count + count, max(last, at))
