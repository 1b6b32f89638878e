"""Tests of the per-owner vector index against an in-memory change log."""

from __future__ import annotations

import json
import threading
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from hindsight.errors import EmbeddingMismatchError, ValidationError
from hindsight.store.vectors.index import Change, VectorIndex

DIM = 64
Vectors = npt.NDArray[np.float32]


class FakeSource:
    """A VectorSource kept in memory: rows per owner plus one change log for all owners."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[int, Vectors]] = {}
        self.log: list[tuple[int, str, int, Vectors | None]] = []
        self.head = 0
        self.pruned_upto = 0
        self.calls: Counter[str] = Counter()
        self._next_key = 1
        self.lock = threading.RLock()  # a real store answers from one consistent read

    def add(self, owner: str, vectors: Vectors) -> tuple[list[int], list[Change], int]:
        """Insert rows; returns their keys, the owner's changes and the head before."""
        with self.lock:
            before = self.head
            keys: list[int] = []
            changes: list[Change] = []
            for vector in vectors:
                key = self._next_key
                self._next_key += 1
                self.put(owner, key, vector, changes)
                keys.append(key)
            return keys, changes, before

    def put(
        self, owner: str, key: int, vector: Vectors, changes: list[Change] | None = None
    ) -> None:
        with self.lock:
            self.head += 1
            self.rows.setdefault(owner, {})[key] = vector
            self.log.append((self.head, owner, key, vector))
            if changes is not None:
                changes.append((self.head, key, vector))

    def remove(self, owner: str, keys: list[int]) -> None:
        with self.lock:
            for key in keys:
                self.head += 1
                del self.rows[owner][key]
                self.log.append((self.head, owner, key, None))

    def prune(self) -> None:
        """Drop the whole log, as a store that trims old entries would."""
        self.pruned_upto = self.head
        self.log.clear()

    def live(self, owner: str) -> tuple[npt.NDArray[np.int64], Vectors]:
        rows = self.rows.get(owner, {})
        keys = np.array(sorted(rows), dtype=np.int64)
        vectors = np.array([rows[k] for k in keys.tolist()], dtype=np.float32).reshape(-1, DIM)
        return keys, vectors

    # -- the VectorSource protocol --

    def vector_snapshot(
        self, owner: str, after_key: int, limit: int
    ) -> tuple[npt.NDArray[np.int64], Vectors]:
        with self.lock:
            if after_key == 0:
                self.calls["snapshot"] += 1  # counts rebuilds, not pages
            keys, vectors = self.live(owner)
            page = keys > after_key
            return keys[page][:limit], vectors[page][:limit]

    def vector_changes(self, owner: str, after_seq: int) -> tuple[list[Change], int] | None:
        with self.lock:
            self.calls["changes"] += 1
            if after_seq < self.pruned_upto:
                return None
            changes = [(s, k, v) for s, o, k, v in self.log if o == owner and s > after_seq]
            return changes, self.head

    def vector_log_head(self) -> int:
        with self.lock:
            self.calls["head"] += 1
            return self.head


def clustered(rng: np.random.Generator, n: int, centers: Vectors) -> Vectors:
    """Unit vectors scattered around cluster centres, roughly like text embeddings."""
    picked = centers[rng.integers(0, len(centers), n)]
    noise = rng.standard_normal((n, DIM)).astype(np.float32) / np.sqrt(DIM)
    vectors: Vectors = (picked + noise).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def top_keys(index: VectorIndex, owner: str, query: Vectors, k: int = 10) -> list[int]:
    """An approximate index's top ``k``: HNSW may rank a near-twin above the exact vector,
    so tests ask for presence, not for rank 1."""
    return [key for key, _ in index.search(owner, query, k)]


def make_centers(rng: np.random.Generator, n: int = 60) -> Vectors:
    centers: Vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    return centers


def brute_force(source: FakeSource, owner: str, query: Vectors, k: int) -> list[int]:
    keys, vectors = source.live(owner)
    scores = vectors @ query
    top: list[int] = keys[np.argsort(-scores, kind="stable")[:k]].tolist()
    return top


def recall_at(
    index: VectorIndex, source: FakeSource, owner: str, queries: Vectors, k: int
) -> float:
    found = 0
    for query in queries:
        truth = set(brute_force(source, owner, query, k))
        found += len(truth & {key for key, _ in index.search(owner, query, k)})
    return found / (k * len(queries))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(42)


@pytest.fixture
def centers(rng: np.random.Generator) -> Vectors:
    return make_centers(rng)


