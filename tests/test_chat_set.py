"""The chat set (bench/chats) reads whole: every question kept, nothing repaired; and the
reactions stand-in keeps each question on the turns it named."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hindsight.bench.datasets import Dataset, load_locomo

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


def test_reactions_go_around_the_turns_and_the_evidence_stays_on_them(tmp_path: Path) -> None:
    source = CHATS / "runs-dev.json"
    first, again = tmp_path / "a.json", tmp_path / "b.json"
    for target in (first, again):
        subprocess.run(
            [sys.executable, str(CHATS / "with_reactions.py"), str(source), str(target)],
            check=True,
        )
    assert first.read_bytes() == again.read_bytes()  # a fixed seed
    before, after = load_locomo(source), load_locomo(first)
    assert len(after.questions) == len(before.questions)
    sent = [sum(1 for c in data.conversations for _ in c.turns) for data in (before, after)]
    assert sent[1] > 1.5 * sent[0]

    def evidence(data: Dataset) -> list[tuple[str, str, str]]:
        """Each question's evidence, by conversation and text."""
        said = {(c.id, t.turn_id): t.text for c in data.conversations for t in c.turns}
        return sorted(
            (c.id, q.text, said[c.id, e])
            for c in data.conversations
            for q in c.questions
            for e in q.evidence
        )

    assert evidence(before) == evidence(after)
