"""The heuristic extractor's wording: captured values cut clean, and statements retold.

A rule captures a value from a first-person clause ("I live in Lyon now, with my
sister"); :func:`cut_value` and its kin cut it at the first clause boundary and refuse
what cannot stand alone ("it", "stuff"). :func:`third_person` retells it about the
speaker, and :func:`hit` and :class:`Spec` make the :class:`Extracted` a rule returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from hindsight.extract.base import Extracted
from hindsight.models import Kind

_I = re.IGNORECASE
_MAX_WORDS = 20  # longer captures are more likely mis-parses than memories


def regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled to match in any case."""
    return re.compile(pattern, _I)


def word_set(text: str) -> frozenset[str]:
    """The words of ``text``, for tables written as one string."""
    return frozenset(text.split())


_PRONOUNS = regex(r"\b(i am|i was|i have|myself|mine|my|me|i)\b")
_PRONOUN_MAP = {
    "i am": "they are",
    "i was": "they were",
    "i have": "they have",
    "myself": "themselves",
    "mine": "theirs",
    "my": "their",
    "me": "them",
    "i": "they",
}
_VERB_3RD = {"am": "is", "are": "is", "be": "is", "have": "has", "do": "does", "go": "goes"}
_STOP = (
    r"\s*(?:[,;:(]|\s-\s|\b(?:because|since|although|though|but|which|who|where|when|"
    r"so that|lol|haha|btw)\b)"
)
_VALUE_STOP = regex(_STOP)
NO_STOP = re.compile(r"(?!)")
_PLACE_STOP = regex(
    _STOP + r"|\s+(?:with|for|and I|now|nowadays|these days|last|this|next|ago|recently|"
    r"a (?:few|couple)|about|around|to be|so|as|in (?:\d{4}|the (?:spring|summer|fall|autumn|"
    r"winter)|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*))\b"
)
_JOB_STOP = regex(_STOP + r"|\s+(?:and|of|in|by|with|from|who|so|at|for)\b")
TAIL = regex(
    r"(?:\s+(?:a lot|so much|very much|too|as well|really|though|lol|haha|anyway))+\s*$|"
    r"[\s.!,;:\"'-]+$|(?:^|\s+)(?:to|and|or|but|the|a|an|of|with|for)$"  # cut off mid-phrase
)
NOT_VALUES = word_set(
    "it that this you them those these him her everything anything something nothing stuff things"
)
_UNRESOLVED = word_set("it them things stuff")
_NOT_PLACES = word_set("here there home nowhere somewhere everywhere work school")


def third_person(text: str) -> str:
    """Swap first-person pronouns for third-person ones."""
    return _PRONOUNS.sub(lambda m: _PRONOUN_MAP[m.group(0).lower()], text)


def third_verb(verb: str) -> str:
    """``verb`` as said of someone else: "love" is "loves", "go" "goes", "try" "tries"."""
    low = verb.lower()
    if low in _VERB_3RD:
        return _VERB_3RD[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    return verb[:-1] + "ies" if re.search(r"[^aeiou]y$", low) else verb + "s"


def cut_value(raw: str, stop: re.Pattern[str] = _VALUE_STOP, max_words: int = _MAX_WORDS) -> str:
    """Cut a captured value at the first clause boundary; '' if unusable."""
    m = stop.search(raw)
    value, prev = raw[: m.start()] if m else raw, ""
    while prev != value:
        prev, value = value, TAIL.sub("", value).strip()
    words = value.split()
    if not words or len(words) > max_words or value.lower() in NOT_VALUES:
        return ""
    # "restoring it", "50% of it": what the value is about was said elsewhere (a pronoun
    # later on, "... and it was great", only comments on it; "It" in capitals is a title)
    if _UNRESOLVED & {w.strip(".,;:!?'\"") for w in words[:4]}:
        return ""
    return value if re.search(r"\w", value) else ""


def cut_place(raw: str) -> str:
    """A place: short, cut before times and companions ("Lyon" of "Lyon with my sister")."""
    value = cut_value(raw, _PLACE_STOP, 6)
    return "" if value.lower() in _NOT_PLACES or value.lower() == "the future" else value


def cut_job(raw: str) -> str:
    """A job title: a few words, cut before where and for whom."""
    return cut_value(raw, _JOB_STOP, 4)


def lowered(raw: str) -> str:
    """A value as said, in lower case (a diet: "Vegan" is "vegan")."""
    return raw.lower()


def article(word: str) -> str:
    """The indefinite article before ``word``."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def hit(
    kind: Kind,
    content: str,
    confidence: float = 0.85,
    *,
    attribute: str | None = None,
    value: str | None = None,
    hints: tuple[str, ...] = (),
    polarity: int = 1,
    applies_when: str | None = None,
) -> list[Extracted]:
    """One statement found in a clause (its turn index is set by the extractor)."""
    return [
        Extracted(
            kind,
            content,
            confidence,
            0,
            attribute,
            value,
            hints,
            polarity,
            applies_when=applies_when,
        )
    ]


@dataclass(frozen=True, slots=True)
class Spec:
    """A one-pattern rule: match, clean the ``val`` group, fill the templates.

    Templates see ``name``, ``val`` (third person), ``a`` (its article) and the
    pattern's other groups lower-cased.
    """

    pattern: re.Pattern[str]
    template: str
    kind: Kind = Kind.FACT
    attribute: str | None = None
    hints: tuple[str, ...] = ()
    confidence: float = 0.85
    clean: Callable[[str], str] = cut_value

    def __call__(self, text: str, name: str) -> list[Extracted]:
        if not (m := self.pattern.match(text)) or not (val := self.clean(m["val"])):
            return []
        groups = {k: (v or "").lower().strip() for k, v in m.groupdict().items() if k != "val"}
        fill = {**groups, "name": name, "val": third_person(val), "a": article(val)}
        attribute = self.attribute.format(**fill) if self.attribute else None
        hints = tuple(h.format(**fill) for h in self.hints)
        content = self.template.format(**fill)
        return hit(self.kind, content, self.confidence, attribute=attribute, value=val, hints=hints)


# a clause that goes on in the past tense: "Never saw this coming!" instructs no one, "I
# never decided" states no habit
PAST = regex(
    r"^(?:\w*[^\We]ed|saw|heard|knew|thought|had|was|were|got|felt|said|did|went|came|took|made|"
    r"gave|found|told|been)\b"
)