@pytest.fixture(scope="module")
def big() -> tuple[FakeSource, Vectors]:
    """3,000 clustered vectors for owner "big", and queries drawn like them."""
    rng = np.random.default_rng(7)
    centers = make_centers(rng, 100)
    source = FakeSource()
    source.add("big", clustered(rng, 3000, centers))
    return source, clustered(rng, 100, centers)


# -- exact search ---------------------------------------------------------------------


def test_exact_search_matches_brute_force(rng: np.random.Generator, centers: Vectors) -> None:
    source = FakeSource()
    source.add("a", clustered(rng, 800, centers))
    source.add("b", clustered(rng, 300, centers))
    index = VectorIndex(source, DIM, directory=None)
    for query in clustered(rng, 20, centers):
        for owner in ("a", "b"):
            result = index.search(owner, query, 10)
            assert [key for key, _ in result] == brute_force(source, owner, query, 10)
            keys, vectors = source.live(owner)
            by_key = dict(zip(keys.tolist(), vectors, strict=True))
            for key, similarity in result:
                assert similarity == pytest.approx(float(by_key[key] @ query), abs=1e-5)
    assert not index.is_hnsw("a")


def test_small_owner_and_edge_cases(rng: np.random.Generator, centers: Vectors) -> None:
    source = FakeSource()
    keys, _, _ = source.add("a", clustered(rng, 3, centers))
    index = VectorIndex(source, DIM, directory=None)
    query = clustered(rng, 1, centers)[0]
    assert sorted(key for key, _ in index.search("a", query, 10)) == keys
    assert index.search("a", query, 0) == []
    assert index.search("nobody", query, 5) == []
    with pytest.raises(ValidationError):
        index.search("a", np.zeros(DIM + 1, dtype=np.float32), 5)


def test_wrong_dimension_from_source_is_refused(rng: np.random.Generator, centers: Vectors) -> None:
    source = FakeSource()
    source.add("a", clustered(rng, 5, centers))
    index = VectorIndex(source, DIM * 2, directory=None)
    with pytest.raises(EmbeddingMismatchError):
        index.search("a", np.zeros(DIM * 2, dtype=np.float32), 5)


def test_removed_and_replaced_vectors(rng: np.random.Generator, centers: Vectors) -> None:
    source = FakeSource()
    vectors = clustered(rng, 600, centers)
    keys, _, _ = source.add("a", vectors)
    for threshold in (10_000, 100):  # exact, then HNSW
        index = VectorIndex(source, DIM, directory=None, hnsw_threshold=threshold)
        index.search("a", vectors[0], 1)
        gone = keys[:50] if threshold == 10_000 else keys[50:100]
        source.remove("a", gone)
        for key in gone:
            result = index.search("a", vectors[key - 1], 20)
            assert not set(gone) & {k for k, _ in result}
        assert index.count("a") == len(source.rows["a"])
        # A key written again with another vector is found by the new one only.
        moved = keys[200 if threshold == 10_000 else 201]
        source.put("a", moved, vectors[300])
        assert index.search("a", vectors[300], 2)[0][1] == pytest.approx(1.0, abs=1e-3)
        assert moved in {k for k, _ in index.search("a", vectors[300], 2)}
        assert index.count("a") == len(source.rows["a"])


def test_a_search_among_given_keys_is_exact_over_them(
    rng: np.random.Generator, centers: Vectors
) -> None:
    """A filter that lets few memories by asks for those keys only: scored exactly,
    whether the index is exact or HNSW."""
    source = FakeSource()
    vectors = clustered(rng, 600, centers)
    keys, _, _ = source.add("a", vectors)
    (other,), _, _ = source.add("b", vectors[:1])
    among = {keys[5], keys[77], keys[300], keys[599], other, 10**9}  # another's, and none
    query = clustered(rng, 1, centers)[0]
    want = sorted(
        ((keys[i], float(vectors[i] @ query)) for i in (5, 77, 300, 599)), key=lambda h: -h[1]
    )
    for threshold in (10_000, 100):
        index = VectorIndex(source, DIM, directory=None, hnsw_threshold=threshold)
        assert index.is_hnsw("a") is (threshold == 100)
        found = index.search("a", query, 10, among)
        assert [key for key, _ in found] == [key for key, _ in want]
        assert [s for _, s in found] == pytest.approx([s for _, s in want], abs=2e-3)  # f16
        assert index.search("a", query, 2, among) == found[:2]
        assert index.search("a", query, 5, set()) == []


