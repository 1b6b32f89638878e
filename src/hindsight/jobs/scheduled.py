"""Background work: what a person runs with ``hindsight jobs run NAME`` and what a
server's scheduler runs every so often, one function each.

A :class:`Job` works over every owner, so it runs as a caller that writes every
owner (the engine's own, trusted one). Jobs that need a store of their own, closed
to everything else while they run (``reembed``), are plain functions here and are
never scheduled.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from hindsight import embed
from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.errors import HindsightError, ValidationError
from hindsight.store import Store, open_store
from hindsight.write.decide import embedding_text

if TYPE_CHECKING:
    from hindsight.engine import Hindsight

_log = logging.getLogger("hindsight.jobs")
REEMBED_BATCH: Final = 512


@dataclass(frozen=True, slots=True)
class Job:
    """A unit of background work over the whole store; ``run`` returns how many items it
    handled, ``every`` how many seconds a server waits between runs (None: on demand)."""

    name: str
    summary: str
    run: Callable[[Hindsight], int]
    every: Callable[[Settings], float] | None = None


def purge_expired(hs: Hindsight) -> int:
    """Delete working-memory turns past their TTL (every read hides them already)."""
    return hs.purge_expired()


def prune_requests(hs: Hindsight) -> int:
    """Forget idempotency keys older than ``request_ttl_seconds``: a retry later than
    that is a new request."""
    ttl = timedelta(seconds=hs.settings.request_ttl_seconds)
    return hs.store.prune_requests(datetime.now(UTC) - ttl)


def prune_audit(hs: Hindsight) -> int:
    """Drop audit entries older than ``audit_retention_days`` (the chain stays checkable
    from the first entry kept)."""
    keep = timedelta(days=hs.settings.audit_retention_days)
    return hs.store.prune_audit(datetime.now(UTC) - keep)


#: Who holds a lease: this process (servers sharing a database take turns by it).
HOLDER: Final = f"{socket.gethostname()}:{os.getpid()}"


def maintain(hs: Hindsight, *, holder: str = HOLDER) -> int:
    """The maintenance pass (archive, expiry, retention), by the server that holds its
    lease: of several sharing one database, one runs it per interval. Returns how many
    memories it archived or forgot (0 when another server holds the lease)."""
    now = datetime.now(UTC)
    until = now + timedelta(seconds=hs.settings.maintain_interval_seconds)
    if not hs.store.lease("maintain", holder, until=until, now=now):
        return 0
    report = hs.maintain()
    return report.archived + report.expired + report.forgotten


def assess(hs: Hindsight) -> int:
    """The LLM check of every owner, now (:meth:`Hindsight.assess`): returns how many
    memories the model judged. Writes queue it for their owner by themselves."""
    return sum(len(hs.assess(owner).judged) for owner in hs.store.owners())


def warm(hs: Hindsight) -> int:
    """Load the indexes of the ``warm_owners`` owners that changed last, so that their
    first recalls after a restart cost what later ones do; returns how many."""
    return hs.warm(limit=hs.settings.warm_owners)


JOBS: Final = {
    job.name: job
    for job in (
        Job(
            "purge-expired",
            "delete working-memory turns past their TTL",
            purge_expired,
            every=lambda settings: settings.wm_purge_interval_seconds,
        ),
        Job(
            "prune-requests",
            "forget idempotency keys past their TTL",
            prune_requests,
            every=lambda settings: settings.wm_purge_interval_seconds,
        ),
        Job(
            "maintain",
            "archive stale memories, forget expired ones and those past retention",
            maintain,
            every=lambda settings: settings.maintain_interval_seconds,
        ),
        Job(
            "extract",
            "run the queued LLM extraction jobs that are due (with an LLM, a worker thread does)",
            lambda hs: hs.run_jobs(),
        ),
        Job(
            "assess",
            "judge every owner's held and recent low-trust memories with the LLM (writes "
            "queue it for their owner)",
            assess,
        ),
        Job("warm", "load the indexes of the owners that changed last (a server: at start)", warm),
        Job(
            "prune-audit",
            "drop audit entries past their retention",
            prune_audit,
            every=lambda settings: settings.wm_purge_interval_seconds,
        ),
    )
}


def job(name: str) -> Job:
    try:
        return JOBS[name]
    except KeyError:
        raise ValidationError(f"unknown job {name!r}; known: {', '.join(JOBS)}") from None


async def schedule(hs: Hindsight) -> None:
    """Run each scheduled job every ``every`` seconds until cancelled (a server's lifespan).

    A failing run is logged and tried again next time: a busy store is not fatal.
    """
    from hindsight import serving  # a server's, with its extra: the CLI runs jobs without it

    async def repeat(job: Job, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await serving.call(hs.settings.request_timeout_seconds, job.run, hs)
            except HindsightError as exc:
                _log.warning("job %s failed: %s", job.name, exc)

    # Warming runs in a thread of its own, off the request path (an owner asked first
    # is loaded by its own recall), for at most warm_seconds; the server's shutdown stops
    # it between two owners and waits for it, so the engine never closes under it.
    stop = threading.Event()
    warming = threading.Thread(target=_warm, args=(hs, stop), name="hindsight-warm", daemon=True)
    if hs.settings.warm_owners:
        warming.start()
    try:
        async with asyncio.TaskGroup() as group:
            for each in JOBS.values():
                if each.every is not None:
                    group.create_task(repeat(each, each.every(hs.settings)))
    finally:
        stop.set()
        if warming.is_alive():
            warming.join()


def _warm(hs: Hindsight, stop: threading.Event) -> None:
    deadline = time.monotonic() + hs.settings.warm_seconds
    try:
        hs.warm(
            limit=hs.settings.warm_owners, stop=lambda: stop.is_set() or time.monotonic() > deadline
        )
    except HindsightError as exc:  # a failure costs only the time it would have saved
        _log.warning("warming stopped: %s", exc)


def reembed(
    settings: Settings | None = None,
    *,
    embedder: Embeddings | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Remake the vectors of every memory that another embedding model made; returns how
    many.

    A store records the model that made its vectors and refuses any other, since vectors
    of two models do not compare. After a change of model, this moves the store over in
    place: it adopts the new model at once, then re-embeds the memories whose vectors the
    old one made (and derives their keyword-index text anew), a batch per transaction.
    Until it has finished, the store refuses to open for anything else, and running it
    again resumes where it stopped. ``progress`` is called with the count done after each
    batch. A store already of the configured model is left as it is (returns 0).
    """
    settings = settings or Settings()
    made = embedder is None
    embedder = embedder or embed.from_settings(settings)
    store = open_store(settings)
    done = 0
    try:
        embedder.settle(store.embedding_binding())
        store.bind_embedding(embedder.model_id, embedder.dimension, rebind=True)
        while batch := store.stale_vectors(REEMBED_BATCH):
            for memory in batch:
                memory.embedding_model = embedder.model_id
            vectors = embedder.encode_documents([embedding_text(m) for m in batch])
            store.replace_vectors(list(zip(batch, vectors, strict=True)))
            done += len(batch)
            if progress is not None:
                progress(done)
        store.finish_rebind()
    finally:
        store.close()
        if made:
            embedder.close()
    return done


def check_vectors(
    store: Store, *, owner: str | None = None, repair: bool = False
) -> dict[str, Any]:
    """Vectors out of step with their rows, once the vector outbox is applied:
    ``missing`` (ids of memories whose vector the engine lacks) and ``orphaned`` (the
    engine's points, by row key, that no memory has); with ``repair``, both are fixed
    and ``repaired`` is true. A backend that keeps its vectors in the rows themselves
    (``local``, ``pgvector``) is always clean."""
    from hindsight.store.sql import SQLStore
    from hindsight.store.vectors.qdrant import QdrantVectors

    vectors = store.vectors if isinstance(store, SQLStore) else None
    if not isinstance(vectors, QdrantVectors):
        return {"missing": [], "orphaned": [], "repaired": False}
    report = vectors.repair(owner) if repair else vectors.check(owner)
    return {"missing": report.missing, "orphaned": report.orphaned, "repaired": report.repaired}


def optimize_vectors(store: Store) -> bool:
    """Build the vector engine's index now (qdrant-edge builds HNSW only when asked;
    it blocks this process meanwhile); whether anything was built."""
    from hindsight.store.sql import SQLStore
    from hindsight.store.vectors.qdrant import QdrantVectors

    vectors = store.vectors if isinstance(store, SQLStore) else None
    return isinstance(vectors, QdrantVectors) and vectors.optimize()
