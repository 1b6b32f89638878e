"""Per-owner BM25 keyword index in memory: a cache of the store's texts, kept in step by a log.

The store holds, for each memory, the text keyword search sees (its content, hints,
speaker, date) and a context (neighbouring turns). Every change to those rows gets a
``seq`` in a change log; this module keeps one inverted index per owner, remembers
the seq it reflects, and replays what the log gained before each search, exactly as
the vector index does (see ``vectors.py``). Statistics (document count, document
frequencies, average length) are each owner's own: one tenant's words never change
another's scores.

Scoring is BM25 (k1 = 1.2, b = 0.75) over one field whose term frequency counts a
context word ``context_weight`` times, as SQLite FTS5's ``bm25()`` with column
weights did before this index replaced it. Words are lower-cased, stripped of
diacritics and stemmed (Snowball English). A removed or changed document stays in
the postings, masked, until the owner's index is rebuilt (when a quarter of it is
dead); until then it still counts in document frequencies, as in Lucene.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

import numpy as np
import Stemmer

__all__ = ["KeywordIndex", "KeywordSource", "TextChange", "query_terms"]

TextChange = tuple[int, int, str | None, str | None]
"""One log entry: (seq, key, text, context); text is None when the row is gone."""

K1: Final = 1.2
B: Final = 0.75
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


class KeywordSource(Protocol):
    """Where the index reads texts from: the store."""

    def keyword_snapshot(self, owner: str) -> tuple[list[tuple[int, str, str]], int]:
        """Every (key, text, context) of ``owner`` and the log head they reflect."""

    def keyword_changes(self, owner: str, after_seq: int) -> tuple[list[TextChange], int] | None:
        """``owner``'s log entries after ``after_seq`` with current texts, and the head.

        None if the log no longer reaches back to ``after_seq``: the caller rebuilds.
        """

    def keyword_log_head(self) -> int:
        """The newest seq of the log (all owners)."""


@dataclass(slots=True)
class _Postings:
    """One owner's inverted index; documents are numbered in the order they were added."""

    terms: dict[str, int] = field(default_factory=dict)
    docs: list[array[int]] = field(default_factory=list)  # per term: document numbers
    freqs: list[array[float]] = field(default_factory=list)  # per term: weighted frequency
    keys: array[int] = field(default_factory=lambda: array("q"))  # per document
    lengths: array[float] = field(default_factory=lambda: array("f"))  # per document
    alive: bytearray = field(default_factory=bytearray)  # per document: 1, or 0 once gone
    number: dict[int, int] = field(default_factory=dict)  # key -> live document number
    total_length: float = 0.0

    @property
    def dead(self) -> int:
        return len(self.keys) - len(self.number)


@dataclass(slots=True)
class _Owner:
    lock: threading.Lock = field(default_factory=threading.Lock)
    postings: _Postings | None = None
    applied_seq: int = 0


class KeywordIndex:
    """BM25 search per owner over the texts of a `KeywordSource`. Thread-safe."""

    def __init__(self, source: KeywordSource, *, context_weight: float = 0.5) -> None:
        self._source = source
        self._context_weight = context_weight
        self._owners: dict[str, _Owner] = {}
        self._owners_lock = threading.Lock()

    def search(self, owner: str, terms: Sequence[str], n: int) -> list[tuple[int, float]]:
        """The best ``n`` keys of ``owner`` for these query terms, with BM25 scores."""
        entry = self._entry(owner)
        with entry.lock:
            return _search(self._ready(owner, entry), terms, n)

    def count(self, owner: str) -> int:
        """Live documents of ``owner``, after catching up with the log."""
        entry = self._entry(owner)
        with entry.lock:
            return len(self._ready(owner, entry).number)

    def drop(self, owner: str) -> None:
        with self._owners_lock:
            self._owners.pop(owner, None)

    def _entry(self, owner: str) -> _Owner:
        with self._owners_lock:
            entry = self._owners.get(owner)
            if entry is None:
                entry = self._owners[owner] = _Owner()
            return entry

    def _ready(self, owner: str, entry: _Owner) -> _Postings:
        """The owner's postings, built or caught up with the log. Call under its lock."""
        head = self._source.keyword_log_head()
        postings = entry.postings
        if postings is not None and head < entry.applied_seq:
            postings = None  # the log went backwards: another database is in place
        if postings is not None and head > entry.applied_seq:
            found = self._source.keyword_changes(owner, entry.applied_seq)
            if found is None:
                postings = None  # the log was pruned past this index
            else:
                changes, entry.applied_seq = found
                final = {change[1]: change[2:] for change in changes}  # the last change wins
                for key, (now_text, now_context) in final.items():
                    _remove(postings, key)
                    if now_text is not None:
                        self._add(postings, key, now_text, now_context or "")
        if postings is None or postings.dead > len(postings.number) // 3 + 64:
            entry.postings = None  # free the old one first
            rows, entry.applied_seq = self._source.keyword_snapshot(owner)
            postings = _Postings()
            for key, text, context in rows:
                self._add(postings, key, text, context)
            entry.postings = postings
        return postings

    def _add(self, entry: _Postings, key: int, text: str, context: str) -> None:
        own, own_length = _ANALYZER.counts(text)
        near, near_length = _ANALYZER.counts(context) if context else ({}, 0)
        weighted: dict[str, float] = dict(own)
        for term, n in near.items():
            weighted[term] = weighted.get(term, 0.0) + self._context_weight * n
        number = len(entry.keys)
        for term, freq in weighted.items():
            tid = entry.terms.get(term)
            if tid is None:
                tid = entry.terms[term] = len(entry.docs)
                entry.docs.append(array("i"))
                entry.freqs.append(array("f"))
            entry.docs[tid].append(number)
            entry.freqs[tid].append(freq)
        length = float(own_length + near_length)
        entry.keys.append(key)
        entry.lengths.append(length)
        entry.alive.append(1)
        entry.number[key] = number
        entry.total_length += length


def _remove(entry: _Postings, key: int) -> None:
    number = entry.number.pop(key, None)
    if number is not None:
        entry.total_length -= entry.lengths[number]
        entry.alive[number] = 0


def _search(entry: _Postings, terms: Sequence[str], n: int) -> list[tuple[int, float]]:
    live = len(entry.number)
    if not live or n <= 0:
        return []
    lengths = np.frombuffer(entry.lengths, dtype=np.float32)
    average = max(entry.total_length / live, 1e-9)
    scores = np.zeros(len(entry.keys), dtype=np.float32)
    for term in terms:
        tid = entry.terms.get(term)
        if tid is None:
            continue
        docs = np.frombuffer(entry.docs[tid], dtype=np.int32)
        freqs = np.frombuffer(entry.freqs[tid], dtype=np.float32)
        df = len(docs)
        idf = max(math.log((live - df + 0.5) / (df + 0.5)), 1e-6)
        norm = K1 * (1.0 - B + B * lengths[docs] / average)
        scores[docs] += idf * freqs * (K1 + 1.0) / (freqs + norm)
        del docs, freqs  # release the buffers: the arrays may grow later
    del lengths
    scores *= np.frombuffer(bytes(entry.alive), dtype=np.uint8)
    hit = np.flatnonzero(scores > 0)
    if len(hit) > n:
        hit = hit[np.argpartition(-scores[hit], n - 1)[:n]]
    hit = hit[np.argsort(-scores[hit], kind="stable")]
    return [(entry.keys[i], float(scores[i])) for i in hit]
