"""The chat set (bench/chats) reads whole: every question kept, nothing repaired."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight.bench.datasets import load_locomo

CHATS = Path(__file__).parent.parent / "bench" / "chats"


@pytest.mark.parametrize("name", ["dev.json", "holdout.json"])
def test_every_question_is_kept_with_its_evidence(name: str) -> None:
    data = load_locomo(CHATS / name)
    assert len(data.conversations) == 4
    assert len(data.questions) == 95
    for conversation in data.conversations:
        assert not conversation.skipped and not conversation.repaired, conversation.id
