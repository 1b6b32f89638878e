"""Where a SQL store keeps its vectors and how it searches them: the vector seam.

A :class:`VectorBackend` writes vectors inside the store's own transactions (a failed
write leaves neither memories nor vectors) and finds the nearest ones. Four are built
in, registered by name in :data:`vector_backends`:

- ``local`` (:mod:`.local`): rows in SQLite's ``vectors`` table and ``vector_log``,
  searched by an index in this process (:mod:`.index`): exact below ``hnsw_threshold``
  vectors an owner, usearch HNSW above;
- ``pgvector`` (:mod:`.pgvector`): a pgvector column searched by PostgreSQL;
- ``qdrant`` and ``qdrant-edge`` (:mod:`.qdrant`): the rows and an outbox in the
  store's database, searched by a Qdrant server or by Qdrant's engine in this process.

``open_store`` takes the one ``HINDSIGHT_VECTOR_BACKEND`` names; ``auto`` (the
default) is the one its database fits (:attr:`Database.vector_backend`). A plugin adds
one as an entry point ``vectors.<name>`` in the group ``hindsight.plugins``: a factory
``(settings, options) -> (database -> VectorBackend)``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from hindsight.errors import EmbeddingMismatchError, StoreError, ValidationError
from hindsight.registry import Options, Registry, no_options

if TYPE_CHECKING:
    from hindsight.config import Settings
    from hindsight.store.base import Filter
    from hindsight.store.db import Connection, Database

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


def _local(settings: Settings, options: Options) -> VectorFactory:
    from hindsight.store.vectors.local import LocalVectors

    no_options("vector backend", "local", options)
    return lambda db: LocalVectors(
        db,
        directory=settings.index_dir,
        hnsw_threshold=settings.hnsw_threshold,
        max_vectors=settings.vector_cache_vectors,
    )


def _pgvector(settings: Settings, options: Options) -> VectorFactory:
    from hindsight.store.vectors.pgvector import PgVectors

    no_options("vector backend", "pgvector", options)
    return lambda db: PgVectors(db, hnsw_threshold=settings.hnsw_threshold)


def _hnsw(settings: Settings) -> Any:
    from hindsight.store.vectors.qdrant_engines import Hnsw

    return Hnsw(m=settings.qdrant_hnsw_m, ef_construct=settings.qdrant_hnsw_ef_construct)


def _qdrant(settings: Settings, options: Options) -> VectorFactory:
    from hindsight.store.vectors.qdrant import QdrantVectors
    from hindsight.store.vectors.qdrant_engines import ClientEngine

    no_options("vector backend", "qdrant", options)
    url = settings.qdrant_url
    if url is None:
        raise ValidationError(
            "HINDSIGHT_VECTOR_BACKEND=qdrant needs HINDSIGHT_QDRANT_URL (http://host:6333)"
        )
    hnsw = _hnsw(settings)

    def connect(collection: str, dimension: int) -> ClientEngine:
        return ClientEngine.connect(
            url,
            collection,
            dimension,
            api_key=settings.qdrant_api_key,
            timeout=settings.qdrant_timeout_seconds,
            hnsw=hnsw,
        )

    return lambda db: QdrantVectors(
        db,
        connect,
        prefix=settings.qdrant_collection,
        ef=settings.hnsw_ef,
        optimize_after=0,  # a server indexes by itself
    )


def _qdrant_edge(settings: Settings, options: Options) -> VectorFactory:
    from hindsight.store.vectors.qdrant import QdrantVectors
    from hindsight.store.vectors.qdrant_engines import EdgeEngine

    no_options("vector backend", "qdrant-edge", options)
    hnsw = _hnsw(settings)
    root = settings.qdrant_dir

    def connect(collection: str, dimension: int) -> EdgeEngine:
        return EdgeEngine(root / collection, dimension, hnsw=hnsw)

    return lambda db: QdrantVectors(
        db,
        connect,
        prefix=settings.qdrant_collection,
        ef=settings.hnsw_ef,
        optimize_after=settings.qdrant_optimize_after,
    )


# A backend is made in two steps: the registry's factory reads the settings, and what
# it returns is bound to the store's database by ``open_store``.
vector_backends: Registry[VectorFactory] = Registry("vectors", "vector backend")
vector_backends.register("local", _local)
vector_backends.register("pgvector", _pgvector)
vector_backends.register("qdrant", _qdrant)
vector_backends.register("qdrant-edge", _qdrant_edge)


def backend_name(settings: Settings, database: Database) -> str:
    """The backend ``settings.vector_backend`` names (``auto``: the database's own);
    an unknown name is a :class:`~hindsight.errors.ValidationError` naming the valid ones."""
    name = settings.vector_backend
    if name == "auto":
        return database.vector_backend
    known = vector_backends.names()
    if name not in known:
        raise ValidationError(
            f"unknown HINDSIGHT_VECTOR_BACKEND {name!r}; valid: {', '.join(['auto', *known])}"
        )
    return name


__all__ = [
    "Hits",
    "Rows",
    "Vector",
    "VectorBackend",
    "VectorFactory",
    "backend_name",
    "vector_backends",
]
