"""LLM extraction as a durable background job, against real HTTP servers on loopback
that speak the OpenAI and Anthropic protocols: what is queued, sent, stored, dropped,
retried, deferred and counted. Most tests run the queue by hand (``llm_worker`` off)
and move the engine's clock; one runs the worker thread.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from conftest import execute_sql
from llm_servers import (
    FakeLLM,
    Reply,
    Seen,
    anthropic_answer,
    engines,
    error,
    openai_answer,
)
from servers import live_server

from hindsight import Client, Hindsight, Settings
from hindsight.access import KeyRing
from hindsight.api import create_app
from hindsight.cli import cli
from hindsight.embed import Embeddings
from hindsight.errors import PermissionDeniedError
from hindsight.extract.llm import SCHEMA
from hindsight.models import Kind, Memory
from hindsight.store import Filter

ALICE = "user:alice"
T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)


class Clock:
    """The engine's time, moved by the test."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make(
    settings: Settings, server: FakeLLM, embedder: Embeddings, clock: Clock
) -> Iterator[Callable[..., Hindsight]]:
    # the LLM check asks the model too: test_llm_guard's
    with engines(settings, server, embedder, clock, llm_assess=False) as make:
        yield make


@pytest.fixture
def hs(make: Callable[..., Hindsight]) -> Hindsight:
    return make()


def memories(*items: dict[str, Any]) -> str:
    return json.dumps({"memories": list(items)})


def fact(content: str, turn: int = 0, **more: Any) -> dict[str, Any]:
    return {
        "kind": "fact",
        "content": content,
        "key": None,
        "query_hints": [],
        "confidence": 0.9,
        "turn": turn,
        **more,
    }


def prompt_of(seen: Seen) -> str:
    """The user message of a chat-completions request: the turns and known memories."""
    return str(seen.body["messages"][-1]["content"])


def derived(hs: Hindsight, extractor: str = "llm:m") -> list[Memory]:
    return [
        m
        for m in hs.store.iterate(Filter(owners=[ALICE], current_only=False))
        if m.metadata.get("extractor") == extractor
    ]


def test_retain_stores_at_once_and_queues_extraction_for_later(
    hs: Hindsight, server: FakeLLM
) -> None:
    result = hs.retain(ALICE, "My son Evan started at Lincoln Elementary yesterday.")
    assert server.seen == []  # nothing was asked of the model during the write
    [job] = hs.jobs(ALICE).jobs
    assert (job.state, job.operation, job.payload["memories"]) == (
        "pending",
        "extract",
        result.episodes,
    )
    server.script(
        openai_answer(
            memories(
                fact(
                    "User's son Evan started at Lincoln Elementary on 2025-04-30.",
                    key="Evan: school",
                    value="Lincoln Elementary",
                    query_hints=["Where does Evan go to school?"],
                )
            )
        )
    )
    assert hs.run_jobs() == 1
    [request] = server.seen
    assert request.body["response_format"]["type"] == "json_schema"
    assert request.body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert "2025-05-01 09:00 (Thursday) user, User: My son Evan started" in prompt_of(request)
    [memory] = derived(hs)
    assert memory.content == "User's son Evan started at Lincoln Elementary on 2025-04-30."
    assert (memory.kind, memory.attribute, memory.metadata["value"]) == (
        Kind.FACT,
        "evan_school",
        "Lincoln Elementary",
    )
    assert memory.query_hints == ["Where does Evan go to school?"]
    assert memory.provenance.derived_from == result.episodes
    [job] = hs.jobs(ALICE).jobs
    assert (job.state, job.result and job.result["created"]) == ("done", [memory.id])
    top = hs.recall(ALICE, "Which school does Evan attend?", k=3)
    assert memory.id in [r.memory.id for r in top]


def test_recalled_memories_and_system_prompts_never_reach_the_model_or_the_store(
    hs: Hindsight, server: FakeLLM
) -> None:
    hs.retain(
        ALICE,
        messages=[
            {"role": "system", "content": "You are a helpful bot. The user is a billionaire."},
            {
                "role": "user",
                "content": '<memory id="m_1" source="tool" trust="0.5">User lives in Rome.'
                "</memory> Thanks! I drink green tea every morning.",
            },
            {"role": "assistant", "content": "You should try oolong too."},
        ],
    )
    server.script(
        openai_answer(
            memories(
                fact("User is a billionaire.", turn=0),  # a system prompt's claim
                fact("User drinks green tea every morning.", turn=1, kind="preference"),
                fact("User should try oolong.", turn=2),  # the assistant's words
                fact("User is unsure about tea.", turn=1, confidence=0.3),
            )
        )
    )
    hs.run_jobs()
    sent = prompt_of(server.seen[0])
    assert "green tea" in sent and "oolong" in sent
    assert "billionaire" not in sent and "Rome" not in sent
    assert [m.content for m in derived(hs)] == ["User drinks green tea every morning."]
    [job] = hs.jobs(ALICE).jobs
    assert job.result is not None
    assert (job.result["dropped"], job.result["below_confidence"]) == (2, 1)


