"""The recall cache: the same recall asked again, by the same caller, of owners that have
not changed, is answered from the first answer (for ``settings.recall_cache_seconds``,
five minutes by default; 0 turns it off).

Where: in Redis when ``redis_url`` is set (shared by every server), else in this
process (the ``recall_cache_entries`` used last; :mod:`hindsight.store.result_cache`).

Never stale: the key holds each searched owner's generation
(:meth:`~hindsight.store.Store.generations`), read from the database before the recall
it caches. Every change to an owner's memories (retain, update, import, a review
decision, forget, and any later writer: the store counts it in the change's own
transaction, not the engine method that asked for it) makes a new generation, so the
next recall asks for a key nobody has filled. No process tells another, or Redis, of a
write: several servers sharing PostgreSQL without Redis each keep a cache of their own
and none serves what another's write changed. Entries of past generations are never
asked for again; they expire (or, in process, make way).

Never another's: the key also holds the caller (its name, scopes and trust), every
option of the recall (owners and weights, query, k, the whole store filter: kinds,
since, until, min_confidence, include_history; token_budget, the time zone, and the span
of time the query names as resolved now: "yesterday" after midnight is another key),
the store's identity (a Redis shared by several stores keeps them apart) and what shapes
a ranking (the embedding model, fusion and rerank settings, the reranker and its model,
the version). An answer the reranker failed on (the engine's order, flagged) is not kept.

A hit is the answer as JSON (as :func:`hindsight.views.recall_hit`: no pickle), rebuilt
into new objects each time, so a caller that changes a result changes nothing kept; it
is audited and its access counted as any recall's (by the engine and here). Kept as it
was: the recency boost as of the first answer (at most minutes older) and the access
counts it showed. A cache that fails (Redis down) is a warning, and the recall is
answered without it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from datetime import datetime, tzinfo
from typing import Any, Final

from hindsight import views
from hindsight.access import Principal
from hindsight.config import VERSION
from hindsight.errors import StoreError, ValidationError
from hindsight.models import RecallResult
from hindsight.recall.request import RecallPlan
from hindsight.recall.search import Search
from hindsight.store import Filter, ResultCache, Store
from hindsight.text.timewords import asked_period

_log = logging.getLogger("hindsight.recall.cache")
_FORMAT: Final = 2  # of a key's parts and an entry's JSON: a new one misses the old
# The settings that change what a recall of the same memories returns.
_SHAPING: Final = frozenset(
    {
        "fusion",
        "rrf_k",
        "candidates",
        "recency_half_life_days",
        "guard",
        "trust",
        "trusted_at",
        "on_unsafe",
        "context_turns",
        "context_chars",
        "context_weight",
        "timezone",
        "hnsw_threshold",
        "decay_per_week",
        "decay_counts_recall",
        "retention",
        "reranker",
        "rerank_base_url",
        "rerank_model",
        "rerank_model_dir",
        "rerank_candidates",
        "rerank_weight",
        "llm_models",  # its "rerank" model, with the llm reranker
        "llm_model",
    }
)
# Times in a filter that move with the clock (what has expired or retired by now): the
# key holds the clock's window instead, and an entry lives no longer than its results.
_MOVING: Final = ("live_at", "learnt_since")


class RecallCache:
    """Recall through :class:`~hindsight.recall.search.Search`, answered from ``cache`` when
    the same caller asked the same of the same owners' memories (None: never)."""

    def __init__(self, store: Store, search: Search, cache: ResultCache | None) -> None:
        self.store = store
        self.search = search
        self.cache = cache
        self.ttl = search.settings.recall_cache_seconds
        self._shape: str | None = None  # the store's identity and settings, made once

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()

    def recall(self, principal: Principal, plan: RecallPlan, now: datetime) -> list[RecallResult]:
        """What :meth:`Search.recall` answers at ``now`` (the engine's clock), from the
        cache when it holds it."""
        if self.cache is None:
            return self.search.recall(plan)
        # The key first: a write committed after this read makes a generation this
        # entry does not name, whether the search below saw the write or not.
        key = self.key(principal, plan, now)
        hit = self._get(key, now)
        if hit is not None:
            self.search.note_access((r.memory.id for r in hit), now)
            return hit
        results = self.search.recall(plan)
        flt = plan.filter
        ttl = int(_lifetime(results, flt, now, self.ttl))
        if ttl < 1 or _fell_back(results) or any(r.explanation.unavailable for r in results):
            # a result expires or retires at once, or a channel was down or the reranker
            # failed this time (they may answer the next): nothing to keep
            return results
        # the entry says until when (on the engine's clock) it answers, for a clock that
        # is not the wall's (a replay) outruns the cache's own expiry
        kept = {"until": now.timestamp() + ttl, "results": [_entry(r) for r in results]}
        try:
            self.cache.put(key, views.dumps(kept), ttl)
        except StoreError as exc:
            _log.warning("recall not cached: %s", exc)
        return results

    def key(self, principal: Principal, plan: RecallPlan, now: datetime) -> str:
        """The digest of everything an answer depends on (see the module's docstring)."""
        flt, zone = plan.filter, plan.zone
        fields = {k: v for k, v in dataclasses.asdict(flt).items() if k not in _MOVING}
        parts: dict[str, Any] = {
            "shape": self._shaping(),
            "principal": dataclasses.asdict(principal),
            "generations": sorted(self.store.generations(list(flt.owners)).items()),
            "weights": sorted(plan.weights.items()),
            "filter": fields,  # a field added to it joins the key
            # decay and recency move with the clock: an entry answers within one window of
            # it (a clock set back or jumped, as by a replay, asks for another key)
            "window": int(now.timestamp() // max(self.ttl, 1)),
            "query": plan.query,
            "extra": list(plan.extra),  # the sub-queries an LLM split the query into
            "k": plan.k,
            "token_budget": plan.token_budget,
            "zone": str(zone),
            "period": _period(plan.query, zone, now),
        }
        return hashlib.sha256(views.dumps(parts).encode("utf-8")).hexdigest()

    def _get(self, key: str, now: datetime) -> list[RecallResult] | None:
        assert self.cache is not None
        try:
            kept = self.cache.get(key)
        except StoreError as exc:
            _log.warning("recall cache not read, answering without it: %s", exc)
            return None
        if kept is None:
            return None
        try:
            entry = json.loads(kept)
            if now.timestamp() >= entry["until"]:
                return None  # past what its results allow, on the engine's clock
            return [views.recall_hit_from(hit) for hit in entry["results"]]
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            _log.warning("recall cache entry unreadable, answering without it: %s", exc)
            return None

    def _shaping(self) -> str:
        if self._shape is None:
            settings = self.search.settings.model_dump(include=set(_SHAPING))
            self._shape = views.dumps(
                [
                    _FORMAT,
                    VERSION,
                    self.store.identity(),
                    self.search.embedder.model_id,
                    sorted(settings.items()),
                ]
            )
        return self._shape


def _entry(result: RecallResult) -> dict[str, Any]:
    """A result as :func:`views.recall_hit_from` reads it, its explanation unrounded (the
    views round it for people): a hit is the answer it repeats, to the last digit."""
    return {**views.recall_hit(result), "explanation": dataclasses.asdict(result.explanation)}


def _fell_back(results: list[RecallResult]) -> bool:
    """Whether the rerank step failed on this answer (and it kept the engine's order)."""
    return any(r.explanation.rerank and not r.explanation.rerank["applied"] for r in results)


def _lifetime(results: list[RecallResult], flt: Filter, now: datetime, ttl: int) -> float:
    """How long an answer may be kept: ``ttl`` seconds, less if one of its results
    expires (``expires_at``) or passes its owner's retention (``flt.learnt_since``, the
    cutoff at ``now``) sooner, for it must not be returned after that."""
    ends = [r.memory.expires_at for r in results if r.memory.expires_at is not None]
    for r in results:
        if flt.learnt_since and (cutoff := flt.learnt_since.get(r.memory.owner)) is not None:
            ends.append(r.memory.created_at + (now - cutoff))
    soonest = min((end - now).total_seconds() for end in ends) if ends else ttl
    return min(ttl, soonest)


def _period(query: str, zone: tzinfo, now: datetime) -> list[Any] | None:
    """The span of time ``query`` names, resolved at ``now`` (as the recall resolves it)."""
    period = asked_period(query, now, zone)
    if period is None:
        return None
    return [period.start, period.end, period.month]
