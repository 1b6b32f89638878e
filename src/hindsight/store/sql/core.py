"""What every part of the SQL store shares: its state, memories read from rows, and the
bookkeeping of writes (holding owners for one writer, counting writes, pruning the
change logs).

:class:`SQLCore` is the base of each part of the store (:mod:`hindsight.store.sql`):
what it holds, every part uses.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from hindsight.models import Memory
from hindsight.store.rows import COLUMNS, chunks, memory_of

if TYPE_CHECKING:
    from hindsight.store.db import Connection, Database
    from hindsight.store.keyword import KeywordIndex
    from hindsight.store.sql.texts import KeywordTexts
    from hindsight.store.vectors.base import VectorBackend

_PRUNE_EVERY = 1_000  # writes between two prunings of the change logs


class SQLCore:
    """The state a SQL store's parts share, set by :class:`~hindsight.store.sql.SQLStore`.
    Thread-safe: the database's connection is used under its lock."""

    db: Database
    vectors: VectorBackend
    _vector_backend: str  # the vector backend's registered name
    _texts: KeywordTexts  # the keyword-index rows, rebuilt in each write's transaction
    _keywords: KeywordIndex  # this process's keyword index, caught up from keyword_log
    _log_keep: int  # entries each change log keeps
    _writes: int  # counted to prune the change logs every _PRUNE_EVERY
    _added_in_hold: int | None  # memories added in exclusive(), if it wrote
    _dimension: int | None  # of the embedding model bound, once bound
    _model: str | None
    _identity: str | None  # the store's name, once asked

    def _memories(self, rows: list[tuple[Any, ...]]) -> list[Memory]:
        if not rows:
            return []
        ids = [r[0] for r in rows]
        parents: dict[str, list[str]] = {}
        for chunk in chunks(ids):
            among, values = self.db.among(chunk)
            for child, parent in self.db.read(
                f"SELECT child, parent FROM derivations WHERE child {among} ORDER BY child, parent",
                values,
            ):
                parents.setdefault(child, []).append(parent)
        return [memory_of(r, parents.get(r[0], [])) for r in rows]

    def get(self, ids: Sequence[str]) -> list[Memory]:
        found: dict[str, tuple[Any, ...]] = {}
        for chunk in chunks(list(ids)):
            among, values = self.db.among(chunk)
            for row in self.db.read(f"SELECT {COLUMNS} FROM memories WHERE id {among}", values):
                found[row[0]] = row
        return self._memories([found[i] for i in dict.fromkeys(ids) if i in found])

    def _put_vector(
        self, conn: Connection, key: int, memory: Memory, vector: npt.NDArray[np.float32]
    ) -> None:
        self.vectors.put(conn, key, memory.owner, memory.embedding_model or "", vector)

    @contextmanager
    def exclusive(self, owners: Collection[str]) -> Iterator[None]:
        with self.db.exclusive(sorted(owners)):
            try:
                yield
            except BaseException:
                self._added_in_hold = None  # rolled back: nothing was written
                raise
        if self._added_in_hold is not None:  # committed
            added, self._added_in_hold = self._added_in_hold, None
            self._wrote(added)

    def _wrote(self, added: int = 0) -> None:
        """Count a write (that added ``added`` memories); every ``_PRUNE_EVERY`` writes,
        prune the change logs. In :meth:`exclusive`, once it has committed."""
        if self.db.held is not None:
            self._added_in_hold = (self._added_in_hold or 0) + added
            return
        self._writes += 1
        if self._writes % _PRUNE_EVERY == 0:
            self.prune_logs()
        self.db.wrote(added)

    def prune_logs(self) -> None:
        """Drop change-log entries older than the last ``log_keep`` of each log.

        An index further behind than that finds its log cut (``*_changes`` returns
        None) and rebuilds from the rows, so pruning never loses a change.
        """
        with self.db.tx() as conn:
            for log in ("keyword_log", *self.vectors.logs):
                cut = self.db.log_head(log) - self._log_keep
                if (
                    cut > self.db.pruned(log)
                    and conn.execute(f"DELETE FROM {log} WHERE seq <= ?", (cut,)).rowcount
                ):
                    conn.execute(
                        "INSERT INTO meta (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (f"{log}_pruned", str(cut)),
                    )
