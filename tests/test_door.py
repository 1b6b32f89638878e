"""The one write door: every route's writes pass the checkpoints, under the owners' lock."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hindsight import Hindsight, Settings
from hindsight.access import Principal
from hindsight.embed import Embeddings
from hindsight.errors import WriteRefusedError
from hindsight.models import Kind, Memory, Status
from hindsight.store import Filter
from hindsight.write.decide import Plan, embedding_text
from hindsight.write.door import Checkpoint, Operation, StoreKnown, WriteContext, checkpoints

OWNER = "user:alice"
DAY = "2024-05-01T10:{:02d}:00Z"


class Recorder(Checkpoint):
    """Sees every write: what it was, who asked, and the memories it touched."""

    name = "recorder"

    def __init__(self) -> None:
        self.seen: list[tuple[Operation, str, list[str]]] = []

    def review(self, plan: Plan, context: WriteContext, known: StoreKnown) -> None:
        self.seen.append(
            (context.operation, context.principal.name, [m.id for m, _ in plan.memories()])
        )


class Refuser(Checkpoint):
    name = "refuser"

    def __init__(self) -> None:
        self.armed = False

    def review(self, plan: Plan, context: WriteContext, known: StoreKnown) -> None:
        if self.armed:
            self.refuse(f"no {context.operation} today")


def _tool_failures(hs: Hindsight, session: str) -> None:
    for minute in range(2):
        hs.retain(
            OWNER,
            messages=[
                {
                    "role": "tool",
                    "content": f"Error: HTTP 503 from weather service (try {minute})",
                    "tool_name": "weather",
                    "observed_at": DAY.format(minute),
                }
            ],
            session_id=session,
        )


# Each route, as a caller makes it; all write to OWNER.
def _retain(hs: Hindsight) -> None:
    hs.retain(OWNER, "I live in Rome and I love opera.", session_id="r1")


def _update(hs: Hindsight) -> None:
    (memory,) = hs.list_memories(OWNER, kinds=["fact"], limit=1)
    hs.update(memory.id, content="Alice lives in Lisbon", confidence=0.5)


def _import(hs: Hindsight) -> None:
    records = [{**r, "id": r["id"] + "x"} for r in hs.export(OWNER)]
    hs.import_records(records)


def _consolidate(hs: Hindsight) -> None:
    hs.observe(OWNER, "w1", "I work as a nurse.")
    hs.consolidate(OWNER, "w1")


def _summarize(hs: Hindsight) -> None:
    hs.summarize(OWNER, "s0")


def _reflect(hs: Hindsight) -> None:
    hs.reflect(OWNER)


ROUTES: dict[Operation, Callable[[Hindsight], None]] = {
    Operation.RETAIN: _retain,
    Operation.UPDATE: _update,
    Operation.IMPORT: _import,
    Operation.CONSOLIDATE: _consolidate,
    Operation.SUMMARIZE: _summarize,
    Operation.REFLECT: _reflect,
}


@pytest.fixture
def guarded(
    settings: Settings, embedder: Embeddings
) -> Iterator[tuple[Hindsight, Recorder, Refuser]]:
    recorder, refuser = Recorder(), Refuser()
    with Hindsight(settings, embedder=embedder, checks=[recorder, refuser]) as hs:
        hs.retain(
            OWNER, "I live in Paris. I love jazz.", session_id="s0", observed_at=DAY.format(9)
        )
        _tool_failures(hs, "s0")
        recorder.seen.clear()
        yield hs, recorder, refuser


@pytest.mark.parametrize("operation", list(ROUTES))
def test_a_checkpoint_sees_every_write_of_every_route(
    guarded: tuple[Hindsight, Recorder, Refuser], operation: Operation
) -> None:
    hs, recorder, _ = guarded
    ROUTES[operation](hs.as_principal(Principal("app", read=(), write=(OWNER,))))
    assert recorder.seen, f"{operation} wrote without passing the checkpoints"
    assert {(op, who) for op, who, _ in recorder.seen} == {(operation, "app")}
    written = {mid for _, _, ids in recorder.seen for mid in ids}
    assert written, f"{operation} showed the checkpoint an empty plan"


@pytest.mark.parametrize("operation", list(ROUTES))
def test_a_refusing_checkpoint_leaves_the_store_unchanged_on_every_route(
    guarded: tuple[Hindsight, Recorder, Refuser], operation: Operation
) -> None:
    hs, _, refuser = guarded
    everything = Filter(owners=[OWNER], statuses=tuple(Status), current_only=False)
    before = sorted(map(repr, hs.store.iterate(everything)))
    stats = replace(hs.stats(), size_bytes=0)
    refuser.armed = True
    with pytest.raises(WriteRefusedError, match=f"refuser: no {operation} today"):
        ROUTES[operation](hs)
    assert sorted(map(repr, hs.store.iterate(everything))) == before
    working_turns = 1 if operation is Operation.CONSOLIDATE else 0  # the window stays
    assert replace(hs.stats(), size_bytes=0) == replace(stats, working_turns=working_turns)


class Guard(Checkpoint):
    """Quarantines what a tool said, caps its confidence, redacts a secret."""

    name = "guard"

    def review(self, plan: Plan, context: WriteContext, known: StoreKnown) -> None:
        for memory, new in plan.memories():
            if new and memory.provenance.source == "tool":
                memory.status = Status.PENDING_REVIEW
                memory.confidence = min(memory.confidence, 0.3)
            memory.content = memory.content.replace("hunter2", "[redacted]")


def test_a_checkpoint_changes_what_is_written_and_what_is_embedded(
    settings: Settings, embedder: Embeddings
) -> None:
    with Hindsight(settings, embedder=embedder, checks=[Guard()]) as hs:
        said = hs.retain(OWNER, "My password is hunter2, please remember it.")
        (episode,) = [hs.get(mid) for mid in said.episodes]
        assert episode.content == "My password is [redacted], please remember it."
        assert not hs.store.keyword_search(Filter(owners=[OWNER]), "hunter2", 5)
        # the vector is the redacted text's, not the original's
        vector = embedder.encode_documents([embedding_text(episode)])[0]
        ((top, similarity),) = hs.store.vector_search(Filter(owners=[OWNER]), vector, 1)
        assert top == episode.id and similarity == pytest.approx(1.0, abs=1e-4)
        tool = hs.retain(OWNER, "Error: HTTP 503", source="tool")
        (kept,) = hs.store.get(tool.episodes)
        assert kept.status is Status.PENDING_REVIEW and kept.confidence == 0.3


def test_checkpoints_are_providers_enabled_by_settings(
    settings: Settings, embedder: Embeddings
) -> None:
    made: list[Recorder] = []

    def factory(settings: Settings, options: Mapping[str, Any]) -> Checkpoint:
        assert options == {"note": "given"}
        made.append(Recorder())
        return made[-1]

    checkpoints.register("test-recorder", factory)
    with Hindsight(
        settings.model_copy(
            update={
                "checkpoints": ["test-recorder"],
                "provider_options": {"checkpoint.test-recorder": {"note": "given"}},
            }
        ),
        embedder=embedder,
    ) as hs:
        hs.retain(OWNER, "I love jazz.")
    assert [op for op, _, _ in made[0].seen] == [Operation.RETAIN]


# -- the planner, fed what it needs ------------------------------------------------------
class Known:
    """Memories already kept, as the planner asks for them: a list, not a store."""

    def __init__(self, memories: list[tuple[Memory, np.ndarray]]) -> None:
        self.memories = memories

    def _current(self) -> list[Memory]:
        return [m for m, _ in self.memories if m.valid_to is None]

    def find_episodes(self, owner: str, session_id: str | None, content: str) -> list[Memory]:
        return []

    def children(self, parent_ids: object) -> list[Memory]:
        return []

    def find_exact(self, owner: str, kind: Kind, content: str) -> Memory | None:
        return next((m for m in self._current() if (m.kind, m.content) == (kind, content)), None)

    def find_attribute(self, owner: str, kind: Kind, attribute: str) -> list[Memory]:
        return [m for m in self._current() if (m.kind, m.attribute) == (kind, attribute)]

    def similar(
        self, owner: str, kind: Kind, vector: np.ndarray, k: int
    ) -> list[tuple[Memory, float]]:
        hits = [(m, float(v @ vector)) for m, v in self.memories if m.kind is kind]
        return sorted(hits, key=lambda hit: -hit[1])[:k]


def test_the_planner_supersedes_a_known_value_without_a_store(embedder: Embeddings) -> None:
    from datetime import UTC, datetime

    from hindsight.models import Provenance
    from hindsight.write.decide import Candidate, plan

    def fact(content: str, value: str, day: int) -> tuple[Memory, np.ndarray]:
        when = datetime(2024, 5, day, tzinfo=UTC)
        memory = Memory(
            id=f"m{day}",
            owner=OWNER,
            kind=Kind.FACT,
            content=content,
            confidence=0.9,
            provenance=Provenance(),
            observed_at=when,
            created_at=when,
            updated_at=when,
            attribute="location",
            metadata={"value": value},
        )
        return memory, embedder.encode_documents([content])[0]

    paris = fact("Alice lives in Paris", "Paris", 1)
    berlin, vector = fact("Alice lives in Berlin", "Berlin", 2)
    done = plan(
        Known([paris]), [Candidate(berlin, vector)], dedupe_similarity=0.9, now=berlin.created_at
    )
    assert done.result.superseded == [("m1", "m2")]
    assert done.updates["m1"][0].superseded_by == "m2" and [m.id for m, _ in done.inserts] == ["m2"]
    again = plan(
        Known([paris]),
        [Candidate(replace(paris[0], id="m3"), paris[1])],
        dedupe_similarity=0.9,
        now=berlin.created_at,
    )
    assert again.inserts == [] and again.result.updated == ["m1"]  # a repeat reinforces


# -- two processes, one attribute --------------------------------------------------------
_WRITER = """
import sys, time
from pathlib import Path
from hindsight import Hindsight
from hindsight.write.door import Checkpoint