# -- HNSW -----------------------------------------------------------------------------


def test_hnsw_recall(big: tuple[FakeSource, Vectors]) -> None:
    source, queries = big
    index = VectorIndex(source, DIM, directory=None, hnsw_threshold=500)
    assert index.is_hnsw("big")
    assert recall_at(index, source, "big", queries, 10) >= 0.95
    result = index.search("big", queries[0], 50)
    similarities = [s for _, s in result]
    assert len(result) == 50
    assert similarities == sorted(similarities, reverse=True)


def test_crossing_the_threshold(rng: np.random.Generator, centers: Vectors) -> None:
    source = FakeSource()
    source.add("a", clustered(rng, 450, centers))
    index = VectorIndex(source, DIM, directory=None, hnsw_threshold=500)
    assert not index.is_hnsw("a")
    source.add("a", clustered(rng, 100, centers))
    assert index.is_hnsw("a")
    assert index.count("a") == 550
    assert recall_at(index, source, "a", clustered(rng, 20, centers), 10) >= 0.95
    # Shrinking below the threshold keeps the graph, and stays correct.
    source.remove("a", sorted(source.rows["a"])[:200])
    assert index.is_hnsw("a")
    assert recall_at(index, source, "a", clustered(rng, 20, centers), 10) >= 0.95


# -- catching up with the log -----------------------------------------------------------


def test_catch_up_with_another_process(rng: np.random.Generator, centers: Vectors) -> None:
    source = FakeSource()
    source.add("a", clustered(rng, 700, centers))
    for threshold in (10_000, 500):
        reader = VectorIndex(source, DIM, directory=None, hnsw_threshold=threshold)
        writer = VectorIndex(source, DIM, directory=None, hnsw_threshold=threshold)
        query = clustered(rng, 1, centers)[0]
        reader.search("a", query, 5)
        writer.search("a", query, 5)
        new_keys, _, _ = source.add("a", query[None, :])
        source.remove("a", [key for key, _ in writer.search("a", query, 3) if key not in new_keys])
        result = reader.search("a", query, 10)
        assert result[0][0] == new_keys[0]
        assert [key for key, _ in result] == brute_force(source, "a", query, 10)


def test_other_owners_changes_cost_no_rebuild(rng: np.random.Generator, centers: Vectors) -> None:
    source = FakeSource()
    source.add("a", clustered(rng, 50, centers))
    index = VectorIndex(source, DIM, directory=None)
    query = clustered(rng, 1, centers)[0]
    before = index.search("a", query, 5)
    source.add("b", clustered(rng, 50, centers))
    assert index.search("a", query, 5) == before
    assert source.calls["snapshot"] == 1


def test_pruned_log_rebuilds(rng: np.random.Generator, centers: Vectors) -> None:
    source = FakeSource()
    source.add("a", clustered(rng, 100, centers))
    index = VectorIndex(source, DIM, directory=None)
    query = clustered(rng, 1, centers)[0]
    index.search("a", query, 5)
    keys, _, _ = source.add("a", query[None, :])
    source.prune()
    assert index.search("a", query, 1)[0][0] == keys[0]
    assert source.calls["snapshot"] == 2


def test_concurrent_searches_and_writes(rng: np.random.Generator, centers: Vectors) -> None:
    source = FakeSource()
    source.add("a", clustered(rng, 400, centers))
    index = VectorIndex(source, DIM, directory=None, hnsw_threshold=500)
    queries = clustered(rng, 50, centers)
    errors: list[BaseException] = []
    assert index.count("a") == 400

    def search() -> None:
        try:
            for query in queries:
                assert len(index.search("a", query, 10)) == 10
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=search) for _ in range(3)]
    for thread in threads:
        thread.start()
    for batch in np.array_split(clustered(rng, 300, centers), 10):
        source.add("a", batch)
    for thread in threads:
        thread.join()
    assert not errors
    assert index.count("a") == 700 and index.is_hnsw("a")


# -- persistence ------------------------------------------------------------------------


def saved_index(source: FakeSource, directory: Path) -> None:
    index = VectorIndex(source, DIM, directory=directory, hnsw_threshold=500)
    index.search("big", np.ones(DIM, dtype=np.float32) / np.sqrt(DIM), 1)
    index.close()


