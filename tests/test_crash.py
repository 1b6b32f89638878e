"""A writer killed mid-stream leaves a consistent store and a usable index."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings
from hindsight.store import files

WRITER = textwrap.dedent(
    """
    import sys
    from hindsight import Hindsight, Settings
    settings = Settings(home=sys.argv[1], hnsw_threshold=40, sqlite_synchronous="FULL")
    topics = ["gardening", "astronomy", "cooking", "chess", "sailing", "pottery"]
    with Hindsight(settings) as hs:  # a first batch, closed cleanly: the index is saved
        for i in range(60):
            hs.retain("user:crash", f"note {i} on {topics[i % 6]}", kind="fact")
    hs = Hindsight(settings)
    i = 60
    while True:  # then keep writing until killed
        result = hs.retain("user:crash", f"note {i} on {topics[i % 6]}", kind="fact")
        print((result.created + result.updated)[0], flush=True)
        i += 1
    """
)


def _consistent(db: Path) -> tuple[int, int, int]:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        vectors = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
        text = conn.execute("SELECT count(*) FROM keyword_docs").fetchone()[0]
        orphans = conn.execute(
            "SELECT count(*) FROM memories m LEFT JOIN vectors v ON v.key = m.rowid "
            "WHERE v.key IS NULL"
        ).fetchone()[0]
        assert orphans == 0
        return memories, vectors, text
    finally:
        conn.close()


def test_killed_writer_leaves_a_consistent_store(tmp_path: Path, embedder: Embeddings) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(home)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    committed: list[str] = []
    for line in proc.stdout:
        committed.append(line.strip())
        if len(committed) == 25:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()

    memories, vectors, text = _consistent(home / "hindsight.db")
    assert memories == vectors == text > 40  # past the HNSW threshold
    settings = Settings(home=home, hnsw_threshold=40)
    with Hindsight(settings, embedder=embedder) as hs:
        for memory in hs.store.get(committed[-5:]):  # every acknowledged write survived
            results = hs.recall("user:crash", memory.content, k=10)
            assert memory.id in [r.memory.id for r in results]
        assert len(hs.store.get(committed)) == len(set(committed))
        survivors = hs.retain("user:crash", "note after the crash on knitting", kind="fact")
        (top, *_) = hs.recall("user:crash", "knitting", k=1)
        assert top.memory.id == survivors.created[0]


def test_a_writer_killed_mid_file_leaves_nothing_behind(
    tmp_path: Path, embedder: Embeddings
) -> None:
    settings = Settings(home=tmp_path, sqlite_synchronous="OFF")
    with Hindsight(settings, embedder=embedder) as engine:
        engine.retain("user:files", "a first memory", kind="fact")
    index_dir = settings.index_dir
    index_dir.mkdir(parents=True, exist_ok=True)

    def die_mid_write(path: Path) -> None:
        path.write_bytes(b"half of an index")
        os._exit(1)

    child = os.fork()
    if child == 0:  # pragma: no cover - the child dies inside
        files.write_atomically(index_dir / "owner.keywords.npz", die_mid_write)
    os.waitpid(child, 0)
    (left,) = index_dir.glob(".*.tmp")
    assert f".{child}." in left.name
    ours = index_dir / f".other.npz.{os.getpid()}.00000000.tmp"  # a live writer's file
    ours.write_bytes(b"being written")
    with Hindsight(settings, embedder=embedder) as engine:
        assert engine.recall("user:files", "first memory", k=1)
    assert not left.exists()
    assert ours.exists()
