"""The vector seam's types: a vector, what a backend does (:class:`VectorBackend`), what
it reads of the store (:class:`Rows`, :class:`Hits`), and the check every vector written
passes. The backends (:mod:`.local`, :mod:`.pgvector`, :mod:`.qdrant`) and the registry
(:mod:`hindsight.store.vectors`) build on these."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from hindsight.errors import EmbeddingMismatchError, StoreError

if TYPE_CHECKING:
    from hindsight.store.db import Connection, Database
    from hindsight.store.records import Filter

Vector = npt.NDArray[np.float32]


class Hits(Protocol):
    """An index's search for one query, as :meth:`Rows.within` asks it."""

    def __call__(
        self, n: int, among: Collection[int] | None = None
    ) -> tuple[list[tuple[int, float]], bool]:
        """The index's top ``n`` (row keys, scores, best first), only of the keys
        ``among`` when given, and whether there are no more."""
        ...


class Rows(Protocol):
    """What a search may ask of the store whose rows the vectors belong to."""

    def within(self, flt: Filter, k: int, hits: Hits) -> list[tuple[str, float]]:
        """The best ``k`` of ``hits`` whose memories pass ``flt``, as memory ids."""
        ...

    def known_size(self, owner: str) -> int | None:
        """The owner's memories as last counted in this process (no query); None if
        it has not been."""
        ...


class VectorBackend(Protocol):
    """A SQL store's vectors: one per memory, keyed by the memory's row key."""

    logs: tuple[str, ...]  # change logs of its own, pruned with the store's

    def bind(self, model_id: str, dimension: int) -> None:
        """The store holds vectors of this model and dimension from now on. Called
        again when a re-embedding ends (with the same or a new model)."""
        ...

    def put(self, conn: Connection, key: int, owner: str, model: str, vector: Vector) -> None:
        """Add or replace a vector, in the store's transaction ``conn``."""
        ...

    def drop(self, conn: Connection, key: int, owner: str) -> None:
        """Remove a vector (if any), in the store's transaction ``conn``."""
        ...

    def search(self, flt: Filter, query: Vector, k: int, rows: Rows) -> list[tuple[str, float]]:
        """Memory ids and cosine similarities, best first, within ``flt``.

        A backend that searches by owner gives ``rows.within`` its hits, and the store
        applies the rest of the filter; one that filters in the database does it all.
        """
        ...

    def forgot(self, owners: Collection[str]) -> set[str]:
        """Memories of these owners were deleted (and committed): drop what caches and
        files hold of those with no vector left, and return them."""
        ...

    def count(self, owner: str | None = None) -> int:
        """Vectors held, of one owner or of all."""
        ...

    def warm(self, owner: str) -> None:
        """Make ``owner``'s next search as fast as a warm one (load or build what it
        reads), off the request path; a backend that searches in the database does
        nothing."""
        ...

    def close(self) -> None: ...


VectorFactory = Callable[["Database"], VectorBackend]
"""Makes a backend over a store's database (configured by the settings beforehand)."""


def checked(vector: Vector, dimension: int | None) -> Vector:
    """``vector`` if it fits a store of ``dimension``; refuses anything else."""
    if dimension is None:
        raise StoreError("bind_embedding() must be called before writing vectors")
    if vector.shape != (dimension,):
        raise EmbeddingMismatchError(
            f"vector of shape {vector.shape} does not fit this {dimension}-d store"
        )
    return vector
