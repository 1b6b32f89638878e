"""The chat set (bench/chats) reads whole: every question kept, nothing repaired."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight.bench.datasets import load_locomo

CHATS = Path(__file__).parent.parent / "bench" / "chats"


@pytest.mark.parametrize(
    ("name", "questions"),
    [("dev.json", 95), ("holdout.json", 95), ("runs-dev.json", 89), ("runs-holdout.json", 88)],
)
def test_every_question_is_kept_with_its_evidence(name: str, questions: int) -> None:
    data = load_locomo(CHATS / name)
    assert len(data.conversations) == 4
    assert len(data.questions) == questions
    for conversation in data.conversations:
        assert not conversation.skipped and not conversation.repaired, conversation.id
