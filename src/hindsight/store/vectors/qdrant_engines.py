"""The two Qdrant engines behind one small interface: in this process or a server.

:class:`EdgeEngine` runs Qdrant's own engine in-process (``qdrant-edge-py``): one shard
a collection, a folder under ``qdrant_path``. What we build on, measured on 0.9:

- point ids are unsigned integers or UUIDs: a point's id is its memory's row key, and
  the memory's id rides in the payload;
- a shard persists to its folder (``edge_config.json``, ``segments/``, ``wal/``) and its
  write-ahead log keeps every acknowledged upsert through a kill -9;
- one process holds a shard's lock at a time: a second open fails at once (the WAL's
  ``WouldBlock``), which :func:`_edge_open` turns into a message naming the way out;
- HNSW is built only by an explicit ``optimize()``, which blocks the process (it holds
  the GIL): :class:`~hindsight.store.vectors.qdrant.QdrantVectors` decides when.

:class:`ClientEngine` talks to a Qdrant server (``qdrant-client``), which indexes and
optimises by itself. Either is opened for one collection and dimension, and raises
:class:`~hindsight.errors.VectorsUnavailableError` when it cannot be used.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hindsight.errors import MissingExtraError, VectorsUnavailableError

if TYPE_CHECKING:
    import qdrant_edge
    from qdrant_client import QdrantClient

Point = tuple[int, list[float], dict[str, Any]]
"""A point as the engines take it: row key, vector, payload."""

# Payload fields the engine indexes, and their types: what a search filters on.
INDEXED = {"owner": "keyword", "namespace": "keyword", "kind": "keyword", "observed_at": "float"}
_PAGE = 1_000


@dataclass(frozen=True, slots=True)
class Where:
    """What a search is restricted to inside the engine: the fields no later write of
    a memory changes (its status may change: the row store checks that)."""

    owners: Sequence[str]
    kinds: Sequence[str] | None = None
    since: float | None = None  # observed_at, seconds since the epoch
    until: float | None = None
    among: Sequence[int] | None = None  # these row keys only


@dataclass(frozen=True, slots=True)
class Hnsw:
    m: int = 16
    ef_construct: int = 100


class Engine(Protocol):
    """One collection of one Qdrant engine."""

    def upsert(self, points: Sequence[Point]) -> None: ...

    def delete(self, keys: Sequence[int]) -> None: ...

    def search(
        self, vector: list[float], limit: int, where: Where, ef: int
    ) -> list[tuple[int, float]]:
        """Row keys and cosine similarities, best first."""
        ...

    def keys(self, owner: str | None = None) -> Iterator[int]:
        """Every point's row key (of one owner)."""
        ...

    def count(self, owner: str | None = None) -> int: ...

    def unindexed(self) -> int:
        """Points not yet in an HNSW index that the engine would not build by itself."""
        ...

    def optimize(self) -> bool:
        """Build what the engine's index lacks, now; whether anything was done."""
        ...

    def close(self) -> None: ...


# -- in this process: qdrant-edge ---------------------------------------------------
def _edge() -> Any:
    try:
        import qdrant_edge
    except ImportError:
        raise MissingExtraError("qdrant", "qdrant-edge-py") from None
    return qdrant_edge


def _edge_open(path: Path, dimension: int, hnsw: Hnsw) -> tuple[qdrant_edge.EdgeShard, bool]:
    """The shard at ``path`` (made when missing), and whether it was made now."""
    q = _edge()
    config = q.EdgeConfig(
        vectors=q.EdgeVectorParams(size=dimension, distance=q.Distance.Cosine),
        hnsw_config=q.HnswIndexConfig(
            m=hnsw.m, ef_construct=hnsw.ef_construct, full_scan_threshold=10_000
        ),
    )
    made = not (path / "edge_config.json").exists()
    try:
        shard = q.EdgeShard.create(str(path), config) if made else q.EdgeShard.load(str(path))
    except Exception as exc:  # the engine raises plain Exception; kept as the cause
        if "WouldBlock" in str(exc):
            raise VectorsUnavailableError(
                f"the Qdrant shard {path} is open in another process (a running hindsight "
                "server?): one process at a time may open it. Stop that process, go "
                "through its API, or keep vectors on a Qdrant server "
                "(HINDSIGHT_VECTOR_BACKEND=qdrant)"
            ) from exc
        raise VectorsUnavailableError(f"cannot open the Qdrant shard {path}: {exc}") from exc
    if made:
        for field, kind in INDEXED.items():
            schema = q.PayloadSchemaType.Keyword if kind == "keyword" else q.PayloadSchemaType.Float
            shard.update(q.UpdateOperation.create_field_index(field, schema))
    return shard, made


