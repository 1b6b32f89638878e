"""A data set sent otherwise: one message per sentence, or every conversation as one
long history."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Final

from hindsight.bench.datasets.shape import Conversation, Dataset, Question, Session

# A sentence ends at . ! or ? before a space and a capital, digit or quote ("Dr. who" stays).
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")


def per_sentence(data: Dataset) -> Dataset:
    """``data`` as people type in a chat: each turn sent as several messages in a row, one
    per sentence, at its time. A question's evidence becomes every message of its turns
    ("D1:3" -> "D1:3.1", "D1:3.2", ...), as a real chat's evidence names the run of
    messages that makes one statement."""
    conversations = []
    for conv in data.conversations:
        pieces: dict[str, list[str]] = {}
        sessions = []
        for session in conv.sessions:
            turns = []
            for turn in session.turns:
                parts = [p for p in _SENTENCE_END.split(turn.text.strip()) if p.strip()]
                ids = [f"{turn.turn_id}.{i}" for i in range(1, len(parts) + 1)]
                pieces[turn.turn_id] = ids
                turns += [replace(turn, turn_id=i, text=p) for i, p in zip(ids, parts, strict=True)]
            sessions.append(Session(session.id, turns))
        questions = [
            replace(q, evidence=frozenset(p for t in q.evidence for p in pieces[t]), ordered=None)
            for q in conv.questions
        ]
        conversations.append(
            Conversation(
                conv.id, sessions, questions, Counter(conv.skipped), Counter(conv.repaired)
            )
        )
    return Dataset(f"{data.name}-sentences", conversations)


def one_owner(data: Dataset) -> Dataset:
    """``data`` as one long history: every conversation's sessions, in order, retained into
    one owner, and each question asked over all of it. The other conversations stand in
    for the rest of a long history, with look-alikes among them (BEAM's writing chats share
    a persona). Ids take their conversation's as a prefix ("conv-26:D1:3"); a question keeps
    its conversation, so figures by conversation and by half still read per conversation."""
    sessions: list[Session] = []
    questions: list[Question] = []
    for conv in data.conversations:
        at = f"{conv.id}:"
        for session in conv.sessions:
            turns = [replace(t, turn_id=at + t.turn_id) for t in session.turns]
            sessions.append(Session(at + session.id, turns))
        for q in conv.questions:
            ordered = q.ordered and {k: [at + i for i in ids] for k, ids in q.ordered.items()}
            evidence = frozenset(at + i for i in q.evidence)
            questions.append(replace(q, evidence=evidence, ordered=ordered))
    merged = Conversation("all", sessions, questions, data.skipped, data.repaired)
    return Dataset(f"{data.name}-one-owner", [merged])
