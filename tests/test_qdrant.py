"""The Qdrant vector backends: qdrant-edge's real engine in this process (and in
subprocesses), and a real Qdrant server where HINDSIGHT_TEST_QDRANT_URL names one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hindsight import Hindsight, Settings
from hindsight.cli import cli
from hindsight.errors import ValidationError, VectorsUnavailableError
from hindsight.models import Kind
from hindsight.store import Filter, open_store
from hindsight.store.sql import SQLStore
from hindsight.store.vectors.qdrant import QdrantVectors
from hindsight.store.vectors.qdrant_engines import Engine, Where

pytest.importorskip("qdrant_edge")

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _settings(home: Path, **more: Any) -> Settings:
    return Settings(home=home, vector_backend="qdrant-edge", sqlite_synchronous="OFF", **more)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Hindsight]:
    with Hindsight(_settings(tmp_path)) as hs:
        yield hs


def _vectors(hs: Hindsight) -> QdrantVectors:
    assert isinstance(hs.store, SQLStore)
    vectors = hs.store.vectors
    assert isinstance(vectors, QdrantVectors)
    return vectors


def _engine(hs: Hindsight) -> Engine:
    return _vectors(hs)._bound()


def test_the_setting_chooses_the_backend_and_refuses_unknown_names(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="valid: auto, local, pgvector, qdrant, qdrant-edge"):
        open_store(Settings(home=tmp_path, vector_backend="milvus"))
    with pytest.raises(ValidationError, match="HINDSIGHT_QDRANT_URL"):
        open_store(Settings(home=tmp_path, vector_backend="qdrant"))
    store = open_store(_settings(tmp_path))
    assert isinstance(store, SQLStore) and isinstance(store.vectors, QdrantVectors)
    store.close()


def test_an_unreachable_server_is_an_error_at_open(tmp_path: Path) -> None:
    pytest.importorskip("qdrant_client")
    settings = Settings(
        home=tmp_path,
        vector_backend="qdrant",
        qdrant_url="http://127.0.0.1:9",  # discard: nothing listens
        qdrant_timeout_seconds=2,
    )
    started = time.monotonic()
    with pytest.raises(VectorsUnavailableError, match=r"Qdrant at http://127\.0\.0\.1:9"):
        Hindsight(settings)
    assert time.monotonic() - started < 10


def test_owners_and_kinds_are_filtered_inside_the_engine(memory: Hindsight) -> None:
    memory.retain("user:alice", "I play the cello in an orchestra.")
    memory.retain("user:bob", "I play the cello too, on Sundays.")
    hits = memory.recall("user:alice", "cello", k=10)
    assert hits and {r.memory.owner for r in hits} == {"user:alice"}
    engine = _engine(memory)
    query = memory.embedder.encode_query("cello").tolist()
    alice = engine.search(query, 10, Where(owners=["user:alice"]), 64)
    everyone = engine.search(query, 10, Where(owners=["user:alice", "user:bob"]), 64)
    assert 0 < len(alice) < len(everyone)
    episodes = engine.search(query, 10, Where(owners=["user:alice"], kinds=["episode"]), 64)
    assert 0 < len(episodes) <= len(alice)
    assert memory.store.vector_search(
        Filter(owners=["user:alice"], kinds=[Kind.EPISODE]),
        memory.embedder.encode_query("cello"),
        5,
    )


def test_forget_removes_the_points(memory: Hindsight) -> None:
    memory.retain("user:alice", "I live in Paris.", session_id="s1")
    memory.retain("user:alice", "My dog is called Rex.", session_id="s2")
    engine = _engine(memory)
    _vectors(memory).catch_up()
    before = engine.count("user:alice")
    memory.forget(owner="user:alice", session_id="s1")
    after = engine.count("user:alice")
    assert 0 < after < before
    assert after == memory.store.vectors.count("user:alice")
    assert all("Paris" not in r.memory.content for r in memory.recall("user:alice", "Paris"))


def test_vectors_persist_across_a_reopen(tmp_path: Path) -> None:
    with Hindsight(_settings(tmp_path)) as hs:
        hs.retain("user:alice", "I learnt to sail in Brittany.")
        _vectors(hs).catch_up()
        held = _engine(hs).count()
    with Hindsight(_settings(tmp_path)) as hs:
        assert _engine(hs).count() == held > 0
        assert "sail" in hs.recall("user:alice", "sailing", k=1)[0].memory.content


def test_the_first_catch_up_of_a_new_collection_builds_when_due(tmp_path: Path) -> None:
    # no search during the import (guard off): the first catch-up reconciles the new
    # collection from the rows, and still builds the index when enough is unindexed
    settings = _settings(tmp_path, guard=False, qdrant_optimize_after=3)
    with Hindsight(settings) as hs:
        hs.import_records(
            {
                "id": f"m{i}",
                "owner": "user:alice",
                "kind": "fact",
                "content": f"note {i}",
                "observed_at": "2025-05-01T10:00:00+00:00",
            }
            for i in range(5)
        )
        vectors = _vectors(hs)
        assert vectors.builds == 0
        vectors.catch_up()
        assert vectors.builds == 1 and vectors.build_seconds > 0
        assert _engine(hs).count() == 5


def _cli(home: Path, *args: str) -> Any:
    env = {"HINDSIGHT_HOME": str(home), "HINDSIGHT_VECTOR_BACKEND": "qdrant-edge"}
    return CliRunner().invoke(cli, list(args), env=env)


def test_a_second_process_gets_a_clear_error_not_a_hang(memory: Hindsight) -> None:
    memory.retain("user:alice", "I live in Paris.")
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "HINDSIGHT_HOME": str(memory.settings.home),
        "HINDSIGHT_VECTOR_BACKEND": "qdrant-edge",
    }
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "hindsight", "vectors", "check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "open in another process" in done.stderr
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 30


def test_check_finds_missing_and_orphaned_and_repair_fixes_them(memory: Hindsight) -> None:
    memory.retain("user:alice", "I live in Paris.")
    memory.retain("user:alice", "My dog is called Rex.")
    engine = _engine(memory)
    keys = sorted(engine.keys())
    engine.delete(keys[:1])  # a vector lost
    engine.upsert([(999_999, [0.1] * 384, {"owner": "user:alice"})])  # a point with no row
    home = memory.settings.home
    memory.close()
    found = _cli(home, "vectors", "check", "--json")
    assert found.exit_code == 1, found.output
    report = json.loads(found.output)
    assert len(report["missing"]) == 1 and report["orphaned"] == [999_999]
    fixed = _cli(home, "vectors", "check", "--repair", "--json")
    assert fixed.exit_code == 0, fixed.output
    clean = _cli(home, "vectors", "check", "--owner", "user:alice", "--json")
    assert clean.exit_code == 0 and json.loads(clean.output)["missing"] == []


class _Down:
    """The engine as an outage leaves it: every call fails as the client would."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise VectorsUnavailableError("Qdrant at http://qdrant:6333 failed: refused")

        return fail