@pytest.fixture
def persisted(big: tuple[FakeSource, Vectors], tmp_path: Path) -> tuple[FakeSource, Path]:
    """A copy of the big source whose graph was saved in tmp_path."""
    source = FakeSource()
    keys, vectors = big[0].live("big")
    for key, vector in zip(keys.tolist(), vectors, strict=True):
        source.put("big", key, vector)
    source._next_key = int(keys.max()) + 1
    saved_index(source, tmp_path)
    source.calls.clear()
    return source, tmp_path


def reopened(source: FakeSource, directory: Path) -> VectorIndex:
    return VectorIndex(source, DIM, directory=directory, hnsw_threshold=500)


def test_round_trip_needs_no_rebuild(
    persisted: tuple[FakeSource, Path], big: tuple[FakeSource, Vectors]
) -> None:
    source, directory = persisted
    assert len(list(directory.glob("*.usearch"))) == 1
    assert len(list(directory.glob("*.json"))) == 1
    assert not list(directory.glob("*.tmp"))
    index = reopened(source, directory)
    assert index.is_hnsw("big")
    assert recall_at(index, source, "big", big[1], 10) >= 0.95
    assert source.calls["snapshot"] == 0
    assert source.calls["changes"] == 0


def test_stale_sidecar_replays(
    persisted: tuple[FakeSource, Path], big: tuple[FakeSource, Vectors]
) -> None:
    source, directory = persisted
    query = big[1][0]  # drawn like the stored vectors, as a real memory is
    keys, _, _ = source.add("big", query[None, :])
    source.remove("big", sorted(source.rows["big"])[:10])
    index = reopened(source, directory)
    assert keys[0] in top_keys(index, "big", query)
    assert index.count("big") == 2991
    assert source.calls["snapshot"] == 0 and source.calls["changes"] == 1
    # Saving again after changes of other owners only rewrites the sidecar.
    index.save("big")
    index_file = next(directory.glob("*.usearch"))
    mtime = index_file.stat().st_mtime_ns
    source.add("other", query[None, :])
    index.search("big", query, 1)
    index.save("big")
    assert index_file.stat().st_mtime_ns == mtime
    source.calls.clear()
    again = reopened(source, directory)
    assert keys[0] in top_keys(again, "big", query)
    assert source.calls["snapshot"] == 0 and source.calls["changes"] == 0


def damage_truncate(index_file: Path, sidecar: Path) -> None:
    index_file.write_bytes(index_file.read_bytes()[:1000])