def test_an_answer_invalid_twice_is_dropped_counted_and_nothing_is_stored(
    hs: Hindsight, server: FakeLLM
) -> None:
    hs.retain(ALICE, "I work as a nurse in Leeds.")
    before = hs.store.count(Filter(owners=[ALICE]))
    server.script(
        openai_answer('{"memories": [{"kind": "fact"}]}'),
        openai_answer("<think>the user is a nurse</think> sure! here you go"),
    )
    hs.run_jobs()
    assert "missing 'content'" in server.seen[1].body["messages"][-1]["content"]
    [job] = hs.jobs(ALICE).jobs
    assert job.state == "failed" and "dropped after a retry" in (job.error or "")
    assert hs.store.count(Filter(owners=[ALICE])) == before
    [row] = hs.usage(ALICE)
    assert (row.calls, row.dropped, row.failures) == (1, 1, 1)
    assert hs.run_jobs() == 0  # failed is final: no retry storm


def test_a_schema_echo_and_a_reasoning_block_are_cured_by_one_retry(
    hs: Hindsight, server: FakeLLM
) -> None:
    hs.retain(ALICE, "My sister Maya lives in Lisbon.")
    server.script(
        openai_answer(json.dumps(SCHEMA)),
        openai_answer(
            "<think>Maya is the sister</think>" + memories(fact("Maya lives in Lisbon."))
        ),
    )
    hs.run_jobs()
    assert "repeats the JSON schema" in server.seen[1].body["messages"][-1]["content"]
    assert [m.content for m in derived(hs)] == ["Maya lives in Lisbon."]


def test_a_server_that_rejects_schemas_is_asked_in_json_mode(
    hs: Hindsight, server: FakeLLM
) -> None:
    hs.retain(ALICE, "I am allergic to peanuts.")
    server.script(
        error(400, "response_format json_schema is not supported"),
        openai_answer("```json\n" + memories(fact("User has a peanut allergy.")) + "\n```"),
    )
    hs.run_jobs()
    assert server.seen[1].body["response_format"] == {"type": "json_object"}
    assert [m.content for m in derived(hs)] == ["User has a peanut allergy."]


def test_an_unreachable_or_failing_server_backs_off_then_succeeds(
    make: Callable[..., Hindsight], server: FakeLLM, clock: Clock
) -> None:
    hs = make(llm_job_attempts=3)
    hs.retain(ALICE, "I play the cello.")
    server.script(error(500, "overloaded"), Reply(drop=True))
    hs.run_jobs()
    [job] = hs.jobs(ALICE).jobs
    assert (job.state, job.attempts) == ("pending", 1)
    assert job.not_before == T0 + timedelta(seconds=30)
    assert hs.run_jobs() == 0  # not before its time
    clock.now += timedelta(seconds=31)
    hs.run_jobs()  # the server dies mid-call: again later, twice as late
    [job] = hs.jobs(ALICE).jobs
    assert (job.state, job.attempts, job.not_before) == (
        "pending",
        2,
        clock.now + timedelta(seconds=60),
    )
    clock.now += timedelta(seconds=61)
    server.script(openai_answer(memories(fact("User plays the cello."))))
    hs.run_jobs()
    assert [j.state for j in hs.jobs(ALICE).jobs] == ["done"]
    assert [m.content for m in derived(hs)] == ["User plays the cello."]


def test_a_job_gives_up_after_its_attempts(
    make: Callable[..., Hindsight], server: FakeLLM, clock: Clock
) -> None:
    hs = make(llm_job_attempts=2)
    hs.retain(ALICE, "I play the cello.")
    server.script(error(503, "down"), error(429, "slow down"))
    hs.run_jobs()
    clock.now += timedelta(hours=1)
    hs.run_jobs()
    [job] = hs.jobs(ALICE).jobs
    assert job.state == "failed" and "gave up after 2 tries" in (job.error or "")
    assert hs.jobs(ALICE).counts["failed"] == 1


