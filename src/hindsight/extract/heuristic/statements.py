"""What a user's message states: each clause tried against the rules, corrections marked.

A sentence is split into clauses (and into two where they share their subject: "I live
in Lyon and work as a sound engineer"); each clause is tried against an ordered list of
rules (preferences, facts, habits and experiences), and the first rule that matches
wins. A sentence that corrects the assistant is read as a correction: what it says
instead, tagged :attr:`~hindsight.models.Tag.CORRECTION`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from hindsight.extract.base import Extracted
from hindsight.extract.heuristic import experiences, facts, preferences
from hindsight.extract.heuristic.sentences import (
    ACKNOWLEDGE,
    CLAUSES,
    FILLER,
    GREETING,
    HYPOTHETICAL,
    MEANT,
    QUESTION,
    SAID_NOT,
    SYSTEMISH,
    split_sentences,
)
from hindsight.extract.heuristic.wording import (
    NOT_VALUES,
    TAIL,
    cut_value,
    hit,
    regex,
    third_person,
)
from hindsight.models import Kind, Tag

Rule = Callable[[str, str], list[Extracted]]

# the first that matches a clause wins
_RULES: tuple[Rule, ...] = (
    facts.own_name,
    *preferences.FAVOURITE,
    preferences.dislike,
    preferences.directive,
    preferences.prefer_over,
    preferences.RATHER,
    preferences.like,
    facts.age,
    *facts.SIMPLE_FACTS,
    facts.employer,
    facts.relation,
    facts.have,
    facts.i_am_a,
    experiences.habit,
    experiences.experience,
)


def _clause(text: str, name: str) -> list[Extracted]:
    text = TAIL.sub("", text.strip())
    if greeting := GREETING.match(text):
        text = text[greeting.end() :]
        if (m := facts.INTRO.match(text)) and m["val"].lower() not in NOT_VALUES:
            hints = (f"what is {name}'s name", "name")
            content = f"{name}'s name is {m['val']}"
            return hit(Kind.FACT, content, 0.6, attribute="name", value=m["val"], hints=hints)
    text = FILLER.sub("", text)
    if not text or QUESTION.match(text) or HYPOTHETICAL.search(text):
        return []
    return next((found for rule in _RULES if (found := rule(text, name))), [])


_AND = regex(r"\s+and\s+")


def _statement(sentence: str, name: str) -> list[Extracted]:
    return [e for part in CLAUSES.split(sentence) for e in _coordinated(part, name)]


def _coordinated(part: str, name: str) -> list[Extracted]:
    """A clause, or two that share their subject: "I live in Lyon and work as a sound
    engineer" states where and what, not that the user lives in "Lyon and work". Split
    at an "and" only where both sides say something on their own."""
    for joint in _AND.finditer(part):
        rest = part[joint.end() :]
        if rest[:1].isupper() or rest.lower().startswith(("i ", "my ")):
            continue  # "Tom and Jerry"; "and I ..." is split already
        second = _clause(f"I {rest}", name)
        first = _clause(part[: joint.start()], name) if second else []
        if first:
            return first + second
    return _clause(part, name)


def corrected(rest: str, name: str) -> list[Extracted]:
    """What a correction says: a known pattern, or the sentence itself."""
    if m := SAID_NOT.match(rest):
        x, y = cut_value(m["x"], max_words=8), cut_value(m["y"], max_words=8)
        if x and y:
            return hit(Kind.FACT, f"{name} said {third_person(x)}, not {third_person(y)}", 0.95)
    if m := MEANT.match(rest):
        if (found := _statement(m["x"], name)) or not (x := cut_value(m["x"])):
            return found
        return hit(Kind.FACT, f"{name} meant {third_person(x)}", 0.9)
    if found := _statement(rest, name):
        return found
    text = cut_value(rest)
    if len(text.split()) < 2 or ACKNOWLEDGE.match(text) or QUESTION.match(text):
        return []
    if HYPOTHETICAL.search(text):
        return []
    right = third_person(text)
    return [
        replace(e, detail=right)
        for e in hit(Kind.FACT, f"{name} corrected the assistant: {right}", 0.9)
    ]


def _as_correction(found: list[Extracted]) -> list[Extracted]:
    tags = (Tag.CORRECTION,)
    return [replace(e, confidence=max(e.confidence, 0.95), tags=e.tags + tags) for e in found]


def user_text(text: str, name: str, *, to_assistant: bool = True) -> list[Extracted]:
    """What a user's message states."""
    if SYSTEMISH.match(text):
        return []  # a pasted or restated system prompt is not about the user
    out: list[Extracted] = []
    for sentence, correcting in split_sentences(text, to_assistant=to_assistant):
        out += (
            _as_correction(corrected(sentence, name)) if correcting else _statement(sentence, name)
        )
    return out
