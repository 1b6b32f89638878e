"""Nearest-neighbour search over one owner's vectors, in memory: an exact matrix for
small owners (one matmul), a usearch HNSW graph for big ones.

Vectors are float32 and unit-length; similarity is the inner product. The per-owner
cache that picks one or the other and keeps it in step with the store is
:mod:`hindsight.store.vectors.index`.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Sequence
    from pathlib import Path

__all__ = ["HNSW_CONNECTIVITY", "HNSW_DTYPE", "ExactIndex", "HnswIndex", "Keys", "Vectors"]

Keys = npt.NDArray[np.int64]
Vectors = npt.NDArray[np.float32]

# HNSW parameters (measured: BENCHMARKS.md, "The figures behind the constants"): f16
# halves memory and build time against f32 for the same recall; connectivity 16 is
# usearch's default; a larger expansion_add doubles the build for nothing; expansion_search
# 128, as 64 left a query in hundreds with nothing found under f16. A search for k
# explores 2k (at least 128): the store asks for twice what it keeps.
HNSW_DTYPE = "f16"
HNSW_CONNECTIVITY = 16
_HNSW_EXPANSION_ADD = 64
_HNSW_EXPANSION_SEARCH = 128


class ExactIndex:
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
    def adopt(cls, dimension: int, keys: Keys, vectors: Vectors) -> ExactIndex:
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


class HnswIndex:
    """A usearch HNSW graph with inner-product metric."""

    def __init__(self, index: Any) -> None:
        self._index = index

    @classmethod
    def empty(cls, dimension: int) -> HnswIndex:
        # usearch's extension, once loaded, makes a later `import onnxruntime` segfault
        # (usearch 2.26, onnxruntime 1.32); the other order is fine.
        with contextlib.suppress(ImportError):
            import onnxruntime  # noqa: F401
        from usearch.index import Index

        return cls(
            Index(
                ndim=dimension,
                metric="ip",
                dtype=HNSW_DTYPE,
                connectivity=HNSW_CONNECTIVITY,
                expansion_add=_HNSW_EXPANSION_ADD,
                expansion_search=_HNSW_EXPANSION_SEARCH,
            )
        )

    @classmethod
    def from_file(cls, dimension: int, path: Path) -> HnswIndex:
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


def _best(keys: Keys, scores: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
    """The ``k`` best-scored keys, best first."""
    if k < len(scores):
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
    else:
        top = np.argsort(-scores, kind="stable")
    return list(zip(keys[top].tolist(), scores[top].tolist(), strict=True))