def test_an_outage_keeps_writes_and_recall_falls_back_to_keywords(memory: Hindsight) -> None:
    vectors = _vectors(memory)
    engine = vectors._bound()
    vectors._engine = _Down(engine)  # type: ignore[assignment]
    memory.retain("user:alice", "My bicycle is a green Brompton.")  # acknowledged
    hits = memory.recall("user:alice", "Brompton bicycle", k=3)
    assert hits and "Brompton" in hits[0].memory.content
    assert hits[0].explanation.unavailable == ["dense"]
    assert hits[0].explanation.as_dict()["unavailable"] == ["dense"]
    vectors._engine = engine  # back: the outbox catches Qdrant up
    again = memory.recall("user:alice", "a folding bike", k=3)
    assert not again[0].explanation.unavailable
    assert vectors.check().clean


_BULK = """
import sys
from hindsight import Hindsight, Settings
hs = Hindsight(Settings(home=sys.argv[1], vector_backend="qdrant-edge"))
for i in range(10_000):
    m = hs.retain("user:bulk", f"Note {i}: the parcel number {i} went to shelf {i % 97}.")
    print(m.episodes[0], flush=True)
"""


def test_kill_9_during_a_bulk_retain_loses_nothing_acknowledged(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [sys.executable, "-c", _BULK, str(tmp_path)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    acknowledged: list[str] = []
    for line in proc.stdout:
        acknowledged.append(line.strip())
        if len(acknowledged) == 60:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    acknowledged += [line.strip() for line in proc.stdout if line.strip()]
    proc.stdout.close()
    found = _cli(tmp_path, "vectors", "check", "--json")
    assert found.exit_code == 0, found.output
    assert json.loads(found.output) == {"missing": [], "orphaned": [], "repaired": False}
    with Hindsight(_settings(tmp_path)) as hs:
        assert _engine(hs).count() == hs.store.vectors.count() >= len(acknowledged)
        for mid in acknowledged[::6]:
            (memory,) = hs.store.get([mid])
            found = [r.memory.id for r in hs.recall("user:bulk", memory.content, k=10)]
            assert mid in found


@pytest.mark.skipif(
    not os.environ.get("HINDSIGHT_TEST_QDRANT_URL"),
    reason="no Qdrant server: set HINDSIGHT_TEST_QDRANT_URL to run this on one",
)
def test_the_qdrant_backend_on_a_real_server(tmp_path: Path) -> None:
    url = os.environ["HINDSIGHT_TEST_QDRANT_URL"]
    settings = Settings(
        home=tmp_path,
        vector_backend="qdrant",
        qdrant_url=url,
        qdrant_collection=f"test-{os.getpid()}-{time.time_ns()}",
        sqlite_synchronous="OFF",
    )
    with Hindsight(settings) as hs:
        hs.retain("user:alice", "I live in Paris.", session_id="s1")
        hs.retain("user:bob", "I live in Lisbon.")
        assert {r.memory.owner for r in hs.recall("user:alice", "where do I live")} == {
            "user:alice"
        }
        hs.forget(owner="user:alice", session_id="s1")
        assert _vectors(hs).check().clean
        assert _engine(hs).count("user:alice") == hs.store.vectors.count("user:alice")


def test_compose_runs_qdrant_healthy_before_the_api() -> None:
    yaml = pytest.importorskip("yaml")
    compose = yaml.safe_load((Path(__file__).resolve().parents[1] / "compose.yaml").read_text())
    qdrant = compose["services"]["qdrant"]
    check = " ".join(qdrant["healthcheck"]["test"])
    assert "/dev/tcp/127.0.0.1/6333" in check and "/readyz" in check
    assert "curl" not in check and "wget" not in check
    assert any(volume.endswith(":/qdrant/storage") for volume in qdrant["volumes"])
    api = compose["services"]["api"]
    assert api["depends_on"]["qdrant"] == {"condition": "service_healthy"}
    assert api["environment"]["HINDSIGHT_VECTOR_BACKEND"] == "qdrant"
    assert api["environment"]["HINDSIGHT_QDRANT_URL"] == "http://qdrant:6333"
    assert "qdrantdata" in compose["volumes"]


def test_qdrant_edge_over_postgresql_rows(tmp_path: Path, database_url: str) -> None:
    settings = _settings(tmp_path, database_url=database_url)
    with Hindsight(settings) as hs:
        hs.retain("user:pg", "I keep bees on the roof.", session_id="s1")
        hs.retain("user:pg", "The hives gave ten jars of honey.", session_id="s2")
        assert "bees" in hs.recall("user:pg", "beekeeping", k=1)[0].memory.content
        hs.forget(owner="user:pg", session_id="s1")
        assert _vectors(hs).check().clean
        assert _engine(hs).count("user:pg") == hs.store.vectors.count("user:pg") > 0
