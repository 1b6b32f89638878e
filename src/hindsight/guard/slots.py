"""Whether an untrusted claim gives a trusted statement's slot another value, by meaning.

The lexical check (:mod:`hindsight.guard.conflict`) finds a contradiction in the words
two texts share ("no diabetes" against "type 1 diabetes"). An override rarely shares
them: the user says "I work from home in Porto", an imported record says "Base: Lisbon
office". This check reads slots instead:

- both texts are cut into sentences (and a record's fields), and each sentence is
  embedded; a sentence of the claim and one of the trusted text whose vectors are close
  speak of one slot (subject and attribute), whatever their words;
- the claim disputes that slot when it names a value of its own there (a name, a
  number, a code: what a slot holds) and restates none of the trusted sentence's: a
  tool that agrees says "Porto" again, one that adds detail names other things on
  other slots ("seat 14C" is not where the user flies).

The encoder decides what "close" is; values are read off the text, so this is still
a judgement the encoder bounds. An LLM judge (:mod:`hindsight.guard.assess`) reads
meaning better where one is configured.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from hindsight.guard.conflict import Contradiction, _set_of, stem

Encode = Callable[[Sequence[str]], npt.NDArray[np.float32]]

_MAX_SENTENCES: Final = 24  # a long page: its first sentences, where a record states itself
# a sentence ends at . ! ? before a capital (not after a title or an initial: "Mr. Hall",
# "D. Marsh"), and a record's field at a line break, ; or |
_SENTENCE = re.compile(
    r"(?<!\b[A-Z]\.)(?<!\b(?:Mr|Ms|Dr|St)\.)(?<!\bMrs\.)(?<=[.!?])\s+(?=[A-Z0-9\"'(])"
    r"|[\n;|{}]+|\s+[-\u2013\u2014]\s+"
    # and a JSON member at the comma after a value (a string, number, list, true, false or
    # null: its last character) before the next key
    r"|(?<=[\"\d\]el]),\s*(?=\")"
)
_QUOTED_KEY = re.compile(r"\"([^\"]{1,40})\"\s*:\s*")  # a JSON key reads as a field's name
_TOKEN = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")  # "ruth.adebayo@x" is three words
# capitalised words that are no value: the first person, titles, greetings, pronouns
_NOT_NAMES: Final = _set_of(
    "i i'm i've i'd i'll mr mrs ms dr prof sir madam the a an my our your his her their we "
    "you he she they it this that these those please thanks hi hello dear ok yes no"
)
_CALENDAR: Final = _set_of(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday "
    "friday saturday sunday mon tue tues wed thu thur thurs fri sat sun today tomorrow"
)
# digits grouped by spaces, dots or dashes are one number: "+47 934 77 105", "20-45-77"
_GROUPED = re.compile(r"\d+(?:[ .-]\d+)+")
_FIELD = re.compile(r"^([A-Za-z][A-Za-z /_-]{1,40}?)\s*:\s*(\S.{0,160})$")  # "Base: Lisbon"
# a record's field that states an absence: "Allergies: none", "SEN status: none recorded"
_NOTHING = re.compile(
    r"^[^:]{2,40}:\s*\(?(?:none|nil|no|false|n/?a|not\s+(?:applicable|recorded|known|"
    r"declared|listed)|(?:none|nothing)\s+(?:recorded|known|reported|declared|listed|found|"
    r"on\s+(?:file|record)))\)?\s*[.;]?$",
    re.IGNORECASE,
)
# what the agent states of the user, in a sentence of its own (after a label at most):
# "Quick recap: you're on the variable rate", "Since you're all-in on Apple", "your
# booking is room-only" (not its advice: "Ensure your thesis is clear", "if you have")
_OF_THE_USER = re.compile(
    r"^(?:[^:]{1,40}:\s*)?(?:(?:since|as|because|so|now that)\s+)?"
    r"(?:you(?:['\u2019]re|['\u2019]ve|\s+are|\s+have|\s+haven['\u2019]t|\s+don['\u2019]t|"
    r"\s+do\s+not|\s+never|\s+only)\b|your\s+(?:[\w'-]+\s+){1,3}(?:is|are|was|were)\b)",
    re.IGNORECASE,
)
# a sentence that asks, supposes or requests states no value of a slot
_UNSTATED = re.compile(
    r"^(?:if|when|whenever|whether|unless|in case|can|could|would|will|should|shall|do|does|"
    r"did|is|are|please|what|which|who|where|how|why)\b|\?\s*$",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:no|not|never|none|without)\b|n't\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    values: frozenset[str]  # names, numbers and codes it gives
    words: frozenset[str]  # every word's stem, to tell whether a value is restated
    nothing: bool  # a record's field stating an absence
    negated: bool
    denied: frozenset[str]  # what a negation in it takes back: "never by calling me": call
    terms: frozenset[str]  # its long words ("amoxicillin", "coeliac"): said again, agreement
    measures: frozenset[tuple[str, str]]  # a number with its unit: ("500", "mg"), ("7", "day")


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` and the fields of a record, the first few."""
    parts = (
        _QUOTED_KEY.sub(lambda m: m.group(1).replace("_", " ") + ": ", p)
        .replace('"', "")
        .strip(" \t,:")
        for p in _SENTENCE.split(text)
    )
    return [p for p in parts if _TOKEN.search(p)][:_MAX_SENTENCES]


