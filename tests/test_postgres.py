"""What only the PostgreSQL store has: several servers on one database, pgvector search,
its errors. (Every test that takes ``settings`` runs on PostgreSQL too: see conftest.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import numpy as np
import psycopg
import pytest
from fastapi.testclient import TestClient
from providers import TinyHash
from pydantic import ValidationError as SettingsError

from hindsight import Hindsight, Settings, StoreError
from hindsight.api import create_app
from hindsight.embed import Embeddings
from hindsight.models import Kind
from hindsight.store import Filter, open_store, postgres
from hindsight.store.sql import SQLStore
from hindsight.store.vectors.pgvector import PgVectors


@pytest.fixture
def pg(tmp_path_factory: pytest.TempPathFactory, database_url: str) -> Settings:
    return Settings(home=tmp_path_factory.mktemp("home"), database_url=database_url)


def test_two_servers_on_one_database_see_each_others_writes(
    pg: Settings, embedder: Embeddings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    other = pg.model_copy(update={"home": tmp_path_factory.mktemp("other")})  # own caches
    with Hindsight(pg, embedder=embedder) as a, Hindsight(other, embedder=embedder) as b:
        a.retain("user:alice", "I play the cello in a quartet.")
        own = a.stats().size_bytes  # hindsight's tables only, indexes included
        with psycopg.connect(pg.database_url or "") as conn:
            conn.execute("CREATE TABLE not_ours (x text)")
            conn.execute(
                "INSERT INTO not_ours SELECT repeat('x', 1000) FROM generate_series(1, 5000)"
            )
        assert own > 0 and a.stats().size_bytes < own + 100_000
        assert [r.memory.content for r in b.recall("user:alice", "cello", k=1)] == [
            "I play the cello in a quartet."
        ]  # b's keyword index was built now; the next write must reach it too
        a.retain("user:alice", "My sister Maya lives in Lisbon.")
        hits = b.store.keyword_search(Filter(owners=["user:alice"]), "Lisbon", 5)
        assert "Lisbon" in b.get(hits[0][0]).content
        receipt = b.forget(owner="user:alice")
        assert receipt.deleted_ids
        assert a.recall("user:alice", "cello Lisbon", k=5) == []


def test_vector_search_is_exact_within_a_narrow_filter(pg: Settings) -> None:
    """An HNSW pass that a filter thins below ``k`` is redone exactly."""
    n = 20_000  # enough rows that the planner prefers the HNSW index
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((n, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store = open_store(pg.model_copy(update={"hnsw_threshold": 50_000}))
    assert isinstance(store, SQLStore) and isinstance(store.vectors, PgVectors)
    try:
        store.bind_embedding("random", 16)
        with store.db.connection() as conn:  # type: ignore[attr-defined]
            raw = conn.raw
            index = raw.execute(  # built after the rows, not row by row (20 s of the suite)
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'vectors_hnsw_16'"
            ).fetchone()[0]
            with raw.transaction():  # one owner; one memory in 200 a preference
                raw.execute("DROP INDEX vectors_hnsw_16")
                raw.execute(
                    "INSERT INTO memories (id, owner, kind, content, confidence, source, "
                    "observed_at, created_at, updated_at, status) SELECT 'm' || i, 'user:alice', "
                    "CASE WHEN i %% 200 = 0 THEN 'preference' ELSE 'fact' END, 'x' || i, 1, "
                    "'user', 0, 0, 0, 'active' FROM generate_series(1, %s) i",
                    (n,),
                )
                with raw.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO vectors SELECT rowid, owner, 'random', 16, %s::vector "
                        "FROM memories WHERE id = %s",
                        [(str(v.tolist()), f"m{i + 1}") for i, v in enumerate(vectors)],
                    )
                raw.execute(index)
                raw.execute("ANALYZE")
            query = vectors[199]  # m200, a preference
            scores = vectors @ query
            rare = Filter(owners=["user:alice"], kinds=[Kind.PREFERENCE])
            # an owner the keyword index does not hold
            assert not store.vectors.searched_exactly(rare, store)
            assert "vectors_hnsw_16" in _plan(store, rare, query, exact=False)  # the planner
            found = store.vector_search(rare, query, 10)  # takes the index; the filter thins it
            preferences = [i for i in range(n) if (i + 1) % 200 == 0]
            exact = sorted(preferences, key=lambda i: -scores[i])[:10]
            assert [mid for mid, _ in found] == [f"m{i + 1}" for i in exact]
            assert found[0][1] == pytest.approx(1.0, abs=1e-5)
            wide = store.vector_search(Filter(owners=["user:alice"]), query, 20)
            best = {f"m{i + 1}" for i in np.argsort(-scores)[:20]}
            assert len(best & {mid for mid, _ in wide}) >= 18  # HNSW may swap a near tie

            # An owner under the threshold that the keyword index holds is searched exactly
            # from the start, as the embedded store searches it, where the planner takes HNSW.
            with raw.transaction():
                raw.execute(
                    "INSERT INTO keyword_docs SELECT rowid, owner, content, '' FROM memories"
                )
            assert store.keyword_search(rare, "x200", 1)  # the index holds alice: 20,000
            assert store.vectors.searched_exactly(
                rare, store
            )  # under this store's threshold, 50,000
            assert "vectors_hnsw_16" not in _plan(store, rare, query, exact=True)
            assert [mid for mid, _ in store.vector_search(rare, query, 10)] == [
                f"m{i + 1}" for i in sorted(preferences, key=lambda i: -scores[i])[:10]
            ]
    finally:
        store.close()


def test_hnsw_ef_sets_pgvectors_candidate_list(pg: Settings) -> None:
    store = open_store(pg.model_copy(update={"hnsw_ef": 321}))
    try:
        with store.db.connection() as conn:  # type: ignore[attr-defined]
            assert conn.raw.execute("SHOW hnsw.ef_search").fetchone()[0] == "321"
    finally:
        store.close()


def _plan(store: SQLStore, flt: Filter, query: np.ndarray, *, exact: bool) -> str:
    """The plan of the query vector_search runs, exact or not."""
    assert isinstance(store.vectors, PgVectors)
    sql, args = store.vectors.query(flt, query, 10, exact=exact)
    return " ".join(r[0] for r in store.db.read(f"EXPLAIN {sql}", args))


def test_reembedding_to_another_dimension_moves_the_hnsw_index(
    pg: Settings, embedder: Embeddings
) -> None:
    with Hindsight(pg, embedder=TinyHash()) as hs:
        hs.retain("user:alice", "I love jazz.")

    def indexes() -> set[str]:
        with psycopg.connect(pg.database_url or "") as conn:
            rows = conn.execute(
                "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%%' "
                "AND schemaname = current_schema()"
            ).fetchall()
        return {r[0] for r in rows}

    assert indexes() == {f"vectors_hnsw_{TinyHash.dimension}"}
    from hindsight.jobs import reembed

    assert reembed(pg, embedder=embedder) > 0
    assert indexes() == {f"vectors_hnsw_{embedder.dimension}"}
    with Hindsight(pg, embedder=embedder) as hs:
        assert hs.recall("user:alice", "what music does she enjoy?", k=1)


def test_a_url_that_is_not_postgresql_is_refused_before_connecting() -> None:
    with pytest.raises(SettingsError, match="must be a PostgreSQL URL"):
        Settings(database_url="mysql://localhost/db")


def test_an_unreachable_database_is_one_clear_error(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    settings = Settings(
        home=tmp_path_factory.mktemp("home"),
        database_url="postgresql://nobody@127.0.0.1:1/none?connect_timeout=2",
    )
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL") as caught:
        Hindsight(settings, embedder=TinyHash())
    assert "\n" not in str(caught.value)


def test_a_database_gone_under_the_server_is_a_503(
    pg: Settings, embedder: Embeddings, caplog: pytest.LogCaptureFixture
) -> None:
    hs = Hindsight(pg, embedder=embedder)
    with TestClient(
        create_app(hs, mcp=False), base_url="http://127.0.0.1", raise_server_exceptions=False
    ) as api:
        assert api.get("/ready").status_code == 200
        hs.store.close()  # the connection goes away
        response = api.get("/v1/stats", params={"owner": "user:alice"})
        assert response.status_code == 503
        error = response.json()["error"]
        assert error["type"] == "StoreError"
        # the caller gets an incident id, the server log the cause; no socket, no SQL
        incident = error["message"].split("incident ")[1].split()[0]
        assert "/" not in error["message"] and "connection" not in error["message"]
        [logged] = [r.getMessage() for r in caplog.records if incident in r.getMessage()]
        assert "closed" in logged or "connection" in logged
        assert api.get("/ready").status_code == 503


def test_content_of_any_length_is_found_exactly(hs_pg: Hindsight) -> None:
    long = "a very long note " * 1_500  # past a B-tree entry's size: the index hashes it
    (first,) = hs_pg.retain("user:alice", long, kind="fact").created
    again = hs_pg.retain("user:alice", long, kind="fact")
    assert again.created == [] and first in again.updated  # a duplicate, found exactly


@pytest.fixture
def hs_pg(pg: Settings, embedder: Embeddings) -> Iterator[Hindsight]:
    with Hindsight(pg, embedder=embedder) as engine:
        yield engine


def test_writers_overlap_but_append_to_the_log_in_commit_order(
    pg: Settings, embedder: Embeddings
) -> None:
    """A writer does its rows and vectors while another holds the log lock, and takes
    no log seq until it has the lock: seqs then commit in order."""
    with Hindsight(pg, embedder=embedder) as hs, psycopg.connect(pg.database_url or "") as other:
        hs.retain("user:alice", "I keep bees.")
        seq = "SELECT last_value FROM keyword_log_seq_seq"
        before = other.execute(seq).fetchone()
        other.execute("SELECT pg_advisory_xact_lock(%s)", (postgres._LOG_LOCK,))  # held
        writer = threading.Thread(target=hs.retain, args=("user:alice", "I moved to Porto."))
        writer.start()
        waiting = (  # a backend waiting for the advisory lock: has it written yet?
            "SELECT backend_xid IS NOT NULL FROM pg_stat_activity "
            "WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'"
        )
        deadline = time.monotonic() + 10
        with psycopg.connect(pg.database_url or "", autocommit=True) as watch:
            while not (found := watch.execute(waiting).fetchall()):
                assert time.monotonic() < deadline, "the writer never reached the log lock"
                time.sleep(0.01)
        assert found == [(True,)]  # its rows and vectors are written (not yet committed)
        assert other.execute(seq).fetchone() == before  # but it has taken no log seq
        other.commit()  # releases the lock
        writer.join(10)
        assert not writer.is_alive()
        assert other.execute(seq).fetchone() > before
        assert hs.recall("user:alice", "Porto", k=1)[0].memory.content == "I moved to Porto."


def test_a_broken_connection_is_made_anew(hs_pg: Hindsight, pg: Settings) -> None:
    """A database restart or failover fails the call that meets it, not every one after."""
    hs_pg.retain("user:alice", "I keep bees.")
    with hs_pg.store.db.connection() as conn:  # type: ignore[attr-defined]
        pid = conn.raw.info.backend_pid  # the next call's: the pool gives the last returned
    with psycopg.connect(pg.database_url or "", autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(StoreError, match=r"terminat|closed|lost"):
        hs_pg.list_memories("user:alice")
    assert [m.content for m in hs_pg.list_memories("user:alice", kinds=["episode"])] == [
        "I keep bees."
    ]
    hs_pg.retain("user:alice", "I moved to Porto.")  # writes too
    assert hs_pg.recall("user:alice", "Porto", k=1)[0].memory.content == "I moved to Porto."


WRITER = """
import sys
from hindsight import Hindsight, Settings
topics = ["gardening", "astronomy", "cooking", "chess", "sailing", "pottery"]
with Hindsight(Settings(home=sys.argv[1])) as hs:  # HINDSIGHT_DATABASE_URL from the env
    i = 0
    while True:  # write until killed
        result = hs.retain("user:crash", f"note {i} on {topics[i % 6]}", kind="fact")
        print((result.created + result.updated)[0], flush=True)
        i += 1
