"""Whether a claim contradicts a trusted statement on the same subject, by its words.

Two texts already known to be about one subject (their vectors are close, or one query
found both) contradict each other when

- one takes back what the other asserts: "no diabetes" against "I have type 1
  diabetes", "is not pregnant" against "I'm pregnant" (a denial of a thing or a state;
  a negated action, "it isn't working", reports an event and denies no fact), or
  asserts what the other forbids: "account upgraded" against "please don't upgrade me";
- they give one slot two values: "Terminal 2" against "Terminal 1" (a label with a
  number), "birthday: 3 June" against "birthday is on 12 October" (dates after the same
  word, in clauses that share another), "Seat preference: window" against "an aisle
  seat" (a record's field), "United States tax resident" against "Canadian tax
  resident" (a qualified phrase).

Adding detail is not contradicting: a tool's new numbers, names or times for what the
user asked about raise nothing, and code states nothing. This is a lexical check,
cheap enough to run on every untrusted write; a model-based judge may sit behind the
same function later.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final


def _set_of(words: str) -> frozenset[str]:
    return frozenset(words.split())


_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d+(?:st|nd|rd|th)?")
_TOKEN_OR_COMMA = re.compile(rf"{_TOKEN.pattern}|,")
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`|^(?: {4}|\t).*$", re.DOTALL | re.MULTILINE)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
# a letter's closing formula asserts nothing ("Best regards" is no claim that something is best)
_SIGN_OFF = re.compile(
    r"\b(?:(?:best|kind|kindest|warm|warmest|with) (?:regards|wishes)|all the best)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"[.;!?\n()]|,\s+(?:but|so|and|which)\b")
_NEGATIONS: Final = frozenset(
    {"no", "not", "never", "without", "none", "nobody", "nothing", "neither", "nor", "cannot"}
    | {"outgrew", "outgrown"}
)
_DENIALS: Final = frozenset({"no", "without", "outgrew", "outgrown"})
_ARTICLES: Final = frozenset({"a", "an", "the", "any"})
# words before a negation, between the same commas, that make it a supposition, which
# asserts nothing: "even if no transactions exist", "cases where the API returns no data"
_SUPPOSING: Final = frozenset({"if", "unless", "whether", "where", "when", "whenever"})
# modals after a thing that make "no X" a claim about X, not a denial of it: "no triangle
# can have two right angles"
_MODALS: Final = _set_of("can could will would shall should may might must")
_COPULAS: Final = frozenset(
    {"is", "are", "was", "were", "am", "be", "i'm", "it's", "he's", "she's"}
)
_OPENERS: Final = frozenset({"please", "so", "and", "but", "just", "also", "then"})
# words between a negation and what it negates ("no longer allergic", "not a US citizen")
_FILLERS: Final = _set_of(
    "a an the any longer more me us him her them it to be been being is are was "
    "were have has had do does did my your his their our this that these those of "
    "at all so very really ever even yet"
)
# heads that negate nothing about the world ("no problem", "not sure", "no need")
_IDLE: Final = _set_of(
    "problem problems worries worry sure idea doubt matter way one thing things "
    "time need much many bad just only later thanks"
)
# predicates whose negation negates their subject: "the EpiPens are no longer needed"
_REQUIRED: Final = _set_of(
    "required needed necessary mandatory allowed valid applicable true relevant"
)
_STOP: Final = _FILLERS | _set_of(
    "i you he she we they and or but if then than as on in for with from by about "
    "into over after before up down out off what which who whom whose when where "
    "why how can could will would shall should may might must also there here now "
    "just its near under between across through around against during within along "
    "behind beyond via per"
)
_MONTH_NAMES: Final = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTHS: Final = (
    {name: i + 1 for i, name in enumerate(_MONTH_NAMES)}
    | {name[:3]: i + 1 for i, name in enumerate(_MONTH_NAMES)}
    | {"sept": 9}
)
_LABEL = re.compile(r"\b([A-Z][a-z]{2,})\s+(\d{1,4}[A-Z]?)\b")
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_SPACE = r"[^\S\n]+"  # within a line: "August.\n\n2." is a month and a list's item
_DATE = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?{_SPACE}(?:of{_SPACE})?({_MONTH})"
    rf"|({_MONTH})\.?{_SPACE}(\d{{1,2}})(?:st|nd|rd|th)?|the{_SPACE}(\d{{1,2}})(?:st|nd|rd|th))\b",
    re.IGNORECASE,
)
# a record's field with a word value: "Seat preference: window" ("Sat 9 Aug: ..." is not)
_FIELD = re.compile(
    r"(?:^|[.;|\n(]\s*|:\s+)([A-Za-z][A-Za-z ]{2,40}?)\s*:\s*([A-Za-z][A-Za-z' -]{1,40}?)"
    r"\s*(?=[.;|\n,(]|$)"
)
# words a field's name never holds, a sentence's often do ("Create a file:")
_SENTENCE: Final = _set_of(
    "i you he she we they it me my your his her our their its a an the can could will "
    "would should may might must do does did is are was were"
)
_ANCHOR_WORDS: Final = 4  # words before a date that say what it is the date of


@dataclass(frozen=True, slots=True)
class Contradiction:
    """Where a claim and a trusted text disagree, in their own words."""

    claim: str
    trusted: str
    value: bool = False  # a slot given two values ("Terminal 2", "Terminal 1"), no denial

    def __str__(self) -> str:
        return f"{self.claim!r} against {self.trusted!r}"

    def supported_by(self, text: str) -> bool:
        """Whether ``text`` gives the claim's value too: a claim that follows one trusted
        statement against another ("the festival on October 20", said by the user after
        "on September 22") repeats a change, it does not make one."""
        return self.value and " ".join(self.claim.split()).lower() in " ".join(text.split()).lower()


@dataclass(frozen=True, slots=True)
class _Said:
    """What a text says, as the checks compare it: read once per text."""

    denied: dict[str, str]  # stem -> the words that take it back ("no diabetes")
    forbidden: dict[str, str]  # stem -> the words that rule it out ("don't upgrade")
    asserted: dict[str, str]  # stem -> the word that asserts it
    labels: dict[str, set[str]]  # "Terminal" -> {"2"}
    dates: dict[str, tuple[tuple[int, int], str, set[str]]]  # anchor -> (date, words, clause)
    fields: list[tuple[set[str], set[str], str]]  # a record's "key: value": stems, words
    modifiers: dict[str, tuple[str, str]]  # a noun's stem -> (the word before it, the noun)
    phrases: dict[tuple[str, str], tuple[str, str]]  # two words' stems -> (qualifier, words)
    durations: dict[str, tuple[int, str]]  # a noun's stem -> (days, the words) "3-month notice"


@functools.lru_cache(maxsize=8192)
def _said(text: str) -> _Said:
    text = _SIGN_OFF.sub(" ", _URL.sub(" ", _CODE.sub(" ", text)))  # they state nothing
    denied, forbidden, asserted = _sides(text)
    modifiers, phrases = _modified(text)
    fields = _record(text)
    return _Said(
        denied,
        forbidden,
        asserted,
        _numbered(text),
        _dated(text),
        fields,
        modifiers,
        phrases,
        _lasting(text),
    )


def contradiction(claim: str, trusted: str) -> Contradiction | None:
    """How ``claim`` contradicts ``trusted``, or None where it does not."""
    a, b = _said(claim), _said(trusted)
    return (
        _polarity(a, b)
        or _labels(a, b)
        or _dates(a, b)
        or _fields(a, b)
        or _phrases(a, b)
        or _durations(a, b)
    )


def stem(word: str) -> str:
    w = word.lower().replace("\u2019", "'").removesuffix("'s").strip("'-")
    if w.endswith("n't"):
        return "not"
    for suffix in ("ency", "ence", "ent", "ing", "ed", "es", "e", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            return w[: -len(suffix)]
    return w


def _words(text: str) -> list[list[str]]:
    """The words of each clause."""
    return [words for words, _ in _phrased(text)]


def _phrased(text: str) -> list[tuple[list[str], list[int]]]:
    """The words of each clause, each with the number of commas before it there."""
    out = []
    for clause in _CLAUSE.split(text):
        words, commas, seen = [], [], 0
        for token in _TOKEN_OR_COMMA.findall(clause):
            if token == ",":
                seen += 1
            else:
                words.append(token)
                commas.append(seen)
        out.append((words, commas))
    return out


def _is_negation(word: str) -> bool:
    low = word.lower().replace("\u2019", "'")
    return low in _NEGATIONS or low.endswith("n't")


def _sides(text: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(denied, forbidden, asserted): stems mapped to the words that say them.

    Denied is what a negation of a thing or a state takes back: "no diabetes", "without
    review", "no longer allergic", "not a US citizen", "outgrew his allergy", but not a
    thing quantified ("no triangle can ...") nor one supposed ("if no data comes back").
    Forbidden is what a prohibition rules out: "please don't upgrade me", "never book me
    meat meals". A negated action ("it isn't working", "I didn't prepare") is neither: it
    reports an event, and contradicts no fact.
    """
    denied: dict[str, str] = {}
    forbidden: dict[str, str] = {}
    asserted: dict[str, str] = {}
    for words, commas in _phrased(text):
        heads: set[int] = set()
        for i in range(len(words)):
            kind = _negation(words, i)
            if kind is None or (kind == "deny" and _supposed(words, commas, i)):
                continue
            into = denied if kind == "deny" else forbidden
            for j in range(i + 1, min(i + 6, len(words))):
                w = words[j]
                if _is_negation(w) or (w.lower() in _FILLERS and not _acronym(w)):
                    continue
                if _manner(words, i, j):  # "not mutually exclusive": exclusive
                    continue
                if j + 1 < len(words) and words[j + 1].lower() in _MODALS:
                    break  # "no triangle can ...": said of triangles, not against them
                if w.lower() in _REQUIRED:  # "review is no longer required": the review
                    for subject in _content(words[max(0, i - 4) : i])[-2:]:
                        into.setdefault(_key(subject), " ".join(words[i - 1 : j + 1]))
                elif w.lower() not in _IDLE and not w.isdigit() and not w.endswith("ing"):
                    # (an -ing word is an action: "without using" reports how, not what)
                    into.setdefault(_key(w), " ".join(words[i : j + 1]))
                heads.add(j)
                break
        for j, word in enumerate(words):
            if j not in heads and not _is_negation(word) and _content([word]):
                asserted.setdefault(_key(word), word)
    return denied, forbidden, asserted


