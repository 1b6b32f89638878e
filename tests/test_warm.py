"""Warming: an owner's indexes loaded before its first recall (a server does it as it
starts), answering exactly as indexes loaded by the recall itself would."""

from __future__ import annotations

import time

import pytest

from hindsight import Hindsight, PermissionDeniedError, Settings, jobs
from hindsight.access import Principal
from hindsight.embed import Embeddings

TEXTS = [f"Note {i}: the {w} report is due on day {i}" for i, w in enumerate("abcdefghij" * 3)]


def _vectors_held(hs: Hindsight, owner: str) -> int | None:
    index = getattr(hs.store.vectors, "index", None)  # the in-process backend's
    return None if index is None else index.size(owner)


@pytest.mark.backends
def test_warming_loads_what_a_first_recall_would_and_answers_alike(
    settings: Settings, embedder: Embeddings
) -> None:
    with Hindsight(settings, embedder=embedder) as hs:
        for owner in ("user:a", "user:b", "user:c"):
            for text in TEXTS:
                hs.retain(owner, text, kind="fact")
        hs.retain("user:a", "The a report moved to day 40", kind="fact")  # a changed last
        assert hs.store.recent_owners(2) == ["user:a", "user:c"]
    with Hindsight(settings, embedder=embedder) as cold:
        expected = cold.recall("user:a", "when is the a report due?", k=5)
    with Hindsight(settings, embedder=embedder) as hs:
        assert hs.store.known_size("user:a") is None  # nothing held yet
        assert jobs.job("warm").run(hs) == 3
        assert hs.store.known_size("user:a") == len(TEXTS) + 1
        if settings.database_url is None:  # PostgreSQL searches vectors in the database
            assert _vectors_held(hs, "user:a") == len(TEXTS) + 1
        got = hs.recall("user:a", "when is the a report due?", k=5)
    assert [r.memory.id for r in got] == [r.memory.id for r in expected]
    # the same scores, but for the recency boost of a later moment
    assert [r.score for r in got] == pytest.approx([r.score for r in expected], rel=1e-6)


def test_a_caller_warms_only_owners_it_reads(settings: Settings, embedder: Embeddings) -> None:
    with Hindsight(settings, embedder=embedder) as hs:
        hs.retain("user:a", "I live in Lisbon.")
        alice = hs.as_principal(Principal(name="alice", read=("user:a",), write=("user:a",)))
        assert alice.warm(["user:a"]) == 1
        with pytest.raises(PermissionDeniedError):
            alice.warm()  # every owner, or the last changed: a caller that reads them all
        assert hs.warm(limit=0) == 0


@pytest.mark.backends
def test_a_server_warms_the_owners_that_changed_last_as_it_starts(
    settings: Settings, embedder: Embeddings
) -> None:
    from fastapi.testclient import TestClient

    from hindsight.api import create_app

    with Hindsight(settings, embedder=embedder) as hs:
        for text in TEXTS:
            hs.retain("user:a", text, kind="fact")
    with Hindsight(settings, embedder=embedder) as hs:
        assert hs.store.known_size("user:a") is None
        with TestClient(create_app(hs, mcp=False), base_url="http://127.0.0.1"):
            deadline = time.monotonic() + 30
            while hs.store.known_size("user:a") is None and time.monotonic() < deadline:
                time.sleep(0.05)  # the server answers meanwhile: warming is in the background
        assert hs.store.known_size("user:a") == len(TEXTS)


def test_warming_stops_when_asked(settings: Settings, embedder: Embeddings) -> None:
    with Hindsight(settings, embedder=embedder) as hs:
        for owner in ("user:a", "user:b"):
            hs.retain(owner, "I live in Lisbon.")
        asked: list[int] = []
        assert hs.warm(limit=10, stop=lambda: len(asked) > 0 or bool(asked.append(1))) == 1
        assert hs.warm(limit=10, stop=lambda: True) == 0
