"""The neutral shape every benchmark loads into: a dataset of conversations of sessions
of turns, with the questions whose evidence is a set of turn ids.

What cannot be used is counted under a reason in :attr:`Conversation.skipped`, and
every repair in :attr:`Conversation.repaired`; :func:`known_evidence` does so for
evidence ids that name no turn.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hindsight.errors import ValidationError


@dataclass(frozen=True, slots=True)
class BenchTurn:
    """One message as the benchmark gives it; ``turn_id`` is what evidence names."""

    turn_id: str
    role: str  # "user" or "assistant"
    speaker: str | None
    text: str
    time: datetime | None


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    turns: list[BenchTurn]


@dataclass(frozen=True, slots=True)
class Question:
    """A question and the turn ids that hold its answer.

    ``ordered`` carries named evidence lists where their order matters, e.g.
    BEAM knowledge updates: ``{"updated": [...], "original": [...]}``.
    """

    text: str
    evidence: frozenset[str]
    group: str
    conversation_id: str
    ordered: dict[str, list[str]] | None = None


@dataclass(slots=True)
class Conversation:
    id: str
    sessions: list[Session]
    questions: list[Question] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> how many
    repaired: Counter[str] = field(default_factory=Counter)

    @property
    def turns(self) -> Iterator[BenchTurn]:
        for session in self.sessions:
            yield from session.turns


@dataclass(slots=True)
class Dataset:
    name: str
    conversations: list[Conversation]

    def head(self, limit: int | None) -> Dataset:
        """The first ``limit`` conversations (all when ``None``)."""
        kept = self.conversations if limit is None else self.conversations[:limit]
        return Dataset(self.name, kept)

    @property
    def questions(self) -> list[Question]:
        return [q for c in self.conversations for q in c.questions]

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for c in self.conversations for s in c.sessions)

    @property
    def skipped(self) -> Counter[str]:
        return sum((c.skipped for c in self.conversations), Counter())

    @property
    def repaired(self) -> Counter[str]:
        return sum((c.repaired for c in self.conversations), Counter())


def read_json(path: Path) -> Any:
    """A benchmark file's JSON; not JSON or not UTF-8 is a :class:`ValidationError`."""
    try:
        with path.open("rb") as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    except UnicodeDecodeError:
        raise ValidationError(f"{path} is not UTF-8 text") from None


def known_evidence(
    conv: Conversation, ids: list[str], known: set[str], unit: str
) -> frozenset[str]:
    """The evidence ids that name a ``unit`` of the conversation; the rest are counted."""
    evidence = frozenset(i for i in ids if i in known)
    if unknown := len([i for i in ids if i not in known]):
        conv.skipped[f"evidence id matching no {unit} (dropped)"] += unknown
    if not evidence:
        conv.skipped[f"question whose evidence matches no {unit}"] += 1
    return evidence
