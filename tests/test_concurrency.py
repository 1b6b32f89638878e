"""Several processes and threads on one store: no write is lost, every read sees them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings
from hindsight.store import Filter

pytestmark = pytest.mark.backends  # processes and threads on one database

WRITER = textwrap.dedent(
    """
    import sys
    from hindsight import Hindsight, Settings
    name, count = sys.argv[2], int(sys.argv[3])
    with Hindsight(Settings(home=sys.argv[1], hnsw_threshold=30)) as hs:  # + HINDSIGHT_* env
        for i in range(count):
            hs.retain("shared:team", f"{name} logged deployment number {i} of service {name}-{i}",
                      kind="experience")
    """
)


def test_two_processes_write_at_once_and_nothing_is_lost(
    settings: Settings, embedder: Embeddings, tmp_path: Path
) -> None:
    settings = settings.model_copy(update={"hnsw_threshold": 30})
    with Hindsight(settings, embedder=embedder) as reader:  # opened first: its index is stale
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        for name in ("database_url", "redis_url"):  # the same database as the reader's
            if getattr(settings, name) is not None:
                env[f"HINDSIGHT_{name.upper()}"] = getattr(settings, name)
        # SQLite: the reader's file. PostgreSQL: a home (caches) of each writer's own.
        embedded = settings.database_url is None
        homes = {name: settings.home if embedded else tmp_path / name for name in ("alpha", "beta")}
        writers = [
            subprocess.Popen([sys.executable, "-c", WRITER, str(home), name, "40"], env=env)
            for name, home in homes.items()
        ]
        assert [w.wait(timeout=120) for w in writers] == [0, 0]
        assert reader.store.count(Filter(owners=["shared:team"])) == 80
        for name, i in [("alpha", 0), ("beta", 39), ("alpha", 21)]:
            results = reader.recall("shared:team", f"service {name}-{i}", k=5)
            assert f"{name} logged deployment number {i} " in [
                r.memory.content[: len(f"{name} logged deployment number {i} ")] for r in results
            ]


def test_threads_share_one_engine(hs: Hindsight) -> None:
    def work(n: int) -> int:
        hs.retain("user:alice", f"Alice visited museum number {n} in the old town", kind="fact")
        return len(hs.recall("user:alice", f"museum number {n}", k=3))

    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(work, range(24)))
    assert all(found)
    assert hs.store.count(Filter(owners=["user:alice"])) == 24
