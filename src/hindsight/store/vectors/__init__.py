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

from typing import TYPE_CHECKING, Any

from hindsight.errors import ValidationError
from hindsight.registry import Options, Registry, no_options
from hindsight.store.vectors.base import Hits, Rows, Vector, VectorBackend, VectorFactory

if TYPE_CHECKING:
    from hindsight.config import Settings
    from hindsight.store.db import Database


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
    return lambda db: PgVectors(db, hnsw_threshold=settings.hnsw_threshold, ef=settings.hnsw_ef)


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