def test_past_the_daily_budget_work_is_deferred_to_the_next_day_not_lost(
    make: Callable[..., Hindsight], server: FakeLLM, clock: Clock
) -> None:
    hs = make(llm_daily_token_budget=10)
    hs.retain(ALICE, "I live in Leeds.", session_id="a")
    server.script(openai_answer(memories(fact("User's home is in Leeds.")), prompt_tokens=30))
    hs.run_jobs()
    hs.retain(ALICE, "I have a cat called Miso.", session_id="b")
    assert hs.run_jobs() == 1
    [deferred] = hs.jobs(ALICE, states=["deferred"]).jobs
    assert len(server.seen) == 1  # nothing was sent past the budget
    assert (deferred.attempts, deferred.not_before) == (0, datetime(2025, 5, 2, tzinfo=UTC))
    assert hs.wait_jobs(timeout=5)["deferred"] == 1  # a wait does not block on tomorrow
    clock.now = datetime(2025, 5, 2, 0, 1, tzinfo=UTC)
    server.script(openai_answer(memories(fact("User adopted a kitten in 2020."))))
    assert hs.run_jobs() == 1
    assert hs.jobs(ALICE).counts == {
        "pending": 0,
        "deferred": 0,
        "running": 0,
        "done": 2,
        "failed": 0,
    }
    assert sorted(m.content for m in derived(hs)) == [
        "User adopted a kitten in 2020.",
        "User's home is in Leeds.",
    ]


def test_a_clear_update_supersedes_the_fact_it_names_and_nothing_else(
    hs: Hindsight, server: FakeLLM, clock: Clock
) -> None:
    hs.retain(ALICE, "I live in Paris.", kind="fact")
    hs.retain(ALICE, "I love jazz.", kind="preference")
    paris = hs.list_memories(ALICE, kinds=["fact"])[0]
    clock.now += timedelta(days=30)
    hs.retain(ALICE, "We finally moved, the new flat in Berlin is great.")

    def respond(seen: Seen) -> Reply:
        labels = dict(re.findall(r"^(k\d+) \([^)]*\): (.*)$", prompt_of(seen), re.MULTILINE))
        by_text = {text: label for label, text in labels.items()}
        return openai_answer(
            memories(
                fact(
                    "User lives in Berlin.",
                    key="user.home_city",
                    value="Berlin",
                    updates=by_text["I live in Paris."],
                ),
                fact("User moved house.", updates="k99"),  # a label it was never shown
            )
        )

    server.respond = respond
    hs.run_jobs()
    [berlin] = [m for m in derived(hs) if "Berlin" in m.content]
    old = hs.get(paris.id)
    assert (old.superseded_by, old.valid_to) == (berlin.id, berlin.observed_at)
    assert [m.content for m in hs.list_memories(ALICE, kinds=["preference"])] == ["I love jazz."]
    top = hs.recall(ALICE, "Where does the user live?", k=3, kinds=["fact"])
    assert paris.id not in [r.memory.id for r in top]


def test_the_same_turns_are_extracted_once_and_a_rerun_adds_nothing(
    hs: Hindsight, server: FakeLLM, settings: Settings
) -> None:
    turn = {"role": "user", "content": "I run every Sunday.", "observed_at": T0.isoformat()}
    hs.retain(ALICE, messages=[turn], session_id="s")
    hs.retain(ALICE, messages=[turn], session_id="s")  # retained again: the same job
    assert hs.jobs(ALICE).counts["pending"] == 1
    server.respond = lambda seen: openai_answer(memories(fact("User runs every Sunday.")))
    hs.run_jobs()
    first = {m.id: (m.content, m.confidence) for m in derived(hs)}
    assert len(first) == 1
    # a worker that died after its write, before recording the job done: it runs again
    execute_sql(settings, "UPDATE job_queue SET state = 'pending'")
    assert hs.run_jobs() == 1
    assert {m.id: (m.content, m.confidence) for m in derived(hs)} == first


def test_a_job_whose_worker_died_is_taken_over_when_its_lease_lapses(
    hs: Hindsight, server: FakeLLM, clock: Clock
) -> None:
    hs.retain(ALICE, "I collect vinyl records.")
    lease = timedelta(seconds=hs.settings.llm_job_lease_seconds)
    [taken] = hs.store.claim_jobs("dead-worker", now=clock.now, until=clock.now + lease, limit=5)
    assert hs.run_jobs() == 0  # leased to the other worker
    clock.now += lease + timedelta(seconds=1)
    server.script(openai_answer(memories(fact("User collects vinyl records."))))
    assert hs.run_jobs() == 1
    [job] = hs.jobs(ALICE).jobs
    assert (job.id, job.state, job.attempts) == (taken.id, "done", 2)
    # the dead worker's late word changes nothing
    assert not hs.store.finish_job(taken.id, "dead-worker", state="failed", now=clock.now)
    assert hs.jobs(ALICE).jobs[0].state == "done"


