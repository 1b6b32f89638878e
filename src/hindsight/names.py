"""People's names as a query spells them, matched to the names a store knows.

A question spells a person as its writer does ("Mohammed", "Faheem") while the turns
carry the speaker's own spelling ("Muhhamed", "Fahim Khan"): neither channel matches
the name then, and the name is often what tells the right turn from another. A query
word that is capitalised, is not a known name, and sounds like one (the same consonant
skeleton, or one or two letters apart) is read as that name.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import Final

__all__ = ["may_name", "resolve", "skeleton"]

_WORD: Final = re.compile(r"[^\W\d_]+")  # "Caroline's": the name, then "s"
_VOWELS: Final = frozenset("aeiouy")
_SAME_SOUND: Final = {"c": "k", "q": "k"}
MIN_LENGTH: Final = 4  # shorter words are too often something else ("Ann", "Ben")


@functools.lru_cache(maxsize=4096)
def skeleton(name: str) -> str:
    """How a name sounds, roughly: lower-cased, without diacritics, ``h`` dropped (so
    often silent or doubled in a spelling), c/k/q one sound, each run of vowels one
    ``*``, a doubled letter once, a final vowel dropped. "Muhhamed", "Mohammed" and
    "Muhammad" are all "m*m*d", "Faheem" and "Fahim" "f*m", "Maddie" "m*d"."""
    plain = unicodedata.normalize("NFKD", name.lower())
    out: list[str] = []
    for c in plain:
        if not c.isalpha() or unicodedata.combining(c) or c == "h":
            continue
        c = "*" if c in _VOWELS else _SAME_SOUND.get(c, c)
        if not out or out[-1] != c:
            out.append(c)
    if len(out) > 1 and out[-1] == "*":
        out.pop()
    return "".join(out)


def _distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, or ``limit + 1`` once it must exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def _sounds_alike(word: str, name: str) -> bool:
    a, b = word.lower(), name.lower()
    limit = 1 if min(len(a), len(b)) < 7 else 2
    if _distance(a, b, limit) <= limit:
        return True
    return skeleton(a) == skeleton(b)


# Capitalised words that open a question or a request, not names: a query of only these
# needs no names looked up.
_OPENERS: Final = frozenset(
    {
        "what",
        "when",
        "where",
        "which",
        "whom",
        "whose",
        "does",
        "have",
        "were",
        "would",
        "could",
        "should",
        "will",
        "tell",
        "give",
        "list",
        "describe",
        "show",
        "find",
        "remind",
    }
)


def may_name(query: str) -> bool:
    """Whether ``query`` has a word that may be a person's name (capitalised, long enough,
    not a word questions open with): only then is it worth the store's names."""
    return any(
        len(w) >= MIN_LENGTH and w[0].isupper() and w.lower() not in _OPENERS
        for w in _WORD.findall(query)
    )


def resolve(query: str, names: Iterable[str]) -> str:
    """``query`` with each capitalised word that is no known name but sounds like one
    replaced by that name's spelling; ``query`` itself when nothing matches.

    ``names`` are full names as the store holds them ("Fahim Khan"); each of their words
    counts ("Khan" alone). A word close to two different names is left alone.
    """
    known: dict[str, str] = {}
    for name in names:
        for part in _WORD.findall(name):
            if len(part) >= MIN_LENGTH:
                known.setdefault(part.lower(), part)
    if not known:
        return query

    def spelled(match: re.Match[str]) -> str:
        word = match.group(0)
        if len(word) < MIN_LENGTH or not word[0].isupper() or word.lower() in known:
            return word
        alike = {known[k] for k in known if _sounds_alike(word, k)}
        return alike.pop() if len(alike) == 1 else word

    return _WORD.sub(spelled, query)
