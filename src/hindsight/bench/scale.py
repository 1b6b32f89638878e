"""``hindsight bench scale``: ingest throughput and recall latency on a store of N memories.

The text is generated from templates with a fixed seed (people, actions, objects,
places, times), so runs are repeatable and words repeat as they do in real notes.
Ingest goes through ``import_records`` (the bulk path: embedding, keyword and vector
rows in one transaction per batch); recall goes through ``recall`` with defaults.
A first recall after reopening the store (a new process, or a new API server) is timed
apart: with the indexes saved beside the store, and in the same run with the keyword
index's file and the exact vector index's removed, so that they are rebuilt from the
store's rows (an HNSW graph's file is kept: rebuilding it takes seconds).

With ``owners`` above 1 the memories are dealt out to that many owners (a service with
many users), and the timed recalls go to one owner after another, each searched once
before timing starts (their caches built: the steady state of a server).
"""

from __future__ import annotations

import random
import resource
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hindsight.config import Settings
from hindsight.engine import Hindsight
from hindsight.errors import ValidationError
from hindsight.store import Filter

OWNER = "bench:scale"
_PEOPLE = [
    "Alice",
    "Bob",
    "my sister",
    "our landlord",
    "the client",
    "Dr. Lee",
    "the kids",
    "grandma",
    "my manager",
    "Priya",
    "the plumber",
    "coach Martin",
]
_ACTIONS = [
    "booked",
    "cancelled",
    "mentioned",
    "asked about",
    "recommended",
    "complained about",
    "paid for",
    "forgot",
    "planned",
    "reviewed",
    "postponed",
    "loved",
]
_OBJECTS = [
    "a trip to Lisbon",
    "the quarterly budget",
    "a sushi dinner",
    "the new laptop",
    "piano lessons",
    "the dentist appointment",
    "a hiking weekend",
    "the kitchen renovation",
    "a birthday party",
    "the insurance claim",
    "a chess tournament",
    "the garden fence",
    "a concert in Berlin",
    "the car repair",
    "a yoga class",
    "the tax return",
    "a camping trip",
    "the wedding gifts",
    "a pottery course",
    "the server migration",
]
_WHEN = [
    "on Monday",
    "last week",
    "in March",
    "yesterday",
    "next Friday",
    "this morning",
    "in the summer",
    "after lunch",
    "before the holidays",
    "on her birthday",
]
QUERIES = [
    "when is the dentist appointment",
    "who recommended the sushi dinner",
    "plans for the trip to Lisbon",
    "how much did the kitchen renovation cost",
    "what did my manager forget",
    "is the chess tournament still on",
    "who paid for the concert in Berlin",
    "what happened with the insurance claim",
]


@dataclass(slots=True)
class ScaleResult:
    n: int
    owners: int
    ingest_per_s: float
    embed_only_per_s: float  # the embedder alone on the same texts: the ceiling
    recall_p50_ms: float
    recall_p95_ms: float
    keyword_p50_ms: float
    dense_p50_ms: float
    embed_query_p50_ms: float
    first_recall_ms: float  # after reopening (median of 5 engines): the saved indexes loaded
    first_recall_rebuild_ms: float  # after reopening without the keyword and exact files
    first_recall_warmed_ms: float  # after reopening and warm() (as a server starts): 5 engines
    peak_rss_mb: float

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 2) if isinstance(v, float) else v for k, v in asdict(self).items()}


def sentences(n: int, seed: int = 7) -> Iterator[str]:
    rng = random.Random(seed)
    for i in range(n):
        yield (
            f"{rng.choice(_PEOPLE)} {rng.choice(_ACTIONS)} {rng.choice(_OBJECTS)} "
            f"{rng.choice(_WHEN)} (note {i})"
        )


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def owner_of(i: int, owners: int) -> str:
    """Who the ``i``-th memory (or timed recall) belongs to."""
    return OWNER if owners == 1 else f"{OWNER}-{i % owners}"