def _as_said(sentence: str) -> str | None:
    """A record's field as its subject would say it: "Work location: Dublin HQ" is "My
    work location is Dublin HQ." (the encoder puts that nearer "I work from Porto")."""
    field = _FIELD.match(sentence)
    if field is None:
        return None
    return f"My {field.group(1).strip().lower()} is {field.group(2).strip().rstrip('.')}."


def readings(text: str) -> list[str]:
    """The sentences of ``text`` with its fields as said: what to look for neighbours by."""
    said = sentences(text)
    return said + [r for s in said if (r := _as_said(s)) is not None]


def _read(sentence: str) -> _Sentence:
    tokens = _TOKEN.findall(_GROUPED.sub(lambda m: re.sub(r"\D", "", m.group(0)), sentence))
    values = set()
    for i, token in enumerate(tokens):
        low = token.lower().rstrip(".")
        at = sentence.find(token)
        is_key = sentence[at + len(token) : at + len(token) + 1] == ":"  # "Base: Lisbon"
        if any(c.isdigit() for c in token):
            values.add(_number(low))
        elif (
            token[0].isupper()
            and i > 0
            and not _shouted(tokens, i)
            and len(token) > 2  # "GP", "EE": an abbreviation names a kind more than a value
            and low not in _NOT_NAMES
            and low not in _CALENDAR  # when, not what (dates are conflict.py's)
            and not is_key
        ):
            values.add(stem(low))
    return _Sentence(
        sentence,
        frozenset(values),
        frozenset(_words(tokens)),
        nothing=bool(_NOTHING.match(sentence)),
        negated=bool(_NEGATION.search(sentence)),
        denied=_denied(sentence),
        terms=frozenset(stem(t.lower()) for t in tokens if t.isalpha() and len(t) >= _TERM),
        measures=_measures(tokens),
    )


def _shouted(tokens: list[str], i: int) -> bool:
    """Whether ``tokens[i]`` is in a run of capitals ("AMOXICILLIN 500MG CAPSULES",
    "Take ONE capsule THREE times" is not): a label's emphasis, not a name."""
    return tokens[i].isupper() and any(
        0 <= j < len(tokens) and tokens[j].isupper() and len(tokens[j]) > 2 for j in (i - 1, i + 1)
    )


def _measures(tokens: list[str]) -> frozenset[tuple[str, str]]:
    """Each number with what it counts: "500MG" is (500, mg), "7 day course" (7, day)."""
    out = set()
    for i, token in enumerate(tokens):
        number = re.match(r"\d+", token)
        if number is None:
            continue
        unit = token[number.end() :].lower()
        if not unit and i + 1 < len(tokens) and tokens[i + 1].isalpha():
            unit = tokens[i + 1].lower()
        out.add((number.group(0), stem(unit)))
    return frozenset(out)


_TERM: Final = 7  # letters of a word specific enough that saying it again is agreeing
_AFTER_NEGATION: Final = 3  # words after a negation that it may take back
_FILLER: Final = _set_of(
    "have been being any more longer with that this from about into them their your than "
    "ever even really yet much many"
)


def _denied(sentence: str) -> frozenset[str]:
    words = _TOKEN.findall(sentence.lower())
    out = set()
    for i, word in enumerate(words):
        if _NEGATION.fullmatch(word) or word.endswith("n't"):
            for after in words[i + 1 : i + 1 + _AFTER_NEGATION]:
                if after.isalpha() and len(after) >= 4 and after not in _FILLER:
                    out.add(stem(after))
    return frozenset(out)


def _words(tokens: list[str]) -> set[str]:
    out = set()
    for token in tokens:
        low = token.lower().rstrip(".")
        out.add(_number(low) if any(c.isdigit() for c in low) else stem(low))
    return out


def _number(token: str) -> str:
    """A number as a value: "9th" and "9" are one day."""
    return re.sub(r"(?<=\d)(st|nd|rd|th)$", "", token)