def _supposed(words: list[str], commas: list[int], i: int) -> bool:
    """Whether the word at ``i`` is inside a supposition: after "if", "where", ... with
    no comma between ("When they ask, close it without a refund" says something)."""
    return any(words[k].lower() in _SUPPOSING for k in range(i) if commas[k] == commas[i])


def _negation(words: list[str], i: int) -> str | None:
    """ "deny", "forbid" or None: what the negation at ``words[i]`` does (see _sides)."""
    low = words[i].lower().replace("\u2019", "'")
    after = words[i + 1].lower() if i + 1 < len(words) else ""
    before = words[i - 1].lower().replace("\u2019", "'") if i > 0 else ""
    if low in _DENIALS or (low == "not" and (after in _ARTICLES or before in _COPULAS)):
        return "deny"  # "not a US citizen", "is not pregnant"
    opening = all(w.lower() in _OPENERS for w in words[:i])  # the clause starts with it
    if opening and (low in ("don't", "never") or (low == "do" and after == "not")):
        return "forbid"
    return None


def _manner(words: list[str], i: int, j: int) -> bool:
    """Whether ``words[j]`` is an adverb that a "not" at ``i`` reaches through to what it
    qualifies: "not mutually exclusive", "is not properly caught"."""
    w = words[j]
    return (
        words[i].lower() not in _DENIALS
        and w.islower()
        and len(w) >= 5
        and w.endswith("ly")
        and j + 1 < len(words)
    )


