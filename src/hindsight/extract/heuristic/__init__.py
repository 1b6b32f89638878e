"""A deterministic, offline extractor built from regular expressions.

It reads first-person statements from user turns (or from named speakers in a
multi-party conversation) and tool outputs. It never reads assistant or system
turns, questions, hypotheticals or negated states: a missed memory costs less
than a junk one (a request's statements before its question are read: "I prefer
step-by-step answers, can you help?"). Each message is normalised (curly quotes,
contractions), split into sentences and clauses, and each clause is tried against an
ordered list of rules; the first rule that matches wins.

The turn by turn flow is in :mod:`.extractor`; the message read a sentence at a time in
:mod:`.sentences`, and a clause at a time in :mod:`.statements`, against the rules of
:mod:`.preferences`, :mod:`.facts` and :mod:`.experiences`; tool outputs in
:mod:`.tools`; cutting values and retelling them in the third person in :mod:`.wording`.
"""

from __future__ import annotations

from hindsight.extract.heuristic.extractor import HeuristicExtractor, events, triggers

__all__ = ["HeuristicExtractor", "events", "triggers"]
