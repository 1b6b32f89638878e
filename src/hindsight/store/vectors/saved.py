"""The vector index's files: an owner's index saved, so that a new process loads it
instead of rebuilding it from the store.

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
import zlib
from typing import TYPE_CHECKING

import numpy as np

from hindsight.store import files
from hindsight.store.vectors.nearest import HNSW_CONNECTIVITY, HNSW_DTYPE, HnswIndex

if TYPE_CHECKING:
    from pathlib import Path

    from hindsight.store.vectors.nearest import Keys, Vectors

__all__ = ["FORMAT_VERSION", "IndexFiles"]

FORMAT_VERSION = 1


class IndexFiles:
    """The saved indexes of a directory's owners, each of ``dimension``."""

    def __init__(self, directory: Path, dimension: int) -> None:
        self._directory = directory
        self._dimension = dimension
        directory.mkdir(parents=True, exist_ok=True)

    # -- HNSW graphs -------------------------------------------------------------------

    def load_graph(self, owner: str) -> tuple[HnswIndex, int, tuple[int, str]] | None:
        """The owner's saved graph if its sidecar vouches for it, the log position it
        reflects and its file's (size, digest); None otherwise."""
        index_path, sidecar_path = self._paths(owner)
        try:
            meta = json.loads(sidecar_path.read_text(encoding="utf-8"))
            if not self._sidecar_matches(meta, owner):
                return None
            # Files are only ever replaced whole (os.replace), never changed in place:
            # the inode hashed is the one loaded if the path still names it afterwards.
            with open(index_path, "rb") as file:
                inode = os.fstat(file.fileno()).st_ino
                size, sha = files.digest(file)
                if size != meta["size"] or sha != meta["sha256"]:
                    return None
                hnsw = HnswIndex.from_file(self._dimension, index_path)
                if os.stat(index_path).st_ino != inode:
                    return None  # replaced while we read it: rebuild
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing, unreadable or torn: rebuild from the store
        if len(hnsw) != meta["count"]:
            return None
        return hnsw, meta["seq"], (size, sha)

    def write_graph(self, owner: str, graph: HnswIndex) -> tuple[int, str]:
        """Write the owner's graph; the (size, digest) its sidecar is to keep."""
        written: list[tuple[int, str]] = []

        def write(path: Path) -> None:  # the graph, and the digest its sidecar keeps
            graph.to_file(path)
            with open(path, "rb") as file:
                written.append(files.digest(file))

        files.write_atomically(self._paths(owner)[0], write)
        return written[0]

    def write_sidecar(self, owner: str, *, seq: int, count: int, saved: tuple[int, str]) -> None:
        """Vouch for the owner's graph file, of (size, digest) ``saved``, as of ``seq``."""
        size, sha = saved
        meta = {
            "format": FORMAT_VERSION,
            "owner": owner,
            "dimension": self._dimension,
            "dtype": HNSW_DTYPE,
            "connectivity": HNSW_CONNECTIVITY,
            "seq": seq,
            "count": count,
            "size": size,
            "sha256": sha,
        }
        sidecar = json.dumps(meta, sort_keys=True).encode("utf-8")
        files.write_atomically(self._paths(owner)[1], lambda path: path.write_bytes(sidecar))

    def _paths(self, owner: str) -> tuple[Path, Path]:
        name = hashlib.sha256(owner.encode("utf-8")).hexdigest()[:32]
        return self._directory / f"{name}.usearch", self._directory / f"{name}.json"

    def _sidecar_matches(self, meta: object, owner: str) -> bool:
        return (
            isinstance(meta, dict)
            and meta.get("format") == FORMAT_VERSION
            and meta.get("owner") == owner
            and meta.get("dimension") == self._dimension
            and meta.get("dtype") == HNSW_DTYPE
            and type(meta.get("seq")) is int
            and type(meta.get("count")) is int
            and type(meta.get("size")) is int
            and isinstance(meta.get("sha256"), str)
        )

    # -- exact matrices ----------------------------------------------------------------

    def load_exact(self, owner: str) -> tuple[Keys, Vectors, int] | None:
        """Keys, vectors and log position of the owner's saved exact index, as writable
        arrays over the bytes read; None if there is none that fits."""
        try:
            with open(self._exact_path(owner), "rb") as file:
                data = bytearray(os.fstat(file.fileno()).st_size)  # writable: adopted
                if file.readinto(data) != len(data):
                    return None  # changed while read
        except OSError:
            return None
        return _read_exact(data, owner, self._dimension)

    def write_exact(self, owner: str, keys: Keys, vectors: Vectors, *, seq: int) -> bool:
        """Write the owner's exact index as of ``seq``; False if it could not be."""
        payload = keys.astype("<i8").tobytes() + vectors.astype("<f4").tobytes()
        meta = {
            "format": FORMAT_VERSION,
            "owner": owner,
            "dimension": self._dimension,
            "seq": seq,
            "count": len(keys),
            "crc32": zlib.crc32(payload),
        }
        data = json.dumps(meta).encode("utf-8") + b"\n" + payload
        try:
            files.write_atomically(self._exact_path(owner), lambda p: p.write_bytes(data))
        except OSError:
            return False  # a cache: the next process rebuilds
        return True

    def unlink_exact(self, owner: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._exact_path(owner).unlink()

    def _exact_path(self, owner: str) -> Path:
        return self._paths(owner)[0].with_suffix(".vectors")

    # -- both --------------------------------------------------------------------------

    def remove(self, owner: str) -> None:
        """Remove every file of the owner's."""
        index_path, sidecar_path = self._paths(owner)
        self.unlink_exact(owner)
        for path in (sidecar_path, index_path):  # sidecar first: never one without its index
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


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