def _acronym(word: str) -> bool:
    return word.isupper() and len(word) > 1


def _content(words: list[str]) -> list[str]:
    return [w for w in words if _acronym(w) or (w.lower() not in _STOP and len(w) >= 3)]


def _key(word: str) -> str:
    # an acronym keeps its case: "US" is not "us"
    return word if _acronym(word) else stem(word)


def _polarity(claim: _Said, trusted: _Said) -> Contradiction | None:
    for key, said in claim.denied.items():
        if key in trusted.asserted and key not in trusted.denied:
            return Contradiction(said, trusted.asserted[key])
    for key, said in {**trusted.denied, **trusted.forbidden}.items():
        if key in claim.asserted and key not in claim.denied:
            return Contradiction(claim.asserted[key], said)
    return None


def _numbered(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for label, number in _LABEL.findall(text):
        if label.lower() not in _MONTHS and not label.lower().endswith("day"):
            out.setdefault(label, set()).add(number)
    return out


def _labels(claim: _Said, trusted: _Said) -> Contradiction | None:
    """A label numbered differently: "Terminal 2" against "Terminal 1"."""
    for label, numbers in claim.labels.items():
        theirs = trusted.labels.get(label)
        if theirs and not numbers & theirs:
            return Contradiction(f"{label} {min(numbers)}", f"{label} {min(theirs)}", True)
    return None


def _dates(claim: _Said, trusted: _Said) -> Contradiction | None:
    """Another date for the same thing: the words before each date say what it dates."""
    for anchor, (date, said, clause) in claim.dates.items():
        theirs = trusted.dates.get(anchor)
        # the same thing: the word before the date and another of its clause agree
        if theirs is not None and theirs[0] != date and len(clause & theirs[2]) >= 2:
            return Contradiction(said, theirs[1], True)
    return None


def _fields(claim: _Said, trusted: _Said) -> Contradiction | None:
    """A record's field set otherwise than the trusted text says it: "Seat preference:
    window" against "an aisle seat" (the field's noun, given another word before it)."""
    for keys, values, said in claim.fields:
        for key in keys:
            found = trusted.modifiers.get(key)
            # (a key that names the trusted modifier itself, "SMS from Ferncliff Pharmacy:",
            # says where the record is from, not another value)
            if found is not None and stem(found[0]) not in values | keys:
                return Contradiction(said, " ".join(found), True)
    return None


def _record(text: str) -> list[tuple[set[str], set[str], str]]:
    out = []
    for m in _FIELD.finditer(text):
        key = _TOKEN.findall(m.group(1))
        key_words, value_words = _content(key), _content(_TOKEN.findall(m.group(2)))
        # a field named in words ("Seat preference", not a one-word code key, nor a
        # sentence: "You can install it using pip:") with a short value
        terse = len(key) <= 4 and not any(w.lower() in _SENTENCE for w in key)
        if terse and len(key_words) >= 2 and 1 <= len(value_words) <= 3:
            keys = {stem(w) for w in key_words}
            values = {stem(w) for w in value_words}
            out.append((keys, values, " ".join(m.group(0).split()).strip(" .;|(:")))
    return out


def _phrases(claim: _Said, trusted: _Said) -> Contradiction | None:
    """A two-word phrase qualified otherwise: "United States tax resident" against
    "Canadian tax resident"."""
    for phrase, (qualifier, words) in claim.phrases.items():
        theirs = trusted.phrases.get(phrase)
        if theirs is not None and stem(theirs[0]) != stem(qualifier):
            return Contradiction(f"{qualifier} {words}", " ".join(theirs), True)
    return None


def _modified(
    text: str,
) -> tuple[dict[str, tuple[str, str]], dict[tuple[str, str], tuple[str, str]]]:
    """Each noun's modifier (the lower-case word before it), and each two-word phrase's
    qualifier (the word before it)."""
    modifiers: dict[str, tuple[str, str]] = {}
    phrases: dict[tuple[str, str], tuple[str, str]] = {}
    for words in _words(text):
        for i in range(1, len(words)):
            before, word = words[i - 1], words[i]
            if not (_content([before]) and _content([word]) and before.isalpha()):
                continue
            if before.islower() or (before.istitle() and i >= 2):  # "the Silver membership"
                modifiers.setdefault(stem(word), (before, word))
            # a proper qualifier of a lower-case phrase, inside a clause: "a Canadian tax
            # resident" (not a sentence's first word, not code)
            qualifier = words[i - 2] if i >= 3 else ""
            proper = (
                qualifier.istitle() and qualifier.isalpha() and qualifier.lower() not in _MONTHS
            ) or _acronym(qualifier)  # ("April breakfast included" says when, not which)
            if proper and before.islower() and word.islower():  # "a US tax resident" too
                phrases.setdefault((stem(before), stem(word)), (qualifier, f"{before} {word}"))
    return modifiers, phrases


_NUMBER_WORDS: Final = "one two three four five six seven eight nine ten eleven twelve"
_COUNTS: Final = {w: i + 1 for i, w in enumerate(_NUMBER_WORDS.split())} | {"a": 1, "an": 1}
_DAYS: Final = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}
# a length of time that qualifies a noun: "a three-month notice period", "four weeks' notice"
_DURATION = re.compile(
    r"\b(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|an?)"
    r"[- ](day|week|fortnight|month|year)s?['\u2019]?[- ]([a-z]{3,})\b",
    re.IGNORECASE,
)


