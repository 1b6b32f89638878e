"""The vector seam: both built-in backends pass the same tests through VectorBackend.

Each runs over the database it fits (``local`` on SQLite, ``pgvector`` on a real
PostgreSQL), under a real store whose rows the vectors belong to.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from hindsight import EmbeddingMismatchError, Settings
from hindsight.models import Kind, Memory, Provenance, Status
from hindsight.store import Filter, open_store
from hindsight.store.sql import SQLStore
from hindsight.store.vectors import VectorBackend, vector_backends
from hindsight.store.vectors.local import LocalVectors
from hindsight.store.vectors.pgvector import PgVectors

DIM = 16
N = 40
Vectors = npt.NDArray[np.float32]


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SQLStore]:
    url = request.getfixturevalue("database_url") if request.param == "postgres" else None
    opened = open_store(Settings(home=tmp_path, sqlite_synchronous="OFF", database_url=url))
    assert isinstance(opened, SQLStore)
    opened.bind_embedding("random", DIM)
    yield opened
    opened.close()


def _vectors(n: int, seed: int = 7) -> Vectors:
    vectors = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def _fill(store: SQLStore, owner: str, vectors: Vectors) -> list[tuple[str, int]]:
    """Memories of ``owner`` with these vectors; their ids and row keys."""
    now = datetime.now(UTC)
    memories = [
        Memory(
            id=f"m_{owner[-1]}{i:027x}",
            owner=owner,
            kind=Kind.FACT,
            content=f"note {i}",
            confidence=1.0,
            provenance=Provenance(),
            observed_at=now,
            created_at=now,
            updated_at=now,
            embedding_model="random",
        )
        for i in range(len(vectors))
    ]
    store.write(insert=list(zip(memories, vectors, strict=True)))
    keys = dict(store.db.read("SELECT id, rowid FROM memories WHERE owner = ?", (owner,)))
    return [(m.id, int(keys[m.id])) for m in memories]


def _search(store: SQLStore, owner: str, query: Vectors, k: int) -> list[tuple[str, float]]:
    return store.vectors.search(Filter(owners=[owner]), query, k, store)


def test_the_registry_names_both_and_each_database_gets_its_own(store: SQLStore) -> None:
    assert vector_backends.names() == ["local", "pgvector", "qdrant", "qdrant-edge"]
    expected = LocalVectors if store.db.vector_backend == "local" else PgVectors
    assert isinstance(store.vectors, expected)
    backend: VectorBackend = store.vectors  # the protocol, checked statically
    assert backend.count() == 0


def test_put_search_count_and_drop(store: SQLStore) -> None:
    vectors = _vectors(N)
    rows = _fill(store, "user:a", vectors)
    _fill(store, "user:b", _vectors(5, seed=8))
    backend = store.vectors
    assert (backend.count("user:a"), backend.count("user:b"), backend.count()) == (N, 5, N + 5)
    exact = np.argsort(-(vectors @ vectors[3]), kind="stable")[:10]
    found = _search(store, "user:a", vectors[3], 10)
    assert [mid for mid, _ in found] == [rows[i][0] for i in exact]  # exact: a small owner
    assert found[0][1] == pytest.approx(1.0, abs=1e-5)

    (mid, key), replacement = rows[3], _vectors(1, seed=9)[0]
    with store.db.tx() as conn:
        backend.put(conn, key, "user:a", "random", replacement)  # replaces
        backend.drop(conn, rows[4][1], "user:a")
    assert backend.count("user:a") == N - 1
    assert _search(store, "user:a", replacement, 1)[0][0] == mid
    assert rows[4][0] not in {m for m, _ in _search(store, "user:a", vectors[4], N)}
    assert len(_search(store, "user:b", vectors[4], N)) == 5  # other owners untouched


def test_a_failed_write_leaves_the_backend_unchanged(store: SQLStore) -> None:
    vectors = _vectors(N)
    rows = _fill(store, "user:a", vectors)
    backend = store.vectors
    before = [_search(store, "user:a", v, 5) for v in vectors[:3]]
    with pytest.raises(RuntimeError), store.db.tx() as conn:
        backend.put(conn, rows[0][1], "user:a", "random", _vectors(1, seed=9)[0])
        backend.drop(conn, rows[1][1], "user:a")
        raise RuntimeError("the write fails after its vectors")
    assert backend.count("user:a") == N
    assert [_search(store, "user:a", v, 5) for v in vectors[:3]] == before


def test_a_vector_of_another_dimension_is_refused(store: SQLStore) -> None:
    ((_, key),) = _fill(store, "user:a", _vectors(1))
    with pytest.raises(EmbeddingMismatchError), store.db.tx() as conn:
        store.vectors.put(conn, key, "user:a", "random", np.ones(DIM + 1, dtype=np.float32))
    assert store.vectors.count() == 1


def test_forgetting_an_owner(store: SQLStore) -> None:
    vectors = _vectors(N)
    rows = _fill(store, "user:a", vectors)
    _fill(store, "user:b", _vectors(5, seed=8))
    assert _search(store, "user:a", vectors[0], 1)  # an index in memory, for the local one
    receipt = {"id": "r1", "at": datetime.now(UTC), "criteria": {}, "deleted_ids": []}
    store.delete([mid for mid, _ in rows], receipt={**receipt, "derived_ids": []})
    assert store.vectors.count("user:a") == 0
    assert _search(store, "user:a", vectors[0], 10) == []
    assert store.vectors.forgot(["user:a", "user:b"]) <= {"user:a"}  # b keeps its vectors
    assert store.vectors.count("user:b") == 5


@pytest.mark.parametrize("narrow", ["held", "session"])
def test_a_filter_that_lets_few_by_finds_them_all_best_first(
    store: SQLStore, monkeypatch: pytest.MonkeyPatch, narrow: str
) -> None:
    """Three memories of 300 held for review, or of one session: a search within them
    finds all three, nearest first, and (the local index) scores those alone instead of
    reading the whole index in ever larger rounds to find them."""
    vectors = _vectors(300)
    rows = _fill(store, "user:a", vectors)
    few = [rows[i] for i in (17, 150, 299)]
    column, value = ("status", "pending_review") if narrow == "held" else ("session_id", "s-x")
    with store.db.tx() as conn:
        for _, key in few:
            conn.execute(f"UPDATE memories SET {column} = ? WHERE rowid = ?", (value, key))
    asked: list[tuple[int, object]] = []
    if isinstance(store.vectors, LocalVectors):
        index = store.vectors.index
        assert index is not None
        search = index.search
        monkeypatch.setattr(index, "search", lambda *a: asked.append((a[2], a[3])) or search(*a))
    flt = (
        Filter(owners=["user:a"], statuses=(Status.PENDING_REVIEW,))
        if narrow == "held"
        else Filter(owners=["user:a"], session_id="s-x")
    )
    found = store.vectors.search(flt, vectors[0], 10, store)
    order = sorted((float(vectors[i] @ vectors[0]), rows[i][0]) for i in (17, 150, 299))
    assert [mid for mid, _ in found] == [mid for _, mid in reversed(order)]
    assert [s for _, s in found] == pytest.approx([s for s, _ in reversed(order)], abs=1e-5)
    if asked:  # the few alone; for an active filter, after one round of the index's best 64
        first = [] if narrow == "held" else [(64, None)]
        assert asked == [*first, (10, {key: mid for mid, key in few})]
    none = replace(flt, statuses=(Status.QUARANTINED,))
    assert store.vectors.search(none, vectors[0], 10, store) == []