class Slow(Checkpoint):
    name = "slow"
    def review(self, plan, context, known):
        time.sleep(1.0)  # a writer that plans, then takes its time to commit

flags = Path(sys.argv[1])
with Hindsight(checks=[Slow()]) as hs:
    (flags / sys.argv[2]).touch()
    while not (flags / "go").exists():
        time.sleep(0.01)
    hs.retain("user:alice", f"I live in {sys.argv[2]}.")
"""


@pytest.mark.backends
def test_two_processes_superseding_one_attribute_leave_one_current_value(
    settings: Settings, embedder: Embeddings, tmp_path: Path
) -> None:
    with Hindsight(settings, embedder=embedder) as hs:
        hs.retain(OWNER, "I live in Paris.", observed_at="2024-01-01")
    env = {
        **os.environ,
        "HINDSIGHT_HOME": str(settings.home),
        "HINDSIGHT_SQLITE_SYNCHRONOUS": "OFF",
        **({"HINDSIGHT_DATABASE_URL": settings.database_url} if settings.database_url else {}),
    }
    flags = tmp_path / "flags"
    flags.mkdir()
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(_WRITER), str(flags), city], env=env
        )
        for city in ("Berlin", "Rome")
    ]
    deadline = time.monotonic() + 120
    while not all((flags / city).exists() for city in ("Berlin", "Rome")):
        assert time.monotonic() < deadline and all(w.poll() is None for w in writers)
        time.sleep(0.05)
    (flags / "go").touch()
    assert [w.wait(120) for w in writers] == [0, 0]
    with Hindsight(settings, embedder=embedder) as hs:
        current = [m.content for m in hs.list_memories(OWNER, kinds=["fact"])]
        history = hs.list_memories(OWNER, kinds=["fact"], include_history=True)
    assert len(current) == 1 and ("Berlin" in current[0] or "Rome" in current[0]), current
    assert len(history) == 3  # Paris, then one city, then the other
