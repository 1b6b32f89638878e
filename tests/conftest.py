"""Shared fixtures: a fresh store per test, the real local model loaded once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings, registry


@pytest.fixture(scope="session")
def embedder() -> Embeddings:
    return registry.create("minilm")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # Durability is not what most tests test; crash tests set their own.
    return Settings(home=tmp_path / "home", sqlite_synchronous="OFF")


@pytest.fixture
def hs(settings: Settings, embedder: Embeddings) -> Iterator[Hindsight]:
    with Hindsight(settings, embedder=embedder) as engine:
        yield engine
