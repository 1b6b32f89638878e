"""Storage backends. Only this package may import a database driver or hold SQL."""

from __future__ import annotations

from pathlib import Path

from hindsight.store.base import Filter, Store, StoreStats, WorkingTurn


def open_store(
    path: Path,
    *,
    index_dir: Path | None,
    hnsw_threshold: int,
    synchronous: str,
    context_turns: int,
) -> Store:
    """The embedded SQLite store at ``path``."""
    from hindsight.store.sqlite import SQLiteStore

    return SQLiteStore(
        path,
        index_dir=index_dir,
        hnsw_threshold=hnsw_threshold,
        synchronous=synchronous,
        context_turns=context_turns,
    )


__all__ = ["Filter", "Store", "StoreStats", "WorkingTurn", "open_store"]
