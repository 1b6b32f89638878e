"""The store contract: each operation the engine asks of its store, its working memory
and its recall cache, called directly, answers alike on every backend (SQLite,
PostgreSQL, PostgreSQL with Redis).

Most of the suite tests behaviour through the engine on SQLite alone (see conftest).
This file, beside the tests of what the store does under the engine (writing,
forgetting, recall, keyword search, working memory, the recall cache, migrations,
concurrency: those run on every backend too), is what makes that enough.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from hindsight import EmbeddingMismatchError, Settings, StoreError
from hindsight.models import Kind, Memory, Provenance, Review, Source, Status, new_id
from hindsight.store import (
    AuditEntry,
    Filter,
    QueuedJob,
    Request,
    Store,
    UsageEntry,
    WorkingMemory,
    WorkingTurn,
    open_result_cache,
    open_store,
    open_working,
)

pytestmark = pytest.mark.backends  # what this file is for

DIM = 8
T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)
ALICE, BOB = "user:alice", "user:bob"


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    opened = open_store(settings)
    opened.bind_embedding("contract", DIM)
    yield opened
    opened.close()


@pytest.fixture
def working(settings: Settings, store: Store) -> Iterator[WorkingMemory]:
    held = open_working(settings, store)
    yield held
    held.close()


def vector(seed: int) -> npt.NDArray[np.float32]:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def memory(
    owner: str,
    content: str,
    *,
    at: datetime = T0,
    kind: Kind = Kind.FACT,
    session: str | None = None,
    speaker: str | None = None,
    parents: tuple[str, ...] = (),
    source: Source = Source.USER,
    principal: str = "local",
    confidence: float = 0.9,
    **fields: Any,
) -> Memory:
    provenance = Provenance(
        source=source,
        session_id=session,
        speaker=speaker,
        derived_from=sorted(parents),
        principal=principal,
    )
    return Memory(
        id=new_id(),
        owner=owner,
        kind=kind,
        content=content,
        confidence=confidence,
        provenance=provenance,
        observed_at=at,
        created_at=at,
        updated_at=at,
        embedding_model="contract",
        **fields,
    )


def put(store: Store, *memories: Memory) -> None:
    store.write(insert=[(m, vector(i)) for i, m in enumerate(memories)])


def audit_entry(action: str, owner: str | None, *ids: str, at: datetime = T0) -> AuditEntry:
    return AuditEntry(at=at, principal="local", owner=owner, action=action, memory_ids=ids)


def job(owner: str, n: int, *, at: datetime = T0) -> QueuedJob:
    return QueuedJob(id=f"j{n}", owner=owner, operation="extract", payload={"n": n}, created_at=at)


# -- memories: rows, reads, filters ---------------------------------------------------------
def test_a_memory_comes_back_as_it_was_written_every_field(store: Store) -> None:
    parent = memory(ALICE, "I moved to Lisbon.", kind=Kind.EPISODE, session="s1")
    full = memory(
        ALICE,
        "User lives in Lisbon — à côté du fleuve",
        at=datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=UTC),
        session="s1",
        speaker="Alice",
        parents=(parent.id,),
        source=Source.EXTERNAL,
        principal="key-1",
        query_hints=["where does alice live"],
        valid_from=datetime(1, 1, 1, tzinfo=UTC),
        attribute="user.location",
        metadata={"tags": ["move"], "n": 3, "nested": {"ok": True}},
        trust=0.5,
        flags=["secret"],
        review=Review(reason="conflicts", conflicts_with=["m_x"], decision="approved"),
        screened=True,
        pinned=True,
        used_at=T0 + timedelta(days=1),
        expires_at=datetime(9999, 12, 31, tzinfo=UTC),
        status=Status.PENDING_REVIEW,
    )
    full.provenance.input_hash = "ab" * 32
    put(store, parent, full)
    assert store.get([full.id, "m_unknown", parent.id]) == [full, parent]


def test_lists_counts_and_iterates_within_every_filter(store: Store) -> None:
    day = timedelta(days=1)
    facts = [memory(ALICE, f"fact {i}", at=T0 + i * day, confidence=0.2 * i) for i in range(6)]
    episode = memory(ALICE, "a turn", at=T0, kind=Kind.EPISODE, session="s1")
    tool = memory(ALICE, "a page", at=T0, source=Source.TOOL, principal="key-2", trust=0.3)
    held = memory(ALICE, "held", at=T0, status=Status.PENDING_REVIEW)
    expiring = memory(ALICE, "soon gone", at=T0, expires_at=T0 + day)
    old = memory(ALICE, "superseded", at=T0, valid_to=T0 + day, superseded_by=facts[0].id)
    put(store, *facts, episode, tool, held, expiring, old, memory(BOB, "bob's"))
    mine = Filter(owners=[ALICE])

    def ids(flt: Filter, **kw: Any) -> list[str]:
        return [m.id for m in store.list_memories(replace(flt, **kw), limit=100)]

    listed = ids(mine)
    assert listed[:5] == [m.id for m in reversed(facts[1:])]  # newest observed first
    assert set(listed) == {m.id for m in [*facts, episode, tool, expiring]}
    assert store.count(mine) == 9 and store.count(Filter(owners=[ALICE, BOB])) == 10
    page = store.list_memories(mine, limit=2, offset=1)
    assert [m.id for m in page] == listed[1:3]
    assert [m.id for m in store.iterate(mine)] == [m.id for m in [*facts, episode, tool, expiring]]
    assert ids(mine, kinds=[Kind.EPISODE]) == [episode.id]
    assert set(ids(mine, since=T0 + 2 * day, until=T0 + 4 * day)) == {m.id for m in facts[2:5]}
    assert ids(mine, min_confidence=0.95) == [facts[5].id]  # the rest: 0.9 or below
    assert ids(mine, min_trust=0.2, sources=[Source.TOOL]) == [tool.id]
    assert ids(mine, min_trust=0.4, sources=[Source.TOOL]) == []
    assert ids(mine, principal="key-2") == [tool.id] and ids(mine, session_id="s1") == [episode.id]
    assert ids(mine, statuses=[Status.PENDING_REVIEW]) == [held.id]
    assert expiring.id not in ids(mine, live_at=T0 + day)
    assert old.id in ids(mine, current_only=False)
    assert set(ids(mine, learnt_since={ALICE: T0 + 4 * day})) == {facts[4].id, facts[5].id}


def test_finds_current_values_exact_copies_next_turns_and_speakers(store: Store) -> None:
    city = memory(ALICE, "User lives in Lyon", attribute="user.location")
    gone = memory(ALICE, "User lives in Nice", attribute="user.location", valid_to=T0)
    turns = [
        memory(ALICE, "hi", kind=Kind.EPISODE, session="s1", speaker="Alice"),
        memory(ALICE, "hello", kind=Kind.EPISODE, session="s1", speaker="Bot"),
        memory(ALICE, "hi", kind=Kind.EPISODE, session="s1", speaker="Alice"),
        memory(ALICE, "hi", kind=Kind.EPISODE, session="s2", speaker="Zoë"),
    ]
    put(store, city, gone, *turns)
    assert store.find_attribute(ALICE, Kind.FACT, "user.location") == [city]
    assert store.find_attribute(BOB, Kind.FACT, "user.location") == []
    assert store.find_exact(ALICE, Kind.FACT, "User lives in Lyon") == city
    assert store.find_exact(ALICE, Kind.FACT, "User lives in Nice") is None  # not current
    assert store.find_episodes(ALICE, "s1", "hi") == [turns[0], turns[2]]
    assert store.find_episodes(ALICE, None, "hi") == []
    mine = Filter(owners=[ALICE])
    nxt = store.next_turns([turns[0].id, turns[2].id, turns[3].id], mine)
    assert nxt == {turns[0].id: turns[1]}  # the last turn of s1 has none; s2 is apart
    assert store.next_turns([turns[0].id], replace(mine, statuses=[Status.ARCHIVED])) == {}
    assert store.speakers(ALICE) == ["Alice", "Bot", "Zoë"] and store.speakers(BOB) == []


def test_a_run_of_messages_is_found_from_any_of_them(store: Store) -> None:
    minute = timedelta(minutes=1)
    run = [
        memory(ALICE, f"part {i}", kind=Kind.EPISODE, session="s", speaker="A", at=T0 + i * minute)
        for i in range(3)
    ]
    reply = memory(ALICE, "ok", kind=Kind.EPISODE, session="s", speaker="B", at=T0 + 5 * minute)
    put(store, *run, reply)
    mates = store.run_mates([run[1].id, reply.id], Filter(owners=[ALICE]), reach=2)
    assert {m.id for m in mates[run[1].id]} == {run[0].id, run[2].id} and reply.id not in mates


# -- versions, derivations, forgetting ------------------------------------------------------
def test_an_update_supersedes_and_the_chain_is_kept(store: Store) -> None:
    old = memory(ALICE, "User lives in Lyon", attribute="user.location")
    put(store, old)
    new = memory(ALICE, "User lives in Lisbon", attribute="user.location", at=T0 + timedelta(1))
    retired = replace(old, valid_to=new.observed_at, superseded_by=new.id)
    store.write(insert=[(new, vector(9))], update=[(retired, None)])
    assert store.find_attribute(ALICE, Kind.FACT, "user.location") == [new]
    assert store.predecessors([new.id]) == [retired] and store.get([old.id]) == [retired]
    turn = memory(ALICE, "I moved to Lisbon", kind=Kind.EPISODE)
    put(store, turn)
    derived = replace(new, provenance=replace(new.provenance, derived_from=[turn.id]))
    store.write(update=[(derived, None)])
    assert store.children([turn.id]) == [derived]
    assert store.stated_values([turn.id]) == {turn.id: [None]}


def test_forgetting_cascades_restores_and_leaves_a_receipt(store: Store) -> None:
    turn = memory(ALICE, "I moved to Lisbon", kind=Kind.EPISODE)
    other = memory(ALICE, "Lisbon is lovely", kind=Kind.EPISODE)
    fact = memory(ALICE, "User lives in Lisbon", parents=(turn.id,))
    both = memory(ALICE, "User likes Lisbon", parents=(turn.id, other.id))
    summary = memory(ALICE, "Alice moved", kind=Kind.SUMMARY, parents=(turn.id, other.id))
    older = memory(ALICE, "User lives in Lyon", valid_to=T0, superseded_by=fact.id)
    put(store, turn, other, fact, both, summary, older)
    assert set(store.derived_closure([turn.id])) == {fact.id}
    closure = store.derived_closure([turn.id], quoting=[Kind.SUMMARY])
    assert set(closure) == {fact.id, summary.id}
    before = store.generations([ALICE, BOB])
    receipt = {"id": "r1", "at": T0, "owner": ALICE, "criteria": {"session": "s"}}
    receipt |= {"deleted_ids": [turn.id, *closure], "derived_ids": closure}
    restored = store.delete(
        [turn.id, *closure], receipt=receipt, audit=[audit_entry("forget", ALICE, turn.id)]
    )
    assert restored == [older.id]
    assert store.get([turn.id, fact.id, summary.id]) == []
    current = store.get([older.id])[0]
    assert current.valid_to is None and current.superseded_by is None
    assert store.children([other.id]) == store.get([both.id])  # its other parent kept it
    [kept] = store.receipts(ALICE)
    assert kept["id"] == "r1" and kept["restored_ids"] == [older.id]
    assert set(kept["deleted_ids"]) == {turn.id, fact.id, summary.id}
    [entry] = store.audit(action="forget")
    assert entry.detail["restored"] == [older.id]
    assert store.audit_about(ALICE, [older.id], limit=10) == [entry]
    after = store.generations([ALICE, BOB])
    assert after[ALICE] > before[ALICE] and after[BOB] == before[BOB]
    assert store.keyword_search(Filter(owners=[ALICE]), "moved", 5) == []


# -- transactions ----------------------------------------------------------------------------
def test_a_write_lands_whole_or_not_at_all(store: Store) -> None:
    put(store, memory(ALICE, "first"))
    again = memory(ALICE, "second")
    key = Request(ALICE, "local", "req-1", "digest", {"created": [again.id]}, T0)
    with pytest.raises(StoreError):  # the update finds no row: nothing of the write lands
        store.write(
            insert=[(again, vector(1))],
            update=[(memory(ALICE, "never written"), None)],
            request=key,
            audit=[audit_entry("retain", ALICE, again.id)],
            jobs=[job(ALICE, 1)],
        )
    assert store.get([again.id]) == [] and store.request(ALICE, "local", "req-1") is None
    assert store.audit() == [] and store.jobs() == []
    with pytest.raises(RuntimeError), store.exclusive([ALICE]):
        store.write(insert=[(again, vector(1))], request=key, jobs=[job(ALICE, 1)])
        raise RuntimeError("the plan failed")
    assert store.get([again.id]) == [] and store.jobs() == []
    with store.exclusive([ALICE]):
        store.write(insert=[(again, vector(1))], request=key, jobs=[job(ALICE, 1)])
    assert store.get([again.id]) == [again] and [j.id for j in store.jobs()] == ["j1"]
    assert store.request(ALICE, "local", "req-1") == key
    assert store.prune_requests(T0 + timedelta(seconds=1)) == 1
    assert store.request(ALICE, "local", "req-1") is None


def test_one_owner_has_one_writer_at_a_time(store: Store) -> None:
    inside: list[str] = []
    entered = threading.Event()

    def other() -> None:
        with store.exclusive([ALICE]):
            inside.append("other")

    with store.exclusive([ALICE, BOB]):
        thread = threading.Thread(target=lambda: (entered.set(), other()))
        thread.start()
        entered.wait(5)
        thread.join(0.3)
        assert inside == []  # still waiting for the owner
        inside.append("first")
    thread.join(10)
    assert inside == ["first", "other"]


# -- search ---------------------------------------------------------------------------------
def test_vector_and_keyword_search_stay_within_the_filter(store: Store) -> None:
    cello = memory(ALICE, "I play the cello in a quartet", speaker="Alice")
    piano = memory(ALICE, "My brother plays the piano")
    bobs = memory(BOB, "Bob plays the cello too")
    store.write(insert=[(cello, vector(1)), (piano, vector(2)), (bobs, vector(1))])
    mine = Filter(owners=[ALICE])
    hits = store.vector_search(mine, vector(1), 5)
    assert [h[0] for h in hits] == [cello.id, piano.id] and hits[0][1] == pytest.approx(1.0)
    assert [h[0] for h in store.vector_search(Filter(owners=[BOB]), vector(1), 5)] == [bobs.id]
    assert [h[0] for h in store.keyword_search(mine, "cello", 5)] == [cello.id]
    assert store.keyword_search(replace(mine, kinds=[Kind.EPISODE]), "cello", 5) == []
    everyone = [cello.id, piano.id, bobs.id]
    assert store.passing(mine, everyone) == {cello.id, piano.id}
    assert store.passing(replace(mine, kinds=[Kind.EPISODE]), everyone) == set()
    frequencies, docs = store.term_frequencies(ALICE, ["cello", "violin"])
    assert frequencies.get("cello") == 1 and not frequencies.get("violin") and docs == 2
    store.warm(ALICE)
    assert [h[0] for h in store.keyword_search(mine, "Alice quartet", 5)] == [cello.id]


def test_searches_counts_and_writes_at_once_never_wait_on_each_other(store: Store) -> None:
    # Each of these catches an owner's in-process index up with the database under the
    # index's lock; a writer between them gives every call something to catch up.
    put(store, *(memory(ALICE, f"note {i} about the cello quartet") for i in range(50)))
    stop = threading.Event()
    failures: list[BaseException] = []

    def loop(call: Any) -> None:
        try:
            while not stop.is_set():
                call()
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    calls = [
        lambda: store.keyword_search(Filter(owners=[ALICE]), "cello quartet", 5),
        lambda: store.term_frequencies(ALICE, ["cello", "quartet"]),
        lambda: store.warm(ALICE),
        lambda: store.vector_search(Filter(owners=[ALICE]), vector(3), 5),
        lambda: put(store, memory(ALICE, "one more line about the cello")),
    ]
    threads = [threading.Thread(target=loop, args=(call,), daemon=True) for call in calls]
    for thread in threads:
        thread.start()
    stop.wait(2.0)
    stop.set()
    for thread in threads:
        thread.join(20)
    assert not [t for t in threads if t.is_alive()], "a call waits on another for ever"
    assert failures == []


def test_a_store_keeps_one_model_and_moves_to_another_whole(store: Store) -> None:
    fact = memory(ALICE, "I play the cello")
    put(store, fact)
    assert store.embedding_binding() == ("contract", DIM)
    with pytest.raises(EmbeddingMismatchError):
        store.bind_embedding("other", DIM)
    assert store.vector_versions() == {("contract", DIM): 1}
    store.bind_embedding("other", DIM * 2, rebind=True)
    assert store.stale_vectors(10) == [fact]
    with pytest.raises(StoreError):
        store.finish_rebind()
    moved = replace(fact, embedding_model="other")
    store.replace_vectors([(moved, np.ones(DIM * 2, dtype=np.float32) / np.sqrt(DIM * 2))])
    assert store.stale_vectors(10) == [] and store.vector_versions() == {("other", DIM * 2): 1}
    store.finish_rebind()
    store.bind_embedding("other", DIM * 2)
    assert store.get([fact.id]) == [moved]


# -- what the engine keeps beside memories --------------------------------------------------
def test_the_audit_log_pages_filters_verifies_and_prunes(store: Store) -> None:
    hour = timedelta(hours=1)
    entries = [
        audit_entry("retain", ALICE, "m_a", at=T0),
        audit_entry("recall", ALICE, "m_a", at=T0 + hour),
        AuditEntry(at=T0 + 2 * hour, principal="key-2", owner=BOB, action="retain"),
        audit_entry("update", ALICE, "m_a", at=T0 + 3 * hour),
    ]
    store.append_audit(entries)
    log = store.audit()
    assert [e.action for e in log] == ["update", "retain", "recall", "retain"]  # newest first
    assert all(e.seq is not None and e.hash for e in log)
    assert [e.seq for e in store.audit(limit=2, before_seq=log[1].seq)] == [log[2].seq, log[3].seq]
    assert [e.owner for e in store.audit(principal="key-2")] == [BOB]
    assert len(store.audit(owners=[ALICE], since=T0 + hour, until=T0 + 3 * hour)) == 2
    assert [e.action for e in store.audit_about(ALICE, ["m_a"], limit=10)] == ["retain", "update"]
    assert store.verify_audit() == (4, None)
    assert store.prune_audit(T0 + 2 * hour) == 2
    assert store.verify_audit() == (2, None)


def test_llm_usage_adds_up_by_owner_operation_and_model(store: Store) -> None:
    def call(owner: str, at: datetime, tokens: int, **kw: Any) -> UsageEntry:
        return UsageEntry(at, owner, "extract", "openai", "m", tokens, 1, **kw)

    for entry in (
        call(ALICE, T0, 10, cost=0.5),
        call(ALICE, T0 + timedelta(hours=1), 20, failed=True, retries=2, cost=0.25),
        call(BOB, T0, 7, dropped=True, dropped_items=3),
    ):
        store.record_usage(entry)
    rows = store.usage()
    assert [(r.owner, r.calls, r.prompt_tokens) for r in rows] == [(ALICE, 2, 30), (BOB, 1, 7)]
    assert (rows[0].failures, rows[0].retries, rows[0].cost) == (1, 2, 0.75)
    assert (rows[1].dropped, rows[1].dropped_items, rows[1].cost) == (1, 3, None)
    assert [r.owner for r in store.usage(owners=[BOB])] == [BOB]
    assert store.usage(since=T0 + timedelta(minutes=30))[0].calls == 1
    assert store.tokens_used(ALICE, T0) == 32 and store.tokens_used(ALICE, T0 + timedelta(1)) == 0


def test_the_job_queue_leases_each_job_to_one_worker(store: Store) -> None:
    minute = timedelta(minutes=1)
    store.write(jobs=[job(ALICE, n, at=T0 + n * minute) for n in range(3)] + [job(BOB, 9)])
    store.write(jobs=[job(ALICE, 0)])  # queued already: not again
    assert store.job_counts() == {"pending": 4, "deferred": 0, "running": 0, "done": 0, "failed": 0}
    [a] = store.claim_jobs(
        "a", now=T0 + 5 * minute, until=T0 + 10 * minute, limit=1, owners=[ALICE]
    )
    b = store.claim_jobs("b", now=T0 + 5 * minute, until=T0 + 10 * minute, limit=5)
    assert a.id == "j0" and a.attempts == 1 and a.state == "running" and a.holder == "a"
    assert {j.id for j in b} == {"j1", "j2", "j9"}  # never a's
    assert store.claim_jobs("c", now=T0 + 5 * minute, until=T0 + 10 * minute, limit=5) == []
    [lapsed] = store.claim_jobs("c", now=T0 + 11 * minute, until=T0 + 20 * minute, limit=1)
    assert lapsed.id == "j0" and lapsed.attempts == 2
    assert not store.finish_job("j0", "a", state="done", now=T0 + 12 * minute)  # taken over
    assert store.finish_job("j0", "c", state="done", now=T0 + 12 * minute, result={"ok": 1})
    assert store.finish_job("j1", "b", state="failed", now=T0 + 12 * minute, error="boom")
    later = T0 + 30 * minute
    assert store.finish_job("j2", "b", state="deferred", now=T0 + 12 * minute, not_before=later)
    assert [j.result for j in store.jobs(states=["done"])] == [{"ok": 1}]
    assert [j.error for j in store.jobs(owners=[ALICE], states=["failed"])] == ["boom"]
    assert store.claim_jobs("d", now=T0 + 29 * minute, until=later, limit=5, owners=[ALICE]) == []
    assert store.retry_jobs(owners=[ALICE], now=T0 + 13 * minute) == 1
    assert store.job_counts([ALICE]) == {
        "pending": 1,
        "deferred": 1,
        "running": 0,
        "done": 1,
        "failed": 0,
    }


def test_a_lease_has_one_holder_until_it_lapses(store: Store) -> None:
    hour = timedelta(hours=1)
    assert store.lease("maintain", "a", until=T0 + hour, now=T0)
    assert not store.lease("maintain", "b", until=T0 + hour, now=T0 + hour / 2)
    assert store.lease("maintain", "a", until=T0 + 2 * hour, now=T0 + hour / 2)  # renewed
    assert store.lease("other", "b", until=T0 + hour, now=T0)
    assert store.lease("maintain", "b", until=T0 + 3 * hour, now=T0 + 2 * hour + hour / 60)


def test_owners_generations_access_and_statistics(store: Store, settings: Settings) -> None:
    put(
        store,
        memory(BOB, "bob's"),
        memory(ALICE, "a fact"),
        memory(ALICE, "a turn", kind=Kind.EPISODE),
    )
    assert store.owners() == [ALICE, BOB] and store.recent_owners(1) == [ALICE]
    [fact] = store.list_memories(Filter(owners=[ALICE], kinds=[Kind.FACT]), limit=1)
    before = store.generations([ALICE])
    store.record_access({fact.id: 2}, T0 + timedelta(1))
    assert store.generations([ALICE]) == before  # access changes no answer
    seen = store.get([fact.id])[0]
    assert seen.access_count == 2 and seen.last_accessed_at == T0 + timedelta(1)
    stats = store.stats(ALICE)
    assert (stats.memories, stats.owners, stats.working_turns) == (2, 1, 0)
    assert stats.by_kind == {"fact": 1, "episode": 1} and stats.by_status == {"active": 2}
    assert stats.by_month == {"2025-05": {"fact": 1, "episode": 1}}
    assert stats.by_month_status == {"2025-05": {"active": 2}}
    assert (stats.embedding_model, stats.dimension) == ("contract", DIM)
    assert stats.size_bytes == len("a fact") + len("a turn") + 2 * (2 + 2) + 2 * 4 * DIM
    assert store.stats().memories == 3 and store.stats().by_month == {}
    described = store.describe()
    assert described["database"] == ("sqlite" if settings.database_url is None else "postgresql")
    identity = store.identity()
    again = open_store(settings)  # another process's view of the same data
    try:
        assert again.identity() == identity
    finally:
        again.close()


# -- working memory, the recall cache ----------------------------------------------------------
def turn(
    session: str, content: str, *, at: datetime, ttl: timedelta, owner: str = ALICE
) -> WorkingTurn:
    return WorkingTurn(
        seq=0,
        owner=owner,
        session_id=session,
        role="user",
        content=content,
        tokens=len(content.split()),
        created_at=at,
        expires_at=at + ttl,
        speaker="Alice",
        metadata={"mood": "ok"},
    )


def test_working_memory_keeps_sessions_in_order_until_they_expire(working: WorkingMemory) -> None:
    now = datetime.now(UTC)  # Redis expires by its own clock
    hour = timedelta(hours=1)
    first = working.wm_append(turn("s1", "one two", at=now, ttl=hour))
    second = working.wm_append(turn("s1", "three", at=now, ttl=hour))
    working.wm_append(turn("s2", "elsewhere", at=now, ttl=hour))
    working.wm_append(turn("s1", "bob's", at=now, ttl=hour, owner=BOB))
    brief = working.wm_append(turn("s3", "brief", at=now - 2 * hour, ttl=hour))
    assert first.seq < second.seq
    window = working.wm_window(ALICE, "s1", now)
    assert window == [first, second] and window[0].metadata == {"mood": "ok"}
    assert working.wm_window(ALICE, "s3", now) == [] and brief.seq > second.seq
    assert sorted(working.wm_sessions(ALICE, now)) == [("s1", 2, 3), ("s2", 1, 1)]
    assert working.wm_count(BOB) == 1
    working.wm_purge_expired(now)
    assert working.wm_count(ALICE) == 3 and working.wm_count() == 4
    assert working.wm_clear(ALICE, "s1", up_to_seq=first.seq) == 1
    assert working.wm_window(ALICE, "s1", now) == [second]
    assert working.wm_clear(ALICE, "s2") == 1 and working.wm_count(ALICE) == 1
    assert working.wm_purge_expired(now + 2 * hour) >= 0  # Redis may have dropped them itself
    assert working.wm_window(ALICE, "s1", now + 2 * hour) == [] and working.wm_count(ALICE) == 0


def test_the_recall_cache_answers_what_was_put_under_a_key(settings: Settings) -> None:
    cache = open_result_cache(settings)
    assert cache is not None
    try:
        assert cache.get("k") is None
        cache.put("k", "answer", 60)
        cache.put("other", "another", 60)
        assert cache.get("k") == "answer" and cache.get("other") == "another"
        cache.put("k", "newer", 60)
        assert cache.get("k") == "newer"
    finally:
        cache.close()
