"""Storage backends. Only this package may import a database driver or hold SQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from hindsight.errors import StoreError
from hindsight.store.base import ResultCache, Store, WorkingMemory
from hindsight.store.records import (
    JOB_STATES,
    AuditEntry,
    Filter,
    QueuedJob,
    Request,
    StoreStats,
    TextIndexing,
    UsageEntry,
    UsageRow,
    WorkingTurn,
)
from hindsight.validate import time_zone

if TYPE_CHECKING:
    from hindsight.config import Settings
    from hindsight.store.db import Database


def open_store(settings: Settings) -> Store:
    """The store the settings describe: PostgreSQL when ``database_url`` is set, else
    the embedded SQLite file under ``settings.home``; its vectors with the backend
    ``vector_backend`` names (``auto``: the one that fits the database, pgvector or the
    local index)."""
    from hindsight.store.sql import SQLStore
    from hindsight.store.vectors import backend_name, vector_backends

    db = _open_database(settings)
    try:
        name = backend_name(settings, db)
        vectors = vector_backends.create(name, settings)(db)
    except BaseException:
        db.close()
        raise
    return SQLStore(
        db,
        vectors,
        vector_backend=name,
        index_dir=settings.index_dir,
        text=TextIndexing(
            context_turns=settings.context_turns,
            context_chars=settings.context_chars,
            context_weight=settings.context_weight,
            zone=time_zone(settings.timezone),
        ),
        log_keep=settings.log_keep,
        keyword_cache_docs=settings.keyword_cache_docs,
    )


def _open_database(settings: Settings) -> Database:
    if settings.database_url is not None:
        from hindsight.store.postgres import PostgresDatabase

        return PostgresDatabase(
            settings.database_url,
            statement_timeout=settings.statement_timeout_seconds,
            pool_size=settings.database_pool_size,
            read_urls=settings.database_read_url,
            read_max_lag=settings.database_read_max_lag_seconds,
        )
    from hindsight.store.sqlite import SQLiteDatabase

    return SQLiteDatabase(settings.database_path, synchronous=settings.sqlite_synchronous)


@contextmanager
def scratch(settings: Settings) -> Iterator[Settings]:
    """Settings for a store of its own, removed when the block ends: on PostgreSQL a new
    schema of the configured database (its home is kept); on SQLite the caller gives a
    new home."""
    if settings.database_url is None:
        yield settings
        return
    from hindsight.store.postgres import scratch_schema

    with scratch_schema(settings.database_url) as url:
        yield settings.model_copy(update={"database_url": url})


def open_working(settings: Settings, store: Store) -> WorkingMemory:
    """Where working memory lives: Redis when ``redis_url`` is set, else in the store's
    database."""
    if settings.redis_url is not None:
        from hindsight.store.redis_working import RedisWorkingMemory

        return RedisWorkingMemory(settings.redis_url)
    from hindsight.store.sql import SQLStore
    from hindsight.store.working import SQLWorkingMemory

    if not isinstance(store, SQLStore):
        raise StoreError("this store keeps no working memory: set HINDSIGHT_REDIS_URL")
    return SQLWorkingMemory(store.db)


def open_result_cache(settings: Settings) -> ResultCache | None:
    """Where recall results are kept: nowhere when ``recall_cache_seconds`` is 0, in
    Redis when ``redis_url`` is set (shared by every server), else in this process."""
    if settings.recall_cache_seconds == 0:
        return None
    if settings.redis_url is not None:
        from hindsight.store.redis_cache import RedisCache

        return RedisCache(settings.redis_url)
    from hindsight.store.result_cache import LocalCache

    return LocalCache(settings.recall_cache_entries, chars=settings.recall_cache_megabytes * 10**6)


__all__ = [
    "JOB_STATES",
    "AuditEntry",
    "Filter",
    "QueuedJob",
    "Request",
    "ResultCache",
    "Store",
    "StoreStats",
    "TextIndexing",
    "UsageEntry",
    "UsageRow",
    "WorkingMemory",
    "WorkingTurn",
    "open_result_cache",
    "open_store",
    "open_working",
    "scratch",
]
