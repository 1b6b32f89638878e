"""Per-owner vector index: a cache of the store's vectors, kept in step by its change log.

The store (SQLite) is the source of truth. Every vector add or removal there gets a
monotonically increasing ``seq`` in a change log shared by the whole database. For each
owner this module holds either an exact numpy matrix (small owners: one matmul) or a
usearch HNSW graph (owners with ``hnsw_threshold`` vectors or more), remembers the seq it
reflects, and before each search replays whatever the log gained since. That is how a
process sees the writes of another one, and how it recovers after a crash.

HNSW graphs are expensive to rebuild, so they are persisted. On-disk format, per owner,
in ``directory`` (``<name>`` = first 32 hex digits of sha256 of the owner, UTF-8):

- ``<name>.usearch``: the usearch index as ``Index.save`` writes it.
- ``<name>.json``: the sidecar ``{"format", "owner", "dimension", "dtype",
  "connectivity", "seq", "count", "size", "sha256"}``; ``seq`` is the log position the
  index reflects, ``size`` and ``sha256`` describe the ``.usearch`` file's bytes.

Both are written to a temporary name and moved in place with ``os.replace``, the index
first. The sidecar is trusted only if the index file matches its size and digest, so a
crash between the two moves, or two processes saving at once, leads to a rebuild, never
to a wrongly trusted index. A sidecar whose seq is ahead of the log (the database was
replaced by an older copy) also leads to a rebuild.

Exact owners of ``save_min_vectors`` vectors or more are saved too, so that a new
process (a restart, or an owner let go and searched again) reads one file instead of
every row: ``<name>.vectors``, one line of UTF-8 JSON ``{"format", "owner",
"dimension", "seq", "count", "crc32"}`` then ``count`` keys (little-endian int64) and
``count`` rows of ``dimension`` little-endian float32s, ``crc32`` being zlib's of those
bytes (a torn or changed file fails it). One of another owner or dimension, of the
wrong length, with a key twice or ahead of the log is ignored and the owner rebuilt
from the store. A rebuild removes the file (it may be one of another
database), and a forget removes it (it holds the forgotten vectors); the next flush
writes it again from what the index holds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from hindsight.errors import EmbeddingMismatchError, ValidationError
from hindsight.store import files
from hindsight.store.owners import Owners

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Sequence

__all__ = ["Change", "VectorIndex", "VectorSource"]

FORMAT_VERSION = 1

Change = tuple[int, int, npt.NDArray[np.float32] | None]
"""One log entry: (seq, key, vector), the vector being None for a removal."""

# HNSW parameters (measured: BENCHMARKS.md, "The figures behind the constants"): f16
# halves memory and build time against f32 for the same recall; connectivity 16 is
# usearch's default; a larger expansion_add doubles the build for nothing; expansion_search
# 128, as 64 left a query in hundreds with nothing found under f16. A search for k
# explores 2k (at least 128): the store asks for twice what it keeps.
_HNSW_DTYPE = "f16"
_HNSW_CONNECTIVITY = 16
_HNSW_EXPANSION_ADD = 64
_HNSW_EXPANSION_SEARCH = 128
_SNAPSHOT_PAGE = 4_096  # vectors read from the store at a time when rebuilding
# Exact owners this big or bigger are saved: reading their vectors row by row from the
# database costs a first recall several times what reading the file does.
SAVE_MIN_VECTORS = 100

Keys = npt.NDArray[np.int64]
Vectors = npt.NDArray[np.float32]


class VectorSource(Protocol):
    """What the index needs from the store; methods may be called from several threads."""

    def vector_snapshot(self, owner: str, after_key: int, limit: int) -> tuple[Keys, Vectors]:
        """Up to `limit` live keys (> `after_key`, ascending) of `owner`, with their vectors.

        Pages need not come from one consistent read: the index takes the log's head
        before the first page and replays every change after it, so a row written or
        removed meanwhile ends up right either way.
        """
        ...

    def vector_changes(self, owner: str, after_seq: int) -> tuple[list[Change], int] | None:
        """Changes of `owner` with seq > after_seq in seq order, and the current max seq.

        None if the log no longer reaches back to after_seq: the caller must rebuild.
        """
        ...

    def vector_log_head(self) -> int:
        """Current max seq of the log (a cheap query)."""
        ...


class _ExactIndex:
    """A dense key/vector matrix; removal moves the last row into the hole."""

    def __init__(self, dimension: int, keys: Keys, vectors: Vectors) -> None:
        self._dimension = dimension
        capacity = max(64, len(keys))
        self._keys = np.empty(capacity, dtype=np.int64)
        self._vectors = np.empty((capacity, dimension), dtype=np.float32)
        self._row_of: dict[int, int] = {}
        self._count = 0
        self.upsert(keys, vectors)

    @classmethod
    def adopt(cls, dimension: int, keys: Keys, vectors: Vectors) -> _ExactIndex:
        """An index over these writable arrays of distinct keys, used as they are (a
        loaded file's: no copy); the first row added past them moves it to new arrays."""
        index = cls(dimension, keys[:0], vectors[:0])
        index._keys, index._vectors, index._count = keys, vectors, len(keys)
        index._row_of = dict(zip(keys.tolist(), range(len(keys)), strict=True))
        return index

    def __len__(self) -> int:
        return self._count

    def items(self) -> tuple[Keys, Vectors]:
        return self._keys[: self._count].copy(), self._vectors[: self._count].copy()

    def upsert(self, keys: Keys, vectors: Vectors) -> None:
        self._reserve(self._count + len(keys))
        listed = keys.tolist()
        if self._row_of.keys().isdisjoint(listed) and len(set(listed)) == len(listed):
            # All new (a rebuild's pages, a loaded file): one copy, no loop over rows.
            start, end = self._count, self._count + len(listed)
            self._keys[start:end] = keys
            self._vectors[start:end] = vectors
            self._row_of.update(zip(listed, range(start, end), strict=True))
            self._count = end
            return
        for key, vector in zip(listed, vectors, strict=True):
            row = self._row_of.get(key)
            if row is None:
                row = self._count
                self._count += 1
                self._row_of[key] = row
                self._keys[row] = key
            self._vectors[row] = vector

    def remove(self, keys: Iterable[int]) -> None:
        for key in keys:
            row = self._row_of.pop(key, None)
            if row is None:
                continue
            last = self._count - 1
            if row != last:
                moved = int(self._keys[last])
                self._keys[row] = moved
                self._vectors[row] = self._vectors[last]
                self._row_of[moved] = row
            self._count = last

    def search(
        self, query: Vectors, k: int, among: Collection[int] | None = None
    ) -> list[tuple[int, float]]:
        if among is None:
            keys, scores = self._keys[: self._count], self._vectors[: self._count] @ query
        else:
            known = (row for key in among if (row := self._row_of.get(key)) is not None)
            rows = np.unique(np.fromiter(known, np.int64))  # in row order, as above
            keys, scores = self._keys[rows], self._vectors[rows] @ query
        return _best(keys, scores, k)

    def _reserve(self, needed: int) -> None:
        capacity = len(self._keys)
        if needed <= capacity:
            return
        capacity = max(needed, capacity * 2)
        keys = np.empty(capacity, dtype=np.int64)
        vectors = np.empty((capacity, self._dimension), dtype=np.float32)
        keys[: self._count] = self._keys[: self._count]
        vectors[: self._count] = self._vectors[: self._count]
        self._keys, self._vectors = keys, vectors


class _HnswIndex:
    """A usearch HNSW graph with inner-product metric."""

    def __init__(self, index: Any) -> None:
        self._index = index

    @classmethod
    def empty(cls, dimension: int) -> _HnswIndex:
        # usearch's extension, once loaded, makes a later `import onnxruntime` segfault
        # (usearch 2.26, onnxruntime 1.32); the other order is fine.
        with contextlib.suppress(ImportError):
            import onnxruntime  # noqa: F401
        from usearch.index import Index

        return cls(
            Index(
                ndim=dimension,
                metric="ip",
                dtype=_HNSW_DTYPE,
                connectivity=_HNSW_CONNECTIVITY,
                expansion_add=_HNSW_EXPANSION_ADD,
                expansion_search=_HNSW_EXPANSION_SEARCH,
            )
        )

    @classmethod
    def from_file(cls, dimension: int, path: Path) -> _HnswIndex:
        """Load a saved graph; raises ValueError if it is not one of `dimension`."""
        hnsw = cls.empty(dimension)
        try:
            hnsw._index.load(str(path))
        except RuntimeError as exc:  # usearch reports malformed input this way
            raise ValueError(f"unreadable usearch index: {exc}") from exc
        if hnsw._index.ndim != dimension:
            raise ValueError(f"index has dimension {hnsw._index.ndim}, expected {dimension}")
        hnsw._index.expansion_search = _HNSW_EXPANSION_SEARCH
        return hnsw

    def to_file(self, path: Path) -> None:
        self._index.save(str(path))

    def __len__(self) -> int:
        return len(self._index)

    def upsert(self, keys: Keys, vectors: Vectors) -> None:
        if len(keys) == 0:
            return
        present = np.asarray(self._index.contains(keys), dtype=bool).reshape(-1)
        if present.any():
            self._index.remove(keys[present])
        # One thread: usearch's parallel insertion left vectors unreachable now and
        # then (an exact match missing from the top 10 in about one test run in four).
        self._index.add(keys, vectors, threads=1)

    def remove(self, keys: Sequence[int]) -> None:
        if keys:
            self._index.remove(np.asarray(keys, dtype=np.int64))

    def search(
        self, query: Vectors, k: int, among: Collection[int] | None = None
    ) -> list[tuple[int, float]]:
        if among is not None:  # a few keys: their own vectors, compared exactly
            keys = np.unique(np.fromiter(among, np.int64))
            keys = keys[np.asarray(self._index.contains(keys), dtype=bool).reshape(-1)]
            found = self._index.get(keys, dtype=np.float32)
            vectors = np.array(found, dtype=np.float32).reshape(len(keys), self._index.ndim)
            return _best(keys, vectors @ query, k)
        if len(self._index) == 0:
            return []
        self._index.expansion_search = max(_HNSW_EXPANSION_SEARCH, 2 * k)
        matches = self._index.search(query, k, threads=1)
        keys = matches.keys.astype(np.int64).tolist()
        similarities = (1.0 - matches.distances.astype(np.float64)).tolist()
        return list(zip(keys, similarities, strict=True))


@dataclass(eq=False)
class _Owner:
    name: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    backend: _ExactIndex | _HnswIndex | None = None
    applied_seq: int = 0
    # Persistence state of HNSW owners: what the files on disk hold, as far as we know.
    dirty: bool = False  # contents changed since last save or load
    saved_seq: int | None = None
    saved_size: int = 0
    saved_digest: str = ""
    dropped: bool = False


class VectorIndex:
    """Per-owner nearest-neighbour search over the vectors of a `VectorSource`.

    Vectors are float32 and unit-length; similarity is the inner product. Thread-safe:
    one lock per owner, so different owners are searched in parallel. At most
    ``max_vectors`` vectors stay in memory over all owners: past that the owners searched
    longest ago are let go (saved first when worth a file: see the module's docstring)
    and loaded or rebuilt when next searched.
    """

    def __init__(
        self,
        source: VectorSource,
        dimension: int,
        *,
        directory: Path | None,
        hnsw_threshold: int = 20_000,
        max_vectors: int | None = None,
        save_min_vectors: int | None = None,
    ) -> None:
        if dimension <= 0:
            raise ValidationError(f"dimension must be positive, got {dimension}")
        if hnsw_threshold <= 0:
            raise ValidationError(f"hnsw_threshold must be positive, got {hnsw_threshold}")
        self._source = source
        self._dimension = dimension
        self._directory = directory
        self._threshold = hnsw_threshold
        self._save_min = SAVE_MIN_VECTORS if save_min_vectors is None else save_min_vectors
        self._owners = Owners(_Owner, max_vectors)
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    @property
    def dimension(self) -> int:
        return self._dimension

    def search(
        self, owner: str, query: Vectors, k: int, among: Collection[int] | None = None
    ) -> list[tuple[int, float]]:
        """The `k` keys of `owner` most similar to `query`, with similarities, best first;
        only of the keys `among` when given (exactly, whatever the index)."""
        vector = np.asarray(query, dtype=np.float32)
        if vector.shape != (self._dimension,):
            raise ValidationError(f"query must have shape ({self._dimension},), got {vector.shape}")
        if k <= 0:
            return []
        entry = self._owners.get(owner)
        with entry.lock:
            backend = self._ready(entry)
            found, size = backend.search(vector, k, among), len(backend)
        self._trim(owner, entry, size)
        return found

    def count(self, owner: str) -> int:
        """How many vectors `owner` has, after catching up with the log."""
        entry = self._owners.get(owner)
        with entry.lock:
            size = len(self._ready(entry))
        self._trim(owner, entry, size)  # held now: counted against the cache's size
        return size

    def size(self, owner: str) -> int | None:
        """``owner``'s vectors when last used, without loading; None if not held."""
        return self._owners.size(owner)

    def is_hnsw(self, owner: str) -> bool:
        """Whether `owner` is served by an HNSW graph (rather than exact search)."""
        entry = self._owners.get(owner)
        with entry.lock:
            return isinstance(self._ready(entry), _HnswIndex)

    def save(self, owner: str) -> None:
        """Persist `owner`'s index, if a directory was given and it is worth a file."""
        entry = self._owners.peek(owner)
        if entry is not None:
            with entry.lock:
                self._save(entry)

    def flush(self) -> None:
        """Persist every held index worth a file that changed since it was last saved."""
        for _, entry in self._owners.items():
            with entry.lock:
                self._save(entry)

    def drop(self, owner: str) -> None:
        """Forget `owner`: in memory and on disk. The store's rows are not touched."""
        entry = self._owners.pop(owner)
        if entry is not None:
            with entry.lock:
                entry.dropped = True
                entry.backend = None
        self._remove_files(owner)

    def drop_saved(self, owner: str) -> None:
        """Remove `owner`'s saved exact index (it holds vectors that were forgotten);
        the next flush writes it again from what is held."""
        entry = self._owners.peek(owner)
        if entry is not None:
            with entry.lock:
                entry.dirty = entry.dirty or entry.backend is not None
        self._unlink_exact(owner)

    def close(self) -> None:
        """Flush and release all owners."""
        self.flush()
        self._owners.clear()

    def __enter__(self) -> VectorIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- loading and catching up -------------------------------------------------------

    def _trim(self, owner: str, used: _Owner, size: int) -> None:
        """Let owners go, least recently used first, until the vectors held fit."""
        for _, entry in self._owners.used(owner, used, size):
            with entry.lock:
                self._save(entry)  # if it changed and is worth a file
                entry.backend = None

    def _ready(self, entry: _Owner) -> _ExactIndex | _HnswIndex:
        """The owner's backend, loaded and caught up with the log. Call under its lock."""
        if entry.backend is None and not (self._load(entry) or self._load_exact(entry)):
            self._rebuild(entry)
        head = self._source.vector_log_head()
        if head < entry.applied_seq:
            # The log went backwards: the database is not the one this state came from.
            self._rebuild(entry)
        elif head > entry.applied_seq:
            result = self._source.vector_changes(entry.name, entry.applied_seq)
            if result is None:
                self._rebuild(entry)
            else:
                changes, new_head = result
                self._apply(entry, changes)
                entry.applied_seq = new_head
        assert entry.backend is not None
        return entry.backend

    def _rebuild(self, entry: _Owner) -> None:
        """Build the owner's index from the store a page at a time (memory: one page)."""
        head = self._source.vector_log_head()  # first: later changes are replayed from the log
        entry.backend = None  # free the old one before building the new one
        backend: _ExactIndex | _HnswIndex = _ExactIndex(
            self._dimension,
            np.empty(0, dtype=np.int64),
            np.empty((0, self._dimension), dtype=np.float32),
        )
        after = 0
        while True:
            keys, vectors = self._source.vector_snapshot(entry.name, after, _SNAPSHOT_PAGE)
            keys = np.asarray(keys, dtype=np.int64).reshape(-1)
            if not len(keys):
                break
            vectors = self._checked(np.asarray(vectors, dtype=np.float32), len(keys))
            if isinstance(backend, _ExactIndex) and len(backend) + len(keys) >= self._threshold:
                hnsw = _HnswIndex.empty(self._dimension)
                hnsw.upsert(*backend.items())
                backend = hnsw
            backend.upsert(keys, vectors)
            after = int(keys[-1])
        entry.backend = backend
        entry.dirty = True  # saved when flushed or let go, if worth a file
        # A file left may be stale, torn or of another database: never load it again.
        self._unlink_exact(entry.name)
        if isinstance(backend, _ExactIndex):
            entry.saved_seq = None
            self._remove_files(entry.name)
        entry.applied_seq = head

    def _apply(self, entry: _Owner, changes: Sequence[Change]) -> None:
        """Apply log entries (in seq order); only each key's last entry matters."""
        if not changes:
            return
        final: dict[int, Vectors | None] = {}
        for _seq, key, vector in changes:
            final[int(key)] = vector
        removed = [key for key, vector in final.items() if vector is None]
        added = [(key, vector) for key, vector in final.items() if vector is not None]
        backend = entry.backend
        assert backend is not None
        backend.remove(removed)
        if added:
            keys = np.fromiter((key for key, _ in added), dtype=np.int64, count=len(added))
            try:
                stacked = np.stack([np.asarray(v, dtype=np.float32) for _, v in added])
            except ValueError as exc:
                raise EmbeddingMismatchError(f"the store returned ragged vectors: {exc}") from exc
            vectors = self._checked(stacked, len(added))
            backend.upsert(keys, vectors)
        entry.dirty = True
        if isinstance(backend, _ExactIndex) and len(backend) >= self._threshold:
            hnsw = _HnswIndex.empty(self._dimension)
            hnsw.upsert(*backend.items())
            entry.backend = hnsw

    def _checked(self, vectors: Vectors, count: int) -> Vectors:
        if vectors.shape != (count, self._dimension) and not (count == 0 and vectors.size == 0):
            raise EmbeddingMismatchError(
                f"the store returned vectors of shape {vectors.shape}, "
                f"expected ({count}, {self._dimension})"
            )
        return vectors.reshape(count, self._dimension)

    # -- persistence -------------------------------------------------------------------

    def _paths(self, owner: str) -> tuple[Path, Path]:
        assert self._directory is not None
        name = hashlib.sha256(owner.encode("utf-8")).hexdigest()[:32]
        return self._directory / f"{name}.usearch", self._directory / f"{name}.json"

    def _load(self, entry: _Owner) -> bool:
        """Load the owner's saved graph if its sidecar vouches for it; False otherwise."""
        if self._directory is None:
            return False
        index_path, sidecar_path = self._paths(entry.name)
        try:
            meta = json.loads(sidecar_path.read_text(encoding="utf-8"))
            if not self._sidecar_matches(meta, entry.name):
                return False
            # Files are only ever replaced whole (os.replace), never changed in place:
            # the inode hashed is the one loaded if the path still names it afterwards.
            with open(index_path, "rb") as file:
                inode = os.fstat(file.fileno()).st_ino
                size, sha = files.digest(file)
                if size != meta["size"] or sha != meta["sha256"]:
                    return False
                hnsw = _HnswIndex.from_file(self._dimension, index_path)
                if os.stat(index_path).st_ino != inode:
                    return False  # replaced while we read it: rebuild
        except (OSError, ValueError, KeyError, TypeError):
            return False  # missing, unreadable or torn: rebuild from the store
        if len(hnsw) != meta["count"]:
            return False
        entry.backend = hnsw
        entry.applied_seq = meta["seq"]
        entry.dirty = False
        entry.saved_seq = meta["seq"]
        entry.saved_size = size
        entry.saved_digest = sha
        return True

    def _sidecar_matches(self, meta: object, owner: str) -> bool:
        return (
            isinstance(meta, dict)
            and meta.get("format") == FORMAT_VERSION
            and meta.get("owner") == owner
            and meta.get("dimension") == self._dimension
            and meta.get("dtype") == _HNSW_DTYPE
            and type(meta.get("seq")) is int
            and type(meta.get("count")) is int
            and type(meta.get("size")) is int
            and isinstance(meta.get("sha256"), str)
        )

    def _exact_path(self, owner: str) -> Path:
        return self._paths(owner)[0].with_suffix(".vectors")

    def _unlink_exact(self, owner: str) -> None:
        if self._directory is not None:
            with contextlib.suppress(FileNotFoundError):
                self._exact_path(owner).unlink()

    def _load_exact(self, entry: _Owner) -> bool:
        """Load the owner's saved exact index if it fits this index; False otherwise."""
        if self._directory is None:
            return False
        try:
            with open(self._exact_path(entry.name), "rb") as file:
                data = bytearray(os.fstat(file.fileno()).st_size)  # writable: adopted
                if file.readinto(data) != len(data):
                    return False  # changed while read
        except OSError:
            return False
        found = _read_exact(data, entry.name, self._dimension)
        if found is None or len(found[0]) >= self._threshold:
            return False
        keys, vectors, entry.applied_seq = found
        entry.backend = _ExactIndex.adopt(self._dimension, keys, vectors)
        entry.dirty = False
        entry.saved_seq = None
        return True

    def _save_exact(self, entry: _Owner, backend: _ExactIndex) -> None:
        """Write the owner's exact index, if it changed and is worth a file."""
        if self._directory is None or not entry.dirty or len(backend) < self._save_min:
            return
        keys, vectors = backend.items()
        payload = keys.astype("<i8").tobytes() + vectors.astype("<f4").tobytes()
        meta = {
            "format": FORMAT_VERSION,
            "owner": entry.name,
            "dimension": self._dimension,
            "seq": entry.applied_seq,
            "count": len(keys),
            "crc32": zlib.crc32(payload),
        }
        data = json.dumps(meta).encode("utf-8") + b"\n" + payload
        try:
            files.write_atomically(self._exact_path(entry.name), lambda p: p.write_bytes(data))
        except OSError:
            return  # a cache: the next process rebuilds
        entry.dirty = False

    def _save(self, entry: _Owner) -> None:
        """Write the owner's index: an HNSW graph and its sidecar, or an exact index
        worth a file. Call under its lock."""
        backend = entry.backend
        if self._directory is None or entry.dropped or backend is None:
            return
        if isinstance(backend, _ExactIndex) and entry.dirty:
            backend = self._ready(entry)  # caught up: what was forgotten is not written
        if isinstance(backend, _ExactIndex):
            self._save_exact(entry, backend)
            return
        if not entry.dirty and entry.saved_seq == entry.applied_seq:
            return
        index_path, sidecar_path = self._paths(entry.name)
        if entry.dirty or entry.saved_seq is None:
            written: list[tuple[int, str]] = []

            def write(path: Path) -> None:  # the graph, and the digest its sidecar keeps
                backend.to_file(path)
                with open(path, "rb") as file:
                    written.append(files.digest(file))

            files.write_atomically(index_path, write)
            entry.saved_size, entry.saved_digest = written[0]
        # else: only other owners' changes moved the log; the graph on disk still holds.
        meta = {
            "format": FORMAT_VERSION,
            "owner": entry.name,
            "dimension": self._dimension,
            "dtype": _HNSW_DTYPE,
            "connectivity": _HNSW_CONNECTIVITY,
            "seq": entry.applied_seq,
            "count": len(backend),
            "size": entry.saved_size,
            "sha256": entry.saved_digest,
        }
        sidecar = json.dumps(meta, sort_keys=True).encode("utf-8")
        files.write_atomically(sidecar_path, lambda path: path.write_bytes(sidecar))
        entry.dirty = False
        entry.saved_seq = entry.applied_seq
        self._unlink_exact(entry.name)  # it grew into a graph: the matrix is stale

    def _remove_files(self, owner: str) -> None:
        if self._directory is None:
            return
        index_path, sidecar_path = self._paths(owner)
        self._unlink_exact(owner)
        for path in (sidecar_path, index_path):  # sidecar first: never one without its index
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def _best(keys: Keys, scores: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
    """The ``k`` best-scored keys, best first."""
    if k < len(scores):
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
    else:
        top = np.argsort(-scores, kind="stable")
    return list(zip(keys[top].tolist(), scores[top].tolist(), strict=True))


def _read_exact(data: bytearray, owner: str, dimension: int) -> tuple[Keys, Vectors, int] | None:
    """Keys, vectors and log position of a saved exact index of `owner` and `dimension`;
    None if the bytes are not one (torn, changed, of another owner or dimension)."""
    cut = data.find(b"\n")
    try:
        meta = json.loads(data[:cut]) if cut > 0 else None
    except ValueError:
        return None
    if not (
        isinstance(meta, dict)
        and meta.get("format") == FORMAT_VERSION
        and meta.get("owner") == owner
        and meta.get("dimension") == dimension
        and type(meta.get("seq")) is int
        and type(meta.get("count")) is int
        and meta["count"] >= 0
    ):
        return None
    count, payload = meta["count"], memoryview(data)[cut + 1 :]
    if len(payload) != count * (8 + 4 * dimension) or zlib.crc32(payload) != meta.get("crc32"):
        return None
    # Writable views of the bytes read: the index keeps them as they are (no copy).
    keys = np.frombuffer(payload, dtype="<i8", count=count)
    vectors = np.frombuffer(payload, dtype="<f4", offset=8 * count).reshape(count, dimension)
    if len(np.unique(keys)) != count:
        return None
    return keys, vectors, meta["seq"]