def memo(encode: Encode) -> Encode:
    """``encode`` remembering what it embedded: a write compares one text with many."""
    seen: dict[str, npt.NDArray[np.float32]] = {}

    def encoded(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        due = [t for t in dict.fromkeys(texts) if t not in seen]
        if due:
            seen.update(zip(due, encode(due), strict=True))
        return np.array([seen[t] for t in texts], dtype=np.float32)

    return encoded


def disputes(
    claims: Sequence[str],
    trusted: Sequence[str],
    encode: Encode,
    *,
    similarity: float,
    of_the_user: bool = False,
) -> list[tuple[int, int, Contradiction]]:
    """For each claim and trusted text (by index), where the claim gives a slot of the
    trusted text another value: a sentence of each at least ``similarity`` close, the
    claim's naming a value the trusted text lacks, and the claim restating none of the
    trusted sentence's values. With ``of_the_user``, only the claims' sentences that
    state what the user is or has count (an agent's, not its advice)."""
    cut_claims = [
        [
            _read(s)
            for s in sentences(c)
            if not _UNSTATED.search(s) and (not of_the_user or _OF_THE_USER.match(s))
        ]
        for c in claims
    ]
    cut_trusted = [[_read(s) for s in sentences(t) if not _UNSTATED.search(s)] for t in trusted]
    flat = [s.text for cut in (*cut_claims, *cut_trusted) for s in cut]
    if not flat:
        return []
    stated = {s.text: _as_said(s.text) for cut in cut_claims for s in cut}
    flat += [said for said in stated.values() if said is not None]
    vectors = dict(zip(flat, encode(flat), strict=True))
    for field, said in stated.items():  # a field reads closest to its subject's words
        if said is not None:
            vectors[field] = np.stack([vectors[field], vectors[said]])
    found = []
    for i, claim in enumerate(cut_claims):
        claim_words = frozenset().union(*(s.words for s in claim))
        for j, theirs in enumerate(cut_trusted):
            their_words = frozenset().union(*(s.words for s in theirs))
            hit = _dispute(claim, claim_words, theirs, their_words, vectors, similarity)
            if hit is not None:
                found.append((i, j, hit))
    return found


def _dispute(
    claim: list[_Sentence],
    claim_words: frozenset[str],
    trusted: list[_Sentence],
    trusted_words: frozenset[str],
    vectors: dict[str, npt.NDArray[np.float32]],
    similarity: float,
) -> Contradiction | None:
    pairs = sorted(
        (
            (float(np.max(vectors[c.text] @ vectors[t.text])), c, t)
            for c in claim
            for t in trusted
            if (c.nothing and not t.negated)
            or (c.values and t.values)
            or (t.denied and not c.negated)
        ),
        key=lambda p: -p[0],
    )
    for sim, c, t in pairs:
        if sim < similarity:
            break
        if c.nothing and not t.negated:  # a record: none of what the trusted text says
            return Contradiction(c.text, t.text)
        if not c.negated and t.denied & c.words:  # it asserts what the trusted one denies
            return Contradiction(c.text, t.text)
        if not (c.values and t.values) or _restated(t.values, claim_words):
            continue  # it says the trusted value again: agreement, or detail beside it
        if _names(c.values) - trusted_words or _other_measure(c.measures, t.measures):
            return Contradiction(c.text, t.text, value=True)
    return None


def _names(values: frozenset[str]) -> frozenset[str]:
    return frozenset(v for v in values if not any(c.isdigit() for c in v))


def _other_measure(claim: frozenset[tuple[str, str]], trusted: frozenset[tuple[str, str]]) -> bool:
    """Another number of the same thing ("10 days" against "7 day"): a number of another
    thing is detail ("25 cm" beside "10 canes", "500MG x21" beside "a 7 day course")."""
    theirs = {unit: n for n, unit in trusted if unit}
    return any(unit in theirs and theirs[unit] != n for n, unit in claim)


def _restated(values: frozenset[str], words: frozenset[str]) -> bool:
    """Whether ``words`` say one of ``values``, spelt as it is or one letter apart
    ("Gent" and "Ghent", "Olesya" and "Olessya"): a name has more spellings than one."""
    if values & words:
        return True
    return any(
        len(value) >= 4 and not value.isdigit() and _one_apart(value, word)
        for value in values
        for word in words
        if abs(len(value) - len(word)) <= 1 and word[:1] == value[:1]
    )


def _one_apart(a: str, b: str) -> bool:
    """One letter added, dropped or changed."""
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i + 1 :] == b[i + 1 :] if len(a) == len(b) else a[i:] == b[i + 1 :]


def restates(claim: str, trusted: str, besides: str) -> bool:
    """Whether ``claim`` gives a value ``trusted`` gives and ``besides`` does not: a
    claim that repeats the user's later word ("dispensed 100 mcg", after "my dose went
    up to 100 mcg") follows a change, it does not make one."""
    theirs = frozenset().union(*(_read(s).values for s in sentences(trusted)))
    before = frozenset().union(*(_read(s).words for s in sentences(besides)))
    said = frozenset().union(*(_read(s).words for s in sentences(claim)))
    return bool((theirs - before) & said)
