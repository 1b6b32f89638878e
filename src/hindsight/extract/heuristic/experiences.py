"""Habits and experiences in a clause: what the speaker usually does, and what they did.

"I usually run before work" is a habit (a fact, "never" and "rarely" negative); "I
went to Lisbon last week" and "I have climbed Kilimanjaro" are experiences. A loose
past tense ("I got confused") counts only with a time phrase.
"""

from __future__ import annotations

import re

from hindsight.extract.base import Extracted
from hindsight.extract.heuristic.wording import (
    PAST,
    cut_value,
    hit,
    regex,
    third_person,
    third_verb,
    word_set,
)
from hindsight.models import Kind

_HABIT = regex(
    r"^i (?P<adv>usually|normally|typically|generally|often|always|never|rarely|regularly|"
    r"frequently|sometimes) (?P<verb>[a-z]+)\b(?P<rest>.*)$"
)
_WHEN = (
    r"(?:yesterday|today|earlier today|this (?:morning|afternoon|evening|week|weekend|month|"
    r"year)|last (?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|\w+day)|"
    r"recently|on \w+day|(?:a|one|two|three|a few|\d+) (?:days?|weeks?|months?|years?) ago)"
)
_KNOWN_PAST = (
    r"went|visited|finished|completed|attended|traveled|travelled|ran|hiked|climbed|graduated|"
    r"started|began|met|saw|watched|read|bought|adopted|won|tried|joined|learned|learnt|baked|"
    r"cooked|painted|wrote|built|celebrated|spent|took|got|lost|flew|drove|made|had|did|ate"
)
_EXPERIENCE = regex(
    rf"^(?:(?P<when>{_WHEN}),? )?i (?:just |recently |finally |also |actually )?"
    rf"(?P<verb>{_KNOWN_PAST}|\w+ed)\b(?P<rest>.*)$"
)
_HAVE_DONE = regex(
    r"^i have (?:just |recently |finally |already |also )?(?P<pp>been to|visited|finished|"
    r"completed|started|read|seen|watched|tried|climbed|run|written|traveled to|travelled to)"
    r"\b(?P<rest>.*)$"
)
_LOOSE_VERBS = word_set("got had made did took tried lost")
_NOT_HABIT_VERBS = word_set("can will would should could might must am")


def habit(text: str, name: str) -> list[Extracted]:
    """ "I usually run before work": what the speaker does as a rule."""
    if not (m := _HABIT.match(text)) or m["verb"].lower() in _NOT_HABIT_VERBS:
        return []
    if PAST.match(m["verb"]) or m["verb"].lower().endswith("ly"):
        return []  # "I never decided", "I never really asked": no verb to conjugate
    rest = cut_value(m["rest"]) if m["rest"].strip() else ""
    if m["rest"].strip() and not rest:
        return []  # "I typically hold it for a minute": without its object it says nothing
    said = " ".join(p for p in (m["adv"].lower(), third_verb(m["verb"]), third_person(rest)) if p)
    polarity = -1 if m["adv"].lower() in ("never", "rarely") else 1
    hints = (f"{name}'s habits",)
    return hit(Kind.FACT, f"{name} {said}", 0.6, hints=hints, polarity=polarity)


def experience(text: str, name: str) -> list[Extracted]:
    """ "I went to Lisbon last week", "I have climbed Kilimanjaro": what they did."""
    if m := _HAVE_DONE.match(text):
        head, when, loose = f"has {m['pp'].lower()}", None, False
    elif m := _EXPERIENCE.match(text):
        head, when = m["verb"].lower(), m["when"]
        loose = head in _LOOSE_VERBS or not re.fullmatch(_KNOWN_PAST, head)
        if loose and not when:
            return []  # "I got confused": only with a time phrase is it an event
    else:
        return []
    rest = cut_value(m["rest"]) if m["rest"].strip() else ""
    if not rest and not when:
        return []
    content = " ".join(p for p in (name, head, third_person(rest), when and when.lower()) if p)
    return hit(Kind.EXPERIENCE, content, 0.55 if loose else 0.6, hints=(f"what did {name} do",))