def _first_recall_ms(
    settings: Settings, owner: str, *, times: int = 1, warm: bool = False
) -> float:
    """The first recall of a store just opened (its model already loaded, and with
    ``warm`` the owner's indexes too, as a starting server loads them): the median of
    ``times`` engines opened one after another."""
    out = []
    for i in range(times):
        with Hindsight(settings) as hs:
            hs.embedder.encode_query("load the model first")
            if warm:
                hs.warm([owner])
            asked = [(owner, QUERIES[i % len(QUERIES)])]
            out += _time_ms(lambda q: hs.recall(owner, q[1], k=10), asked)
    return statistics.median(out)


def _time_ms(fn: Callable[[tuple[str, str]], object], asked: list[tuple[str, str]]) -> list[float]:
    out = []
    for item in asked:
        start = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - start) * 1000)
    return out


def run(
    settings: Settings,
    n: int,
    *,
    batch: int = 2_000,
    queries: int = 200,
    owners: int = 1,
    progress: Callable[[int], None] | None = None,
) -> ScaleResult:
    """Build a store of ``n`` memories for ``owners`` owners, then time recalls on it."""
    if not 1 <= owners <= n:
        raise ValidationError(f"owners must be between 1 and n ({n}), not {owners}")
    base = datetime(2024, 1, 1, tzinfo=UTC)
    # the pipeline's own latency: its queries repeat, and a cached answer would time
    # the cache (``bench cache`` does)
    settings = settings.model_copy(update={"recall_cache_seconds": 0})
    with Hindsight(settings) as hs:
        sample = list(sentences(min(n, 2_000), seed=99))
        start = time.perf_counter()
        hs.embedder.encode_documents(sample)
        embed_only = len(sample) / (time.perf_counter() - start)

        start = time.perf_counter()
        pending: list[dict[str, Any]] = []
        for i, text in enumerate(sentences(n)):
            when = (base + timedelta(minutes=i)).isoformat()
            pending.append(
                {
                    "id": f"b_{i:09d}",
                    "owner": owner_of(i, owners),
                    "kind": "fact",
                    "content": text,
                    "observed_at": when,
                }
            )
            if len(pending) == batch:
                hs.import_records(pending)
                pending = []
                if progress:
                    progress(batch)
        if pending:
            hs.import_records(pending)
            if progress:
                progress(len(pending))
        hs.recall(owner_of(0, owners), "warm up the index")  # loads or builds the indexes
        ingest = n / (time.perf_counter() - start)

        asked = [(owner_of(i, owners), QUERIES[i % len(QUERIES)]) for i in range(queries)]
        for owner in dict.fromkeys(owner for owner, _ in asked):  # caches built: steady state
            hs.recall(owner, "warm up the index")
        recall = _time_ms(lambda a: hs.recall(a[0], a[1], k=10), asked)
        keyword = _time_ms(
            lambda a: hs.store.keyword_search(Filter(owners=[a[0]]), a[1], 100), asked
        )
        embed_q = _time_ms(lambda a: hs.embedder.encode_query(a[1]), asked)
        vectors = {q: hs.embedder.encode_query(q) for q in QUERIES}
        dense = _time_ms(
            lambda a: hs.store.vector_search(Filter(owners=[a[0]]), vectors[a[1]], 100), asked
        )
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # one store open
    first = _first_recall_ms(settings, owner_of(0, owners), times=5)
    warmed = _first_recall_ms(settings, owner_of(0, owners), times=5, warm=True)
    for saved in [
        *settings.index_dir.glob("*.keywords.npz"),
        *settings.index_dir.glob("*.vectors"),
    ]:
        saved.unlink()
    rebuild = _first_recall_ms(settings, owner_of(0, owners))
    return ScaleResult(
        n=n,
        owners=owners,
        ingest_per_s=ingest,
        embed_only_per_s=embed_only,
        recall_p50_ms=statistics.median(recall),
        recall_p95_ms=_p(recall, 0.95),
        keyword_p50_ms=statistics.median(keyword),
        dense_p50_ms=statistics.median(dense),
        embed_query_p50_ms=statistics.median(embed_q),
        first_recall_ms=first,
        first_recall_rebuild_ms=rebuild,
        first_recall_warmed_ms=warmed,
        peak_rss_mb=peak_rss_mb,
    )
