"""Loaders for public long-term-memory benchmarks, into one neutral shape.

Each loader reads a benchmark's own files and returns a :class:`Dataset`:
conversations of sessions of turns, and per conversation the questions whose
evidence is a set of turn ids. Nothing is dropped silently: every question,
evidence id or message that cannot be used is counted under a reason in
:attr:`Conversation.skipped`, and every repair (a malformed evidence id
normalised, an index marker stripped) in :attr:`Conversation.repaired`.

* LoCoMo (``locomo10.json``, snap-research/LoCoMo): :func:`load_locomo`.
* BEAM (a folder of ``<n>/chat.json`` and ``<n>/probing_questions/probing_questions.json``,
  mohammadtavakoli78/BEAM): :func:`load_beam`.

They share one shape (:mod:`.shape`); each family has its loader module (:mod:`.locomo`,
:mod:`.beam`), and a loaded set can be sent otherwise (:mod:`.variants`: one message per
sentence, one owner) or typed as on a phone (:mod:`.typed`).
"""

from __future__ import annotations

from typing import Final

from hindsight.bench.datasets.beam import flatten_ids, load_beam, parse_beam_time, strip_marker
from hindsight.bench.datasets.locomo import (
    LOCOMO_CATEGORIES,
    MAX_RANGE,
    load_locomo,
    normalise_dia_id,
    parse_locomo_time,
    split_evidence,
)
from hindsight.bench.datasets.shape import BenchTurn, Conversation, Dataset, Question, Session
from hindsight.bench.datasets.typed import Typing, chat_typed
from hindsight.bench.datasets.variants import one_owner, per_sentence

LOADERS: Final = {"locomo": load_locomo, "beam": load_beam}

__all__ = [
    "LOADERS",
    "LOCOMO_CATEGORIES",
    "MAX_RANGE",
    "BenchTurn",
    "Conversation",
    "Dataset",
    "Question",
    "Session",
    "Typing",
    "chat_typed",
    "flatten_ids",
    "load_beam",
    "load_locomo",
    "normalise_dia_id",
    "one_owner",
    "parse_beam_time",
    "parse_locomo_time",
    "per_sentence",
    "split_evidence",
    "strip_marker",
]