class EdgeEngine:
    """A collection as a qdrant-edge shard in this process."""

    def __init__(self, path: Path, dimension: int, *, hnsw: Hnsw) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._q = _edge()
        self._shard, self.made = _edge_open(path, dimension, hnsw)

    def _filter(self, where: Where) -> Any:
        q = self._q
        must: list[Any] = [q.FieldCondition("owner", match=q.MatchAny(list(where.owners)))]
        if where.kinds:
            must.append(q.FieldCondition("kind", match=q.MatchAny(list(where.kinds))))
        if where.since is not None or where.until is not None:
            span = q.RangeFloat(gte=where.since, lte=where.until)
            must.append(q.FieldCondition("observed_at", range=span))
        if where.among is not None:
            must.append(q.HasIdCondition(set(where.among)))
        return q.Filter(must=must)

    def _owner(self, owner: str | None) -> Any:
        q = self._q
        if owner is None:
            return None
        return q.Filter(must=[q.FieldCondition("owner", match=q.MatchAny([owner]))])

    def upsert(self, points: Sequence[Point]) -> None:
        q = self._q
        self._shard.update(
            q.UpdateOperation.upsert_points([q.Point(k, v, p) for k, v, p in points])
        )

    def delete(self, keys: Sequence[int]) -> None:
        self._shard.update(self._q.UpdateOperation.delete_points(list(keys)))

    def search(
        self, vector: list[float], limit: int, where: Where, ef: int
    ) -> list[tuple[int, float]]:
        q = self._q
        found = self._shard.query(
            q.QueryRequest(
                limit=limit,
                query=q.Query.Nearest(vector),
                filter=self._filter(where),
                params=q.SearchParams(hnsw_ef=ef),
            )
        )
        return [(int(p.id), float(p.score)) for p in found]

    def keys(self, owner: str | None = None) -> Iterator[int]:
        q = self._q
        offset = None
        while True:
            records, offset = self._shard.scroll(
                q.ScrollRequest(
                    offset=offset,
                    limit=_PAGE,
                    filter=self._owner(owner),
                    with_payload=False,
                    with_vector=False,
                )
            )
            yield from (int(r.id) for r in records)
            if offset is None:
                return

    def count(self, owner: str | None = None) -> int:
        return int(self._shard.count(self._q.CountRequest(exact=True, filter=self._owner(owner))))

    def unindexed(self) -> int:
        info = self._shard.info()
        return max(0, int(info.points_count) - int(info.indexed_vectors_count))

    def optimize(self) -> bool:
        return bool(self._shard.optimize())

    def close(self) -> None:
        self._shard.close()


