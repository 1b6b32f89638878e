"""Storage backends. Only this package may import a database driver or hold SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindsight.store.base import (
    Filter,
    Store,
    StoreStats,
    TextIndexing,
    WorkingMemory,
    WorkingTurn,
)
from hindsight.validate import time_zone

if TYPE_CHECKING:
    from hindsight.config import Settings


def open_store(settings: Settings) -> Store:
    """The store the settings describe: PostgreSQL when ``database_url`` is set, else
    the embedded SQLite file under ``settings.home``."""
    text = TextIndexing(
        context_turns=settings.context_turns,
        context_chars=settings.context_chars,
        context_weight=settings.context_weight,
        zone=time_zone(settings.timezone),
    )
    if settings.database_url is not None:
        from hindsight.store.postgres import PostgresStore

        return PostgresStore(
            settings.database_url,
            index_dir=settings.index_dir,
            text=text,
            log_keep=settings.log_keep,
            keyword_cache_docs=settings.keyword_cache_docs,
            hnsw_threshold=settings.hnsw_threshold,
        )
    from hindsight.store.sqlite import SQLiteStore

    return SQLiteStore(
        settings.database_path,
        index_dir=settings.index_dir,
        hnsw_threshold=settings.hnsw_threshold,
        synchronous=settings.sqlite_synchronous,
        log_keep=settings.log_keep,
        text=text,
        keyword_cache_docs=settings.keyword_cache_docs,
        vector_cache_vectors=settings.vector_cache_vectors,
    )


def open_working(settings: Settings, store: Store) -> WorkingMemory:
    """Where working memory lives: Redis when ``redis_url`` is set, else in ``store``."""
    if settings.redis_url is None:
        return store
    from hindsight.store.redis_working import RedisWorkingMemory

    return RedisWorkingMemory(settings.redis_url)


__all__ = [
    "Filter",
    "Store",
    "StoreStats",
    "TextIndexing",
    "WorkingMemory",
    "WorkingTurn",
    "open_store",
    "open_working",
]
