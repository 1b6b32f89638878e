"""``hindsight bench scale``: ingest throughput and recall latency on a store of N memories.

The text is generated from templates with a fixed seed (people, actions, objects,
places, times), so runs are repeatable and words repeat as they do in real notes.
Ingest goes through ``import_records`` (the bulk path: embedding, keyword and vector
rows in one transaction per batch); recall goes through ``recall`` with defaults.
A first recall after reopening the store (a new process, or a new API server) is timed
apart: with the indexes saved beside the store, and in the same run with the keyword
index's file and the exact vector index's removed, so that they are rebuilt from the
store's rows (an HNSW graph's file is kept: rebuilding it takes seconds).

The vector backend is the settings' (``--vector-backend`` on the command line). The
report names the one used and what the store takes on disk: the database file, the
index files beside it and qdrant-edge's shard folder. On qdrant-edge the HNSW index is
built by ``optimize()`` whenever a catch-up leaves ``qdrant_optimize_after`` vectors
outside it (a write searches first, so that happens during the import): that time is
part of the ingest figure, and is also reported apart (``index_build_s``; the engine
indexes nothing in a shard of under ~10,000 vectors), as is the
first recall after the import (``warm_up_s``: where the local backend builds its HNSW
graph and both build the keyword index; also part of the ingest figure). Vectors left
outside the edge index (fewer than ``qdrant_optimize_after``) are searched exactly, as a
user's store would be; ``unindexed_vectors`` says how many.

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
from pathlib import Path
from typing import Any

from hindsight.config import Settings
from hindsight.engine import Hindsight
from hindsight.errors import ValidationError
from hindsight.store import Filter
from hindsight.store.sql import SQLStore
from hindsight.store.vectors import backend_name
from hindsight.store.vectors.qdrant import QdrantVectors

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
    vector_backend: str  # the one the store used ("auto" resolved)
    ingest_per_s: float
    index_builds: int  # qdrant-edge's optimize() calls during the ingest (0 on the others)
    index_build_s: float  # of the ingest: the time they took
    warm_up_s: float  # of the ingest: the first recall after it (builds what is missing)
    unindexed_vectors: int  # qdrant-edge: vectors outside its HNSW index after ingest
    embed_only_per_s: float  # the embedder alone on the same texts: the ceiling
    recall_p50_ms: float
    recall_p95_ms: float
    keyword_p50_ms: float
    dense_p50_ms: float
    embed_query_p50_ms: float
    open_ms: float  # opening the store (qdrant-edge: its shard too): median of 10 engines
    first_recall_ms: float  # after reopening (median of 10 engines): the saved indexes loaded
    first_recall_p95_ms: float  # of the same 10 (with 10, the worst)
    first_recall_rebuild_ms: float  # after reopening without the keyword and exact files
    first_recall_warmed_ms: float  # after reopening and warm() (as a server starts): 5 engines
    peak_rss_mb: float
    disk_database_mb: float  # the database file (and its WAL)
    disk_index_mb: float  # the keyword and vector index files beside it
    disk_qdrant_mb: float  # qdrant-edge's shard folder
    disk_mb: float  # the three together

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


def _first_recalls_ms(
    settings: Settings, owner: str, *, times: int = 1, warm: bool = False
) -> tuple[list[float], list[float]]:
    """The first recall of a store just opened (its model already loaded, and with
    ``warm`` the owner's indexes too, as a starting server loads them), in ``times``
    engines opened one after another; and how long opening each took."""
    out, opened = [], []
    for i in range(times):
        start = time.perf_counter()
        with Hindsight(settings) as hs:
            opened.append((time.perf_counter() - start) * 1000)
            hs.embedder.encode_query("load the model first")
            if warm:
                hs.warm([owner])
            asked = [(owner, QUERIES[i % len(QUERIES)])]
            out += _time_ms(lambda q: hs.recall(owner, q[1], k=10), asked)
    return out, opened


def _first_recall_ms(
    settings: Settings, owner: str, *, times: int = 1, warm: bool = False
) -> float:
    """The median of :func:`_first_recalls_ms`."""
    return statistics.median(_first_recalls_ms(settings, owner, times=times, warm=warm)[0])


def _mb(paths: Iterator[Path]) -> float:
    """The disk space the files take (their blocks, as du counts: Qdrant's are sparse)."""
    return sum(p.stat().st_blocks * 512 for p in paths if p.is_file()) / 2**20


def _disk_mb(settings: Settings) -> dict[str, float]:
    """What the store takes on disk: database, index files, qdrant-edge's shards."""
    home = settings.home
    database = _mb(home.glob(settings.database_path.name + "*"))
    index = _mb(settings.index_dir.rglob("*"))
    qdrant = _mb(settings.qdrant_dir.rglob("*"))
    return {
        "disk_database_mb": database,
        "disk_index_mb": index,
        "disk_qdrant_mb": qdrant,
        "disk_mb": database + index + qdrant,
    }


def _vectors(hs: Hindsight, settings: Settings) -> tuple[str, QdrantVectors | None]:
    """The vector backend's name as the store resolved it, and the backend if Qdrant's."""
    store = hs.store
    if not isinstance(store, SQLStore):
        return settings.vector_backend, None
    qdrant = store.vectors if isinstance(store.vectors, QdrantVectors) else None
    return backend_name(settings, store.db), qdrant


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
        warm_start = time.perf_counter()
        hs.recall(owner_of(0, owners), "warm up the index")  # loads or builds the indexes
        warm_up = time.perf_counter() - warm_start
        ingest = n / (time.perf_counter() - start)
        backend, qdrant = _vectors(hs, settings)
        builds, built = (qdrant.builds, qdrant.build_seconds) if qdrant else (0, 0.0)
        unindexed = qdrant.unindexed() if qdrant else 0

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
    disk = _disk_mb(settings)
    first, opened = _first_recalls_ms(settings, owner_of(0, owners), times=10)
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
        vector_backend=backend,
        ingest_per_s=ingest,
        index_builds=builds,
        index_build_s=built,
        warm_up_s=warm_up,
        unindexed_vectors=unindexed,
        embed_only_per_s=embed_only,
        recall_p50_ms=statistics.median(recall),
        recall_p95_ms=_p(recall, 0.95),
        keyword_p50_ms=statistics.median(keyword),
        dense_p50_ms=statistics.median(dense),
        embed_query_p50_ms=statistics.median(embed_q),
        open_ms=statistics.median(opened),
        first_recall_ms=statistics.median(first),
        first_recall_p95_ms=_p(first, 0.95),
        first_recall_rebuild_ms=rebuild,
        first_recall_warmed_ms=warmed,
        peak_rss_mb=peak_rss_mb,
        **disk,
    )