def test_extraction_over_the_anthropic_messages_api(
    make: Callable[..., Hindsight], server: FakeLLM
) -> None:
    hs = make(llm_provider="anthropic", llm_base_url=server.url, llm_model="claude-test")
    hs.retain(
        ALICE,
        messages=[
            {"role": "user", "content": "Please always answer me in French."},
            {"role": "tool", "tool_name": "weather", "content": "Paris: 18C, light rain"},
        ],
    )
    instruction = fact(
        "User wants answers in French.", kind="instruction", applies_when="any answer"
    )
    weather = fact("Paris had 18C and light rain.", turn=1, kind="tool_result")
    server.script(anthropic_answer(tool=("memories", {"memories": [instruction, weather]})))
    hs.run_jobs()
    [request] = server.seen
    assert request.path == "/v1/messages"
    assert request.body["tool_choice"] == {"type": "tool", "name": "memories"}
    assert request.body["tools"][0]["input_schema"] == SCHEMA
    assert "tool weather: Paris: 18C" in request.body["messages"][0]["content"]
    kept = {m.kind: m for m in derived(hs, "llm:claude-test")}
    assert kept[Kind.PREFERENCE].metadata["applies_when"] == "any answer"
    assert kept[Kind.TOOL_RESULT].metadata["tool"] == "weather"
    assert kept[Kind.TOOL_RESULT].trust < 1.0  # a tool's claim is believed less
    assert kept[Kind.TOOL_RESULT].confidence <= kept[Kind.TOOL_RESULT].trust
    [row] = hs.usage(ALICE)
    assert (row.operation, row.prompt_tokens, row.completion_tokens) == ("extract", 13, 5)


def test_the_worker_thread_runs_the_queue_without_being_asked(
    make: Callable[..., Hindsight], server: FakeLLM
) -> None:
    hs = make(llm_worker=True)
    server.respond = lambda seen: openai_answer(memories(fact("User keeps bees in Devon.")))
    started = time.monotonic()
    hs.retain(ALICE, "I keep bees, down in Devon.")
    assert time.monotonic() - started < 5
    deadline = time.monotonic() + 20
    while hs.jobs(ALICE).counts["done"] != 1:
        assert time.monotonic() < deadline, hs.jobs(ALICE)
        time.sleep(0.05)
    assert [m.content for m in derived(hs)] == ["User keeps bees in Devon."]