# -- a Qdrant server: qdrant-client -------------------------------------------------
class ClientEngine:
    """A collection on a Qdrant server. Fails at open when the server cannot be reached:
    never a silent fall-back to anything else."""

    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        dimension: int,
        *,
        hnsw: Hnsw,
        where: str = "the Qdrant server",
    ) -> None:
        from qdrant_client import models

        self._m = models
        self._client = client
        self._name = collection
        self._where = where
        with self._calling("open"):
            self.made = not client.collection_exists(collection)
            if self.made:
                client.create_collection(
                    collection,
                    vectors_config=models.VectorParams(
                        size=dimension, distance=models.Distance.COSINE
                    ),
                    hnsw_config=models.HnswConfigDiff(m=hnsw.m, ef_construct=hnsw.ef_construct),
                )
                for field, kind in INDEXED.items():
                    schema = (
                        models.PayloadSchemaType.KEYWORD
                        if kind == "keyword"
                        else models.PayloadSchemaType.FLOAT
                    )
                    client.create_payload_index(collection, field, field_schema=schema)
            else:
                size = client.get_collection(collection).config.params.vectors
                held = getattr(size, "size", None)
                if held is not None and held != dimension:
                    raise VectorsUnavailableError(
                        f"Qdrant collection {collection!r} holds {held}-d vectors, not "
                        f"{dimension}-d"
                    )

    @classmethod
    def connect(
        cls,
        url: str,
        collection: str,
        dimension: int,
        *,
        api_key: str | None,
        timeout: float,
        hnsw: Hnsw,
    ) -> ClientEngine:
        try:
            from qdrant_client import QdrantClient
        except ImportError:
            raise MissingExtraError("qdrant", "qdrant-client") from None
        client = QdrantClient(
            url=url,
            api_key=api_key,
            timeout=max(1, round(timeout)),
            check_compatibility=False,  # its own thread; open's first call finds out
        )
        return cls(client, collection, dimension, hnsw=hnsw, where=f"Qdrant at {url}")

    @contextmanager
    def _calling(self, what: str) -> Iterator[None]:
        """Turns the client's transport and API errors into VectorsUnavailableError."""
        from qdrant_client.http.exceptions import ApiException

        try:
            yield
        except (ApiException, OSError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise VectorsUnavailableError(f"{self._where} failed to {what}: {first}") from exc

    def _filter(self, where: Where) -> Any:
        m = self._m
        must: list[Any] = [m.FieldCondition(key="owner", match=m.MatchAny(any=list(where.owners)))]
        if where.kinds:
            must.append(m.FieldCondition(key="kind", match=m.MatchAny(any=list(where.kinds))))
        if where.since is not None or where.until is not None:
            span = m.Range(gte=where.since, lte=where.until)
            must.append(m.FieldCondition(key="observed_at", range=span))
        if where.among is not None:
            must.append(m.HasIdCondition(has_id=list(where.among)))
        return m.Filter(must=must)

    def _owner(self, owner: str | None) -> Any:
        m = self._m
        if owner is None:
            return None
        return m.Filter(must=[m.FieldCondition(key="owner", match=m.MatchAny(any=[owner]))])

    def upsert(self, points: Sequence[Point]) -> None:
        m = self._m
        with self._calling("write vectors"):
            self._client.upsert(
                self._name,
                points=[m.PointStruct(id=k, vector=v, payload=p) for k, v, p in points],
                wait=True,
            )

    def delete(self, keys: Sequence[int]) -> None:
        with self._calling("delete vectors"):
            self._client.delete(
                self._name, points_selector=self._m.PointIdsList(points=list(keys)), wait=True
            )

    def search(
        self, vector: list[float], limit: int, where: Where, ef: int
    ) -> list[tuple[int, float]]:
        with self._calling("search"):
            found = self._client.query_points(
                self._name,
                query=vector,
                query_filter=self._filter(where),
                limit=limit,
                search_params=self._m.SearchParams(hnsw_ef=ef),
            ).points
        return [(int(p.id), float(p.score)) for p in found]

    def keys(self, owner: str | None = None) -> Iterator[int]:
        offset: Any = None
        while True:
            with self._calling("list vectors"):
                records, offset = self._client.scroll(
                    self._name,
                    scroll_filter=self._owner(owner),
                    limit=_PAGE,
                    offset=offset,
                    with_payload=False,
                    with_vectors=False,
                )
            yield from (int(r.id) for r in records)
            if offset is None:
                return

    def count(self, owner: str | None = None) -> int:
        with self._calling("count vectors"):
            return int(
                self._client.count(self._name, count_filter=self._owner(owner), exact=True).count
            )

    def unindexed(self) -> int:
        return 0  # a server indexes by itself

    def optimize(self) -> bool:
        return False  # a server optimises by itself

    def close(self) -> None:
        self._client.close()