"""


def test_a_killed_writer_leaves_a_consistent_database_and_no_lock(
    pg: Settings, embedder: Embeddings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env["HINDSIGHT_DATABASE_URL"] = pg.database_url or ""
    home = tmp_path_factory.mktemp("writer")
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(home)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    committed = [line.strip() for _, line in zip(range(25), proc.stdout, strict=False)]
    proc.send_signal(signal.SIGKILL)  # mid-transaction, most likely
    proc.wait(timeout=30)
    proc.stdout.close()

    with psycopg.connect(pg.database_url or "") as conn:
        counts = conn.execute(
            "SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM vectors), "
            "(SELECT count(*) FROM keyword_docs)"
        ).fetchone()
    assert counts is not None and counts[0] == counts[1] == counts[2] >= 25
    with Hindsight(pg, embedder=embedder) as hs:  # another server, caches of its own
        assert len(hs.store.get(committed)) == len(committed)  # every acknowledged write
        for memory in hs.store.get(committed[-3:]):
            assert memory.id in [r.memory.id for r in hs.recall("user:crash", memory.content)]
        done = threading.Event()  # a lock the killed writer held must not outlive it

        def write() -> None:
            hs.retain("user:crash", "note after the crash on knitting", kind="fact")
            done.set()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        assert done.wait(30), "a write after the crash is still waiting"
        assert "knitting" in hs.recall("user:crash", "knitting", k=1)[0].memory.content


def test_an_embedded_store_moves_to_postgresql_by_export_and_import(
    pg: Settings, embedder: Embeddings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    embedded = Settings(home=tmp_path_factory.mktemp("embedded"), sqlite_synchronous="OFF")
    owner = "user:alice"
    with Hindsight(embedded, embedder=embedder) as old:
        old.retain(owner, "I live in Paris and I love jazz.", session_id="s1")
        old.retain(owner, "I moved to Berlin.", session_id="s1")  # supersedes Paris
        old.retain(owner, "My sister Maya is a violinist.", session_id="s2")
        records = list(old.export(owner))
        before = [(r.memory.id, r.score) for r in old.recall(owner, "where does she live?")]
    with Hindsight(pg, embedder=embedder) as new:
        assert new.import_records(records)["imported"] == len(records)
        assert list(new.export(owner)) == records  # history and links included
        after = [(r.memory.id, r.score) for r in new.recall(owner, "where does she live?")]
    assert [mid for mid, _ in after] == [mid for mid, _ in before]
    assert [s for _, s in after] == pytest.approx([s for _, s in before], rel=1e-3)


def test_an_owner_new_to_the_statistics_is_searched_by_key(hs_pg: Hindsight, pg: Settings) -> None:
    """Right after an owner's first writes the planner's statistics do not know it (one
    row, they say); the vector search must still join memories by key, not compare
    every vector of the owner with every memory of it."""
    hs_pg.retain("user:alice", "I keep bees.")
    with psycopg.connect(pg.database_url or "", autocommit=True) as conn:
        conn.execute("ANALYZE")  # statistics that know alice only
    records = [
        {
            "id": f"m_{i:028x}",
            "owner": "user:bob",
            "kind": "fact",
            "content": f"note {i}",
            "observed_at": "2024-01-01T00:00:00+00:00",
        }
        for i in range(400)
    ]
    hs_pg.import_records(records)
    bob = Filter(owners=["user:bob"])
    query = hs_pg.embedder.encode_query("note 7")
    store = hs_pg.store
    assert isinstance(store, SQLStore)
    for exact in (True, False):
        plan = _plan(store, bob, query, exact=exact)
        assert "Join Filter" not in plan, plan
    assert hs_pg.recall("user:bob", "note 7", k=1)[0].memory.content == "note 7"


def test_a_benchmark_writes_into_a_schema_of_its_own(
    database_url: str, postgres_server: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from click.testing import CliRunner

    from hindsight.cli import cli

    def schemas() -> set[str]:
        with psycopg.connect(postgres_server) as conn:
            rows = conn.execute("SELECT nspname FROM pg_namespace").fetchall()
        return {r[0] for r in rows}

    before = schemas()
    home = str(tmp_path_factory.mktemp("bench"))
    result = CliRunner().invoke(
        cli,
        ["--home", home, "bench", "scale", "--n", "60", "--queries", "4", "--json"],
        env={"HINDSIGHT_DATABASE_URL": database_url},
    )
    assert result.exit_code == 0, result.output
    assert schemas() == before  # its schema is gone, and it wrote nowhere else
    with psycopg.connect(database_url) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables "
            "WHERE table_schema = current_schema() AND table_name = 'memories'"
        ).fetchone()
    assert tables == (0,)  # the configured schema holds nothing of it


def test_a_stuck_statement_is_cancelled_and_keepalives_are_on(pg: Settings) -> None:
    store = open_store(pg.model_copy(update={"statement_timeout_seconds": 0.2}))
    try:
        assert isinstance(store, SQLStore)
        assert store.db.read("SHOW statement_timeout") == [("200ms",)]
        with store.db.connection() as conn:  # type: ignore[attr-defined]
            assert conn.raw.info.get_parameters()["keepalives_idle"] == "30"
        started = time.monotonic()
        with pytest.raises(StoreError, match="statement timeout"):
            store.db.read("SELECT pg_sleep(5)")
        assert time.monotonic() - started < 3
        assert store.db.read("SELECT 1") == [(1,)]  # and the store goes on
    finally:
        store.close()


@pytest.fixture
def pg_db(pg: Settings) -> Iterator[postgres.PostgresDatabase]:
    db = postgres.PostgresDatabase(pg.database_url or "", pool_size=3)
    yield db
    db.close()


def _side_by_side(db: postgres.PostgresDatabase, n: int) -> list[int]:
    """The backends of ``n`` threads that each hold a snapshot until all of them do: on
    one shared connection the second would wait for the first, and the barrier break."""
    together = threading.Barrier(n, timeout=30)
    pids: list[int] = []

    def reader() -> None:
        with db.snapshot():
            pids.append(db.read("SELECT pg_backend_pid()")[0][0])
            together.wait()

    threads = [threading.Thread(target=reader) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return pids


def test_readers_of_one_server_read_side_by_side(pg_db: postgres.PostgresDatabase) -> None:
    pids = _side_by_side(pg_db, 3)
    assert len(set(pids)) == 3  # three connections at once, the pool's size


def test_a_read_does_not_wait_for_a_write_of_the_same_server(
    pg_db: postgres.PostgresDatabase,
) -> None:
    with pg_db.exclusive(["user:alice"]):
        pg_db.held.execute("INSERT INTO meta (key, value) VALUES ('draft', '1')")  # type: ignore[union-attr]
        seen: list[object] = []
        reader = threading.Thread(target=lambda: seen.extend(pg_db.read("SELECT key FROM meta")))
        reader.start()
        reader.join(30)
        assert not reader.is_alive() and ("draft",) not in seen  # not yet committed
        assert ("draft",) in pg_db.read("SELECT key FROM meta")  # the writer's own reads see it
    assert ("draft",) in pg_db.read("SELECT key FROM meta")


def test_the_pool_size_setting_bounds_a_servers_connections(pg: Settings) -> None:
    store = open_store(pg.model_copy(update={"database_pool_size": 2}))
    try:
        db = store.db
        assert isinstance(db, postgres.PostgresDatabase)
        held = threading.Barrier(3, timeout=30)
        leave = threading.Event()
        pids: list[int] = []

        def holder() -> None:
            with db.snapshot():
                pids.append(db.read("SELECT pg_backend_pid()")[0][0])
                held.wait()
                leave.wait(30)

        holders = [threading.Thread(target=holder) for _ in range(2)]
        for t in holders:
            t.start()
        held.wait()  # both connections in use
        third: list[int] = []
        waiter = threading.Thread(
            target=lambda: third.append(db.read("SELECT pg_backend_pid()")[0][0])
        )
        waiter.start()
        leave.set()
        for t in [*holders, waiter]:
            t.join(30)
        assert len(set(pids)) == 2 and third[0] in pids  # it waited for one: no third made
    finally:
        store.close()
    with pytest.raises(SettingsError):
        Settings(database_pool_size=1)  # a writer may hold one while a reader needs another


def test_a_restart_fails_one_call_not_one_per_pooled_connection(
    pg_db: postgres.PostgresDatabase, pg: Settings
) -> None:
    pids = _side_by_side(pg_db, 3)  # three idle connections in the pool
    with psycopg.connect(pg.database_url or "", autocommit=True) as admin:
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(StoreError, match=r"terminat|closed|lost"):
        pg_db.read("SELECT 1")
    assert pg_db.read("SELECT 1") == [(1,)]  # the other two were let go with the first
    assert pg_db.read("SELECT pg_backend_pid()")[0][0] not in pids