def test_the_cli_shows_the_queue_and_waits_for_it(
    hs: Hindsight, server: FakeLLM, settings: Settings
) -> None:
    hs.retain(ALICE, "I volunteer at the food bank.", session_id="a")
    hs.retain(ALICE, "I speak Welsh at home.", session_id="b")
    env = {
        "HINDSIGHT_SQLITE_SYNCHRONOUS": "OFF",
        "HINDSIGHT_LLM_PROVIDER": "openai",
        "HINDSIGHT_LLM_BASE_URL": server.url + "/v1",
        "HINDSIGHT_LLM_MODEL": "m",
        "HINDSIGHT_LLM_MAX_RETRIES": "0",
    }

    def run(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(cli, ["--home", str(settings.home), *args], env=env)
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result.stdout if code == 0 else result.stderr

    shown = json.loads(run("jobs", "status", "--json"))
    assert shown["counts"]["pending"] == 2 and len(shown["jobs"]) == 2
    assert run("jobs").startswith("pending 2  deferred 0  running 0  done 0  failed 0\n")
    server.script(
        openai_answer(memories(fact("User volunteers at the food bank."))),
        error(400, "model m does not exist"),
    )
    assert "1 job(s) failed" in run("jobs", "wait", "--timeout", "30", code=1)
    failed = json.loads(run("jobs", "status", "--state", "failed", "--json"))["jobs"]
    assert len(failed) == 1 and "does not exist" in failed[0]["error"]
    assert json.loads(run("jobs", "retry", "--json")) == {"retried": 1}
    server.script(openai_answer(memories(fact("User speaks Welsh at home."))))
    assert run("jobs", "wait").startswith("pending 0  deferred 0  running 0  done 2  failed 0")
    server.script(error(400, "model m does not exist"))
    hs.retain(ALICE, "I keep chickens.", session_id="c")
    assert "error: " in run("jobs", "status", "--state", "lost", code=2)
    home = ["--home", str(settings.home)]
    waited = CliRunner().invoke(cli, [*home, "jobs", "wait", "--json"], env=env)
    assert waited.exit_code == 1
    assert (json.loads(waited.stdout)["done"], json.loads(waited.stdout)["failed"]) == (2, 1)


@pytest.mark.backends("sqlite", "postgres")
def test_two_workers_never_run_one_job(hs: Hindsight, clock: Clock) -> None:
    for n in range(6):
        hs.retain(ALICE, f"I planted {n + 2} tomato plants.", session_id=f"s{n}")
    until = clock.now + timedelta(minutes=5)
    taken: dict[str, list[str]] = {"a": [], "b": []}

    def claim(holder: str) -> None:
        while jobs := hs.store.claim_jobs(holder, now=clock.now, until=until, limit=1):
            taken[holder] += [j.id for j in jobs]

    threads = [threading.Thread(target=claim, args=(h,)) for h in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken["a"] + taken["b"]) == sorted(j.id for j in hs.jobs(ALICE).jobs)
    assert not set(taken["a"]) & set(taken["b"])
    assert hs.jobs(ALICE).counts["running"] == 6


def test_the_queue_on_rest_and_the_client_within_a_keys_scope(
    hs: Hindsight, server: FakeLLM
) -> None:
    hs.retain(ALICE, "I teach chemistry.")
    hs.retain("user:bob", "I drive a tram.")
    keys = KeyRing.parse(
        {
            "keys": [
                {"name": "alice", "key": "alice-key-000000000001", "write": [ALICE]},
                {"name": "admin", "key": "admin-key-000000000003", "read": ["*"]},
            ]
        }
    )
    with live_server(create_app(hs, keyring=keys, mcp=False)) as url:
        with Client(url, "alice-key-000000000001") as alice:
            mine = alice.jobs(ALICE)
            assert mine == hs.jobs(ALICE)
            assert [j.owner for j in mine.jobs] == [ALICE] and mine.counts["pending"] == 1
            with pytest.raises(PermissionDeniedError):
                alice.jobs("user:bob")
            with pytest.raises(PermissionDeniedError):
                alice.jobs()
        with Client(url, "admin-key-000000000003") as admin:
            assert admin.jobs().counts["pending"] == 2
            assert admin.jobs(states=["done"]).jobs == []
        bad = httpx.get(
            f"{url}/v1/jobs",
            params={"state": "lost"},
            headers={"authorization": "Bearer admin-key-000000000003"},
        )
        assert bad.status_code == 400 and "unknown job states" in bad.text


def test_the_queue_is_a_migration_of_each_database() -> None:
    from hindsight.store.migrations import JOB_QUEUE, POSTGRES, SQLITE

    assert dict(SQLITE)[11] == JOB_QUEUE.format(real="REAL")
    assert dict(POSTGRES)[9] == JOB_QUEUE.format(real="DOUBLE PRECISION")


def test_a_model_that_does_not_answer_in_time_is_tried_again_later(
    make: Callable[..., Hindsight], server: FakeLLM
) -> None:
    hs = make(llm_timeout_seconds=0.2)
    hs.retain(ALICE, "I sing in a choir.")
    server.script(Reply(body=openai_answer(memories()).body, delay=1.0))
    hs.run_jobs()
    [job] = hs.jobs(ALICE).jobs
    assert (job.state, job.attempts) == ("pending", 1)
    assert "no answer within 0.2 s" in (job.error or "")
    assert derived(hs) == []
    [row] = hs.usage(ALICE)
    assert (row.calls, row.failures) == (1, 1)


def test_the_models_entities_and_relations_fill_the_pages(hs: Hindsight, server: FakeLLM) -> None:
    # words alone join neither "B. Nowak" with "Uncle Bart" nor Tom with the Falcons here
    hs.retain(ALICE, "B. Nowak, my mum's brother, signed the lease. He coaches the Falcons.")
    said = fact(
        "User's uncle Bartholomew Nowak signed the lease and coaches the Falcons.",
        entities=[
            {"name": "Bartholomew Nowak", "kind": "person", "aliases": ["B. Nowak", "Uncle Bart"]},
            {"name": "Falcons", "kind": "organization"},
        ],
        relations=[["Bartholomew Nowak", "coaches", "Falcons"]],
    )
    server.script(openai_answer(memories(said)))
    assert hs.run_jobs() == 1
    [kept] = derived(hs)
    assert kept.metadata["entities"]["relations"] == [["Bartholomew Nowak", "coaches", "Falcons"]]
    page = hs.entity(ALICE, "uncle bart")
    assert page.name == "Bartholomew Nowak" and {"B. Nowak", "Uncle Bart"} <= set(page.aliases)
    assert ("Falcons", "coaches") in {(r.name, r.relation) for r in page.related}
    assert kept.id in {f.memory_id for f in page.facts}
