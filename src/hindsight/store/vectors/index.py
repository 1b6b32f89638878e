"""Per-owner vector index: a cache of the store's vectors, kept in step by its change log.

The store (SQLite) is the source of truth. Every vector add or removal there gets a
monotonically increasing ``seq`` in a change log shared by the whole database. For each
owner this module holds either an exact numpy matrix (small owners: one matmul) or a
usearch HNSW graph (owners with ``hnsw_threshold`` vectors or more; both:
:mod:`hindsight.store.vectors.nearest`), remembers the seq it reflects, and before each
search replays whatever the log gained since. That is how a process sees the writes of
another one, and how it recovers after a crash.

Graphs, and exact owners of ``save_min_vectors`` vectors or more, are saved to
``directory`` and loaded by the next process instead of rebuilt; the files and what
makes one trusted are :mod:`hindsight.store.vectors.saved`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from hindsight.errors import EmbeddingMismatchError, ValidationError
from hindsight.store.owners import Owners
from hindsight.store.vectors.nearest import ExactIndex, HnswIndex, Keys, Vectors
from hindsight.store.vectors.saved import IndexFiles

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence
    from pathlib import Path

__all__ = ["Change", "VectorIndex", "VectorSource"]

Change = tuple[int, int, npt.NDArray[np.float32] | None]
"""One log entry: (seq, key, vector), the vector being None for a removal."""

_SNAPSHOT_PAGE = 4_096  # vectors read from the store at a time when rebuilding
# Exact owners this big or bigger are saved: reading their vectors row by row from the
# database costs a first recall several times what reading the file does.
SAVE_MIN_VECTORS = 100


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


@dataclass(eq=False)
class _Owner:
    name: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    backend: ExactIndex | HnswIndex | None = None
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
        self._files = None if directory is None else IndexFiles(directory, dimension)
        self._threshold = hnsw_threshold
        self._save_min = SAVE_MIN_VECTORS if save_min_vectors is None else save_min_vectors
        self._owners = Owners(_Owner, max_vectors)

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
            return isinstance(self._ready(entry), HnswIndex)

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

    def _ready(self, entry: _Owner) -> ExactIndex | HnswIndex:
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
        backend: ExactIndex | HnswIndex = ExactIndex(
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
            if isinstance(backend, ExactIndex) and len(backend) + len(keys) >= self._threshold:
                hnsw = HnswIndex.empty(self._dimension)
                hnsw.upsert(*backend.items())
                backend = hnsw
            backend.upsert(keys, vectors)
            after = int(keys[-1])
        entry.backend = backend
        entry.dirty = True  # saved when flushed or let go, if worth a file
        # A file left may be stale, torn or of another database: never load it again.
        self._unlink_exact(entry.name)
        if isinstance(backend, ExactIndex):
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
        if isinstance(backend, ExactIndex) and len(backend) >= self._threshold:
            hnsw = HnswIndex.empty(self._dimension)
            hnsw.upsert(*backend.items())
            entry.backend = hnsw

    def _checked(self, vectors: Vectors, count: int) -> Vectors:
        if vectors.shape != (count, self._dimension) and not (count == 0 and vectors.size == 0):
            raise EmbeddingMismatchError(
                f"the store returned vectors of shape {vectors.shape}, "
                f"expected ({count}, {self._dimension})"
            )
        return vectors.reshape(count, self._dimension)

    # -- persistence (the files: hindsight.store.vectors.saved) -------------------------

    def _load(self, entry: _Owner) -> bool:
        """Load the owner's saved graph if its sidecar vouches for it; False otherwise."""
        found = None if self._files is None else self._files.load_graph(entry.name)
        if found is None:
            return False
        entry.backend, entry.applied_seq, (entry.saved_size, entry.saved_digest) = found
        entry.dirty = False
        entry.saved_seq = entry.applied_seq
        return True

    def _load_exact(self, entry: _Owner) -> bool:
        """Load the owner's saved exact index if it fits this index; False otherwise."""
        found = None if self._files is None else self._files.load_exact(entry.name)
        if found is None or len(found[0]) >= self._threshold:
            return False
        keys, vectors, entry.applied_seq = found
        entry.backend = ExactIndex.adopt(self._dimension, keys, vectors)
        entry.dirty = False
        entry.saved_seq = None
        return True

    def _save_exact(self, entry: _Owner, backend: ExactIndex) -> None:
        """Write the owner's exact index, if it changed and is worth a file."""
        if self._files is None or not entry.dirty or len(backend) < self._save_min:
            return
        if self._files.write_exact(entry.name, *backend.items(), seq=entry.applied_seq):
            entry.dirty = False

    def _save(self, entry: _Owner) -> None:
        """Write the owner's index: an HNSW graph and its sidecar, or an exact index
        worth a file. Call under its lock."""
        backend = entry.backend
        if self._files is None or entry.dropped or backend is None:
            return
        if isinstance(backend, ExactIndex) and entry.dirty:
            backend = self._ready(entry)  # caught up: what was forgotten is not written
        if isinstance(backend, ExactIndex):
            self._save_exact(entry, backend)
            return
        if not entry.dirty and entry.saved_seq == entry.applied_seq:
            return
        if entry.dirty or entry.saved_seq is None:
            entry.saved_size, entry.saved_digest = self._files.write_graph(entry.name, backend)
        # else: only other owners' changes moved the log; the graph on disk still holds.
        self._files.write_sidecar(
            entry.name,
            seq=entry.applied_seq,
            count=len(backend),
            saved=(entry.saved_size, entry.saved_digest),
        )
        entry.dirty = False
        entry.saved_seq = entry.applied_seq
        self._files.unlink_exact(entry.name)  # it grew into a graph: the matrix is stale

    def _unlink_exact(self, owner: str) -> None:
        if self._files is not None:
            self._files.unlink_exact(owner)

    def _remove_files(self, owner: str) -> None:
        if self._files is not None:
            self._files.remove(owner)