def _lasting(text: str) -> dict[str, tuple[int, str]]:
    out: dict[str, tuple[int, str]] = {}
    for m in _DURATION.finditer(text):
        count, unit, noun = m.group(1).lower(), m.group(2).lower(), m.group(3).lower()
        n = int(count) if count.isdigit() else _COUNTS[count]
        if noun not in _STOP and noun not in _DAYS:
            out.setdefault(stem(noun), (n * _DAYS[unit], m.group(0)))
    return out


def _durations(claim: _Said, trusted: _Said) -> Contradiction | None:
    """Another length for the same thing: "a one-month notice" against "a three-month
    notice period" (four weeks and a month are one length)."""
    for noun, (days, said) in claim.durations.items():
        theirs = trusted.durations.get(noun)
        if theirs is not None and abs(days - theirs[0]) > 0.15 * max(days, theirs[0]):
            return Contradiction(said, theirs[1], True)
    return None


def _dated(text: str) -> dict[str, tuple[tuple[int, int], str, set[str]]]:
    """Each anchor word's date (month, day; month 0 for "the 15th"), its words, and the
    stems of its clause."""
    out: dict[str, tuple[tuple[int, int], str, set[str]]] = {}
    for m in _DATE.finditer(text):
        day, month = _date_of(m)
        if day is None:
            continue
        before = _content([w for w in _TOKEN.findall(text[: m.start()])[-_ANCHOR_WORDS:]])
        start = max((c.end() for c in _CLAUSE.finditer(text, 0, m.start())), default=0)
        end = next((c.start() for c in _CLAUSE.finditer(text, m.end())), len(text))
        clause = {stem(w) for w in _content(_TOKEN.findall(text[start:end]))}
        for word in before[-2:]:  # the nearest words say what is dated
            if not word[0].isdigit():
                out.setdefault(stem(word), ((month, day), m.group(0), clause))
    return out


def _date_of(m: re.Match[str]) -> tuple[int | None, int]:
    if m.group(5):
        return int(m.group(5)), 0
    day, name = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
    month = _MONTHS.get(name.lower())
    if month is None or not 1 <= int(day) <= 31:
        return None, 0
    return int(day), month