def damage_flip(index_file: Path, sidecar: Path) -> None:
    data = bytearray(index_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    index_file.write_bytes(bytes(data))


def damage_ahead(index_file: Path, sidecar: Path) -> None:
    meta = json.loads(sidecar.read_text())
    meta["seq"] += 10
    sidecar.write_text(json.dumps(meta))


def damage_dimension(index_file: Path, sidecar: Path) -> None:
    meta = json.loads(sidecar.read_text())
    meta["dimension"] = DIM * 2
    sidecar.write_text(json.dumps(meta))


def damage_sidecar_garbage(index_file: Path, sidecar: Path) -> None:
    sidecar.write_text("{not json")


def damage_no_sidecar(index_file: Path, sidecar: Path) -> None:
    sidecar.unlink()


def damage_no_index(index_file: Path, sidecar: Path) -> None:
    index_file.unlink()


@pytest.mark.parametrize(
    "damage",
    [
        damage_truncate,
        damage_flip,
        damage_ahead,
        damage_dimension,
        damage_sidecar_garbage,
        damage_no_sidecar,
        damage_no_index,
    ],
)
def test_untrustworthy_files_rebuild(
    damage: object, persisted: tuple[FakeSource, Path], big: tuple[FakeSource, Vectors]
) -> None:
    source, directory = persisted
    index_file = next(directory.glob("*.usearch"))
    assert callable(damage)
    damage(index_file, index_file.with_suffix(".json"))
    index = reopened(source, directory)
    assert recall_at(index, source, "big", big[1][:30], 10) >= 0.95
    assert source.calls["snapshot"] == 1
    # The rebuilt graph is saved again and then trusted.
    index.close()
    source.calls.clear()
    assert reopened(source, directory).count("big") == 3000
    assert source.calls["snapshot"] == 0


def test_crash_between_index_and_sidecar(
    persisted: tuple[FakeSource, Path], big: tuple[FakeSource, Vectors]
) -> None:
    source, directory = persisted
    sidecar = next(directory.glob("*.json"))
    old_sidecar = sidecar.read_bytes()
    query = big[1][0]  # drawn like the stored vectors, as a real memory is
    keys, _, _ = source.add("big", query[None, :])
    index = reopened(source, directory)
    index.search("big", query, 1)
    index.save("big")
    sidecar.write_bytes(old_sidecar)  # the new index landed, the new sidecar did not
    source.calls.clear()
    assert keys[0] in top_keys(reopened(source, directory), "big", query)
    assert source.calls["snapshot"] == 1


def test_pruned_log_after_save_rebuilds(
    persisted: tuple[FakeSource, Path], big: tuple[FakeSource, Vectors]
) -> None:
    source, directory = persisted
    query = big[1][0]  # drawn like the stored vectors, as a real memory is
    keys, _, _ = source.add("big", query[None, :])
    source.prune()
    assert keys[0] in top_keys(reopened(source, directory), "big", query)
    assert source.calls["snapshot"] == 1


def test_drop_forgets_owner(persisted: tuple[FakeSource, Path]) -> None:
    source, directory = persisted
    index = reopened(source, directory)
    assert index.count("big") == 3000
    index.drop("big")
    assert not list(directory.iterdir())
    assert index.count("big") == 3000  # the rows are the store's: read again
    assert source.calls["snapshot"] == 1


def test_memory_holds_a_bounded_number_of_vectors(
    rng: np.random.Generator, centers: Vectors, tmp_path: Path
) -> None:
    """Past the bound the owner searched longest ago is let go, its HNSW graph saved;
    searched again it is loaded (a graph) or rebuilt (exact), and answers as before."""
    source = FakeSource()
    source.add("graph", clustered(rng, 600, centers))
    source.add("exact", clustered(rng, 300, centers))
    index = VectorIndex(source, DIM, directory=tmp_path, hnsw_threshold=500, max_vectors=700)
    query = clustered(rng, 1, centers)[0]
    graph, exact = top_keys(index, "graph", query), top_keys(index, "exact", query)
    assert [owner for owner, _ in index._owners.items()] == ["exact"]  # 900 > 700
    assert len(list(tmp_path.glob("*.usearch"))) == 1  # the graph went to disk first
    source.calls.clear()
    assert top_keys(index, "graph", query) == graph
    assert source.calls["snapshot"] == 0  # loaded, not rebuilt
    assert [owner for owner, _ in index._owners.items()] == ["graph"]
    assert top_keys(index, "exact", query) == exact == brute_force(source, "exact", query, 10)


# -- exact owners saved -------------------------------------------------------------------


def exact_file(directory: Path) -> Path:
    found = list(directory.glob("*.vectors"))
    assert len(found) == 1, found
    return found[0]


def answers(index: VectorIndex, owner: str, queries: Vectors) -> list[list[tuple[int, float]]]:
    return [index.search(owner, query, 10) for query in queries]


def built_afresh(source: FakeSource, owner: str, queries: Vectors) -> list[list[tuple[int, float]]]:
    return answers(VectorIndex(source, DIM, directory=None), owner, queries)


def test_an_exact_owner_is_saved_loaded_and_caught_up(
    rng: np.random.Generator, centers: Vectors, tmp_path: Path
) -> None:
    """A saved exact index answers as one built from the store, after writes and removals
    made while no process held it (replayed from the log) and while one did."""
    source = FakeSource()
    keys, _, _ = source.add("a", clustered(rng, 300, centers))
    source.add("tiny", clustered(rng, 5, centers))
    queries = clustered(rng, 10, centers)
    with VectorIndex(source, DIM, directory=tmp_path, hnsw_threshold=500) as first:
        answers(first, "a", queries)
        answers(first, "tiny", queries)
        assert not list(tmp_path.glob("*.vectors"))  # written when flushed
    exact_file(tmp_path)  # "a" only: "tiny" is under the threshold of a file
    source.add("a", clustered(rng, 20, centers))
    source.remove("a", keys[:30])
    source.put("a", keys[40], queries[0])  # replaced
    source.calls.clear()
    with VectorIndex(source, DIM, directory=tmp_path, hnsw_threshold=500) as second:
        got = answers(second, "a", queries)
        assert source.calls["snapshot"] == 0 and source.calls["changes"] == 1
        assert got == built_afresh(source, "a", queries)
        source.remove("a", keys[50:60])
        source.add("a", clustered(rng, 5, centers))
        assert answers(second, "a", queries) == built_afresh(source, "a", queries)
    source.calls.clear()
    third = VectorIndex(source, DIM, directory=tmp_path, hnsw_threshold=500)
    got = answers(third, "a", queries)
    assert source.calls["snapshot"] == 0 and source.calls["changes"] == 0  # saved on close
    assert got == built_afresh(source, "a", queries)
    assert not list(tmp_path.glob("*.tmp"))


def read_saved(path: Path) -> tuple[dict[str, Any], npt.NDArray[np.int64], Vectors]:
    """A saved exact index's meta, keys and vectors, as the module's docstring lays it out."""
    data = path.read_bytes()
    head, payload = data.split(b"\n", 1)
    meta = json.loads(head)
    count = meta["count"]
    keys = np.frombuffer(payload, dtype="<i8", count=count)
    vectors = np.frombuffer(payload, dtype="<f4", offset=8 * count)
    return meta, keys, vectors.reshape(count, -1)


def rewrite(path: Path, **changes: Any) -> None:
    """Save the file again, its checksum right, with some keys, vectors or meta changed."""
    meta, keys, vectors = read_saved(path)
    keys, vectors = changes.pop("keys", keys), changes.pop("vectors", vectors)
    payload = np.asarray(keys, "<i8").tobytes() + np.asarray(vectors, "<f4").tobytes()
    meta.update({"crc32": zlib.crc32(payload), **changes})
    path.write_bytes(json.dumps(meta).encode() + b"\n" + payload)


EXACT_DAMAGE = {
    "torn": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "flipped": lambda p: p.write_bytes(
        (lambda b: b[: len(b) // 2] + bytes([b[len(b) // 2] ^ 0xFF]) + b[len(b) // 2 + 1 :])(
            p.read_bytes()
        )
    ),
    "garbage": lambda p: p.write_bytes(bytes(range(256)) * 40),
    "other checksum": lambda p: rewrite(p, crc32=12345),
    "other format": lambda p: rewrite(p, format=99),
    "ahead of the log": lambda p: rewrite(p, seq=10_000),
    "other owner": lambda p: rewrite(p, owner="b"),
    "other dimension": lambda p: rewrite(p, dimension=DIM * 2),
    "wrong count": lambda p: rewrite(p, count=3),
    "keys twice": lambda p: rewrite(p, keys=np.ones(300, dtype=np.int64)),
    "ragged": lambda p: rewrite(p, vectors=np.zeros((300, DIM - 1), dtype=np.float32)),
}


@pytest.mark.parametrize("damage", sorted(EXACT_DAMAGE))
def test_an_exact_file_that_does_not_fit_is_ignored(
    damage: str, rng: np.random.Generator, centers: Vectors, tmp_path: Path
) -> None:
    source = FakeSource()
    source.add("a", clustered(rng, 300, centers))
    queries = clustered(rng, 10, centers)
    with VectorIndex(source, DIM, directory=tmp_path, hnsw_threshold=500) as first:
        answers(first, "a", queries)
    path = exact_file(tmp_path)
    EXACT_DAMAGE[damage](path)
    source.calls.clear()
    index = VectorIndex(source, DIM, directory=tmp_path, hnsw_threshold=500)
    got = answers(index, "a", queries)
    assert source.calls["snapshot"] == 1  # rebuilt from the store
    assert got == built_afresh(source, "a", queries)
    assert not path.exists()  # never trusted again, by this process or the next
    index.close()
    assert len(read_saved(exact_file(tmp_path))[1]) == 300  # written again, whole


def test_saved_exact_files_follow_the_owner(
    rng: np.random.Generator, centers: Vectors, tmp_path: Path
) -> None:
    """Removed when the owner forgets some vectors (written again from what is left),
    when it grows into a saved graph, and when it is dropped."""
    source = FakeSource()
    keys, _, _ = source.add("a", clustered(rng, 300, centers))
    index = VectorIndex(source, DIM, directory=tmp_path, hnsw_threshold=500)
    index.search("a", centers[0], 1)
    index.save("a")
    exact_file(tmp_path)
    source.remove("a", keys[:10])
    index.drop_saved("a")
    assert not list(tmp_path.glob("*.vectors"))
    index.flush()
    assert sorted(read_saved(exact_file(tmp_path))[1].tolist()) == keys[10:]
    source.add("a", clustered(rng, 300, centers))
    assert index.is_hnsw("a")
    index.save("a")
    assert not list(tmp_path.glob("*.vectors"))
    assert len(list(tmp_path.glob("*.usearch"))) == 1
    index.drop("a")
    assert not list(tmp_path.iterdir())
