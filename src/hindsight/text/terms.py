"""Text as keyword search reads it: the words a memory is found by, and the terms words
become.

A memory is found by its content, its query hints, its speaker, the date it was said
and the dates its words point to ("yesterday", said on 5 December 2023, is also
"4 December 2023": :mod:`hindsight.text.timewords`), as :func:`searchable_text` writes
them. Words are lower-cased, stripped of diacritics and stemmed (Snowball English),
with English irregular forms taken to their base first; a query drops its stop words
unless it has nothing else. The keyword index (:mod:`hindsight.store.keyword`) counts
the terms of a text with :func:`term_counts`, and records :func:`analysis` with what
it saves, so that an index of another analysis is never loaded.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from importlib.metadata import version
from typing import Final

import Stemmer

from hindsight.text.timewords import date_words, referred_dates

__all__ = [
    "MAX_QUERY_TERMS",
    "analysis",
    "query_terms",
    "searchable_text",
    "term_counts",
    "text_terms",
]

MAX_QUERY_TERMS: Final = 32
_WORD: Final = re.compile(r"\w+", re.UNICODE)
# Words too common to help a keyword search; a query drops them unless it has nothing else.
_STOPWORDS: Final = frozenset(
    """a an and are as at be been but by can could did do does for from had has have he her
    him his how i if in into is it its me my of on or our she so than that the their them
    then there these they this to was we were what when where which who whom why will with
    would you your""".split()  # noqa: SIM905
)
_CACHE_LIMIT: Final = 200_000
# English irregular forms, each line's later words mapped to its first before stemming:
# a question asks where someone "went", a turn says they "go"; a stemmer cannot tell.
_IRREGULAR_FORMS: Final = """
be was were been being|begin began begun|break broke broken|bring brought|build built
buy bought|catch caught|choose chose chosen|come came|do did done|draw drew drawn
drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen|feel felt|fight fought
find found|fly flew flown|forget forgot forgotten|get got gotten|give gave given
go went gone|grow grew grown|have had has|hear heard|hold held|keep kept|know knew known
learn learnt|leave left|lend lent|lose lost|make made|mean meant|meet met|pay paid
ride rode ridden|ring rang rung|rise risen|run ran|say said|see saw seen|sell sold|send sent
shake shook shaken|shoot shot|show shown|sing sang sung|sink sank sunk|sit sat|sleep slept
speak spoke spoken|spend spent|stand stood|steal stole stolen|swim swam swum
take took taken|teach taught|tear tore torn|tell told|think thought|throw threw thrown
understand understood|wake woke woken|wear wore worn|win won|write wrote written
hide hid hidden|bite bit bitten|blow blew blown|freeze froze frozen|forgive forgave forgiven
hang hung|lead led|light lit|bleed bled|feed fed|dig dug|stick stuck|strike struck
swing swung|spin spun|bend bent|child children|person people|man men|woman women
foot feet|tooth teeth|mouse mice|wife wives|knife knives|goose geese
"""
_BASE_FORM: Final = {
    form: forms.split()[0]
    for forms in _IRREGULAR_FORMS.replace("\n", "|").split("|")
    for form in forms.split()[1:]
}


class _Analyzer:
    """Text to index terms; word -> term results are cached (vocabularies are small)."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("english")
        self._cache: dict[str, str] = {}
        self._lock = threading.Lock()

    def words(self, text: str) -> list[str]:
        return _WORD.findall(text.lower())

    def terms(self, words: Iterable[str]) -> list[str]:
        cache = self._cache
        out = []
        for word in words:
            term = cache.get(word)
            if term is None:
                term = self._term(word)
            out.append(term)
        return out

    def counts(self, text: str) -> tuple[dict[str, int], int]:
        """Each term's count in ``text``, and its length in words.

        Words are counted first (in C), so the Python work is per distinct word: a
        long message repeats most of its words.
        """
        words = self.words(text)
        counts: dict[str, int] = {}
        cache = self._cache
        for word, n in Counter(words).items():
            term = cache.get(word) or self._term(word)
            counts[term] = counts.get(term, 0) + n
        return counts, len(words)

    def _term(self, word: str) -> str:
        folded = _BASE_FORM.get(word, word)
        if not word.isascii():
            decomposed = unicodedata.normalize("NFKD", word)
            folded = "".join(c for c in decomposed if not unicodedata.combining(c))
        term: str = self._stemmer.stemWord(folded)
        with self._lock:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[word] = term
        return term


_ANALYZER: Final = _Analyzer()


def query_terms(query: str) -> list[str]:
    """The distinct terms of a query, without stop words unless it has nothing else."""
    words = _ANALYZER.words(query)
    kept = [w for w in words if w not in _STOPWORDS] or words
    return list(dict.fromkeys(_ANALYZER.terms(kept)))[:MAX_QUERY_TERMS]


def text_terms(text: str) -> set[str]:
    """Every term of a text but its stop words, as the index stems them."""
    return set(_ANALYZER.terms(w for w in _ANALYZER.words(text) if w not in _STOPWORDS))


def term_counts(text: str) -> tuple[dict[str, int], int]:
    """Each term's count in ``text``, and its length in words."""
    return _ANALYZER.counts(text)


def analysis() -> list[str]:
    """What decides the terms of a text: the word pattern, the irregular forms, the
    stemmer and its version."""
    return [_WORD.pattern, _IRREGULAR_FORMS, "english", version("pystemmer")]


def searchable_text(content: str, hints: Sequence[str], speaker: str | None, when: datetime) -> str:
    """The text keyword search finds a memory by: its content, query hints and speaker,
    the day ``when`` it was said and the dates its content points to from that day
    (``when`` in the users' time zone: their days)."""
    return "\n".join(
        [content, *hints, speaker or "", date_words(when), *referred_dates(content, when)]
    )
