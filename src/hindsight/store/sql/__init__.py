"""What the SQL backends share: the schema's use, the write path, filters and logs.

:class:`SQLStore` is the store over either database (:mod:`hindsight.store.db`: SQLite
or PostgreSQL, which hold the same tables and differ in how they connect and lock),
with its vectors kept and searched by a vector backend (:mod:`hindsight.store.vectors`).
The database is the source of truth; the keyword index (:mod:`hindsight.store.keyword`)
is a cache in each process that catches up from ``keyword_log`` whenever it is behind,
so a killed writer or another process (an API server beside this one) never leaves
rows and index disagreeing.

It is made of one part per concern of the seam (:mod:`hindsight.store.base`), each a
class over :class:`~hindsight.store.sql.core.SQLCore`: :mod:`.binding`, :mod:`.memories`,
:mod:`.lineage`, :mod:`.episodes`, :mod:`.search`, :mod:`.logs` and :mod:`.census`;
:mod:`.texts` keeps the keyword-index rows.

SQL here is written once, with ``?`` placeholders and syntax both databases take.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hindsight.store import files
from hindsight.store.base import Store
from hindsight.store.db import Database
from hindsight.store.keyword import KeywordIndex
from hindsight.store.records import TextIndexing
from hindsight.store.sql.binding import SQLBinding
from hindsight.store.sql.census import SQLCensus
from hindsight.store.sql.episodes import SQLEpisodes
from hindsight.store.sql.lineage import SQLLineage
from hindsight.store.sql.logs import SQLLogs
from hindsight.store.sql.memories import SQLMemories
from hindsight.store.sql.search import SQLSearch
from hindsight.store.sql.texts import KeywordTexts

if TYPE_CHECKING:
    from hindsight.store.vectors.base import VectorBackend

__all__ = ["SQLStore"]


class SQLStore(
    SQLBinding,
    SQLMemories,
    SQLLineage,
    SQLEpisodes,
    SQLSearch,
    SQLLogs,
    SQLCensus,
    Store,
):
    """A store over one SQL database and a vector backend. Thread-safe: the database's
    connection is used under its lock."""

    def __init__(
        self,
        db: Database,
        vectors: VectorBackend,
        *,
        index_dir: Path | None = None,
        text: TextIndexing | None = None,
        log_keep: int = 1_000_000,
        keyword_cache_docs: int | None = None,
        vector_backend: str | None = None,
    ) -> None:
        self.db = db
        self.vectors = vectors
        self._vector_backend = vector_backend or db.vector_backend
        self._closed = False
        if index_dir is not None and index_dir.is_dir():
            files.remove_leftovers(index_dir)  # of writers that died mid-write
        self._texts = KeywordTexts(db, text or TextIndexing())
        self._keywords = KeywordIndex(
            self,
            context_weight=self._texts.text.context_weight,
            directory=index_dir,
            max_docs=keyword_cache_docs,
        )
        self._log_keep = log_keep
        self._writes = 0
        self._added_in_hold = None
        self._dimension = None
        self._model = None
        self._identity = None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Saving keyword indexes catches them up from the store first: the database's
        # lock before the indexes', the order every search keeps (SQLSearch.within).
        with self.db.searching():
            self._keywords.close()
        with self.db.lock:
            self.vectors.close()
            self.db.close()
