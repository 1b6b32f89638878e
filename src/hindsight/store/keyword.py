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
dead); document frequencies count live documents only, so that scores are those of an
index built afresh (counting the dead too, as Lucene does, gave a negative IDF's log,
and a failed search, once more documents with a word had gone than were left).

Building an owner's index means analysing every text it has (100,000 memories: ~3 s;
1,000 notes of ten sentences: ~240 ms, twenty times a warm recall), so an owner of
at least ``SAVE_MIN_DOCS`` documents is saved to ``directory`` when it is built and
when the index is flushed or closed, and the next process loads it and replays only
the log since. A file, ``<name>.keywords.npz`` (``<name>`` as in
``vectors.py``), holds the live documents only (nothing forgotten is written), the
log position it reflects, and a signature of the analysis (tokenizer, irregular forms,
stemmer version, context weight): a file of another analysis, of another owner, torn
(zip checksums) or ahead of the log is ignored and the index rebuilt from the store.
Files are written whole or not at all (``files.write_atomically``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import json
import math
import re
import threading
import unicodedata
import zipfile
from array import array
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Final, Protocol

import numpy as np
import Stemmer

from hindsight.store import files
from hindsight.store.owners import Owners

__all__ = ["KeywordIndex", "KeywordSource", "TextChange", "query_terms", "text_terms"]

TextChange = tuple[int, int, str | None, str | None]
"""One log entry: (seq, key, text, context); text is None when the row is gone."""

K1: Final = 1.2
B: Final = 0.75
FORMAT_VERSION: Final = 1
SAVE_MIN_DOCS: Final = 100  # smaller owners build in ~5 (short notes) to ~25 ms: no file
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
    """One owner's inverted index; documents are numbered in the order they were added.

    A term's postings are two growable arrays, or, for a term loaded from a saved index
    and not changed since, a slice of the loaded flat arrays (``loaded_*``): loading
    then makes no object per term, and a term is copied out on its first new posting.
    """

    terms: dict[str, int] = field(default_factory=dict)
    docs: list[array[int] | None] = field(default_factory=list)  # per term: document numbers
    freqs: list[array[float] | None] = field(default_factory=list)  # per term: weighted freq.
    keys: array[int] = field(default_factory=lambda: array("q"))  # per document
    lengths: array[float] = field(default_factory=lambda: array("f"))  # per document
    alive: bytearray = field(default_factory=bytearray)  # per document: 1, or 0 once gone
    number: dict[int, int] = field(default_factory=dict)  # key -> live document number
    total_length: float = 0.0
    loaded_offsets: list[int] = field(default_factory=lambda: [0])  # per loaded term, + end
    loaded_docs: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int32))
    loaded_freqs: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float32))

    @property
    def dead(self) -> int:
        return len(self.keys) - len(self.number)

    def postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """A term's document numbers and frequencies, as read-only views."""
        numbers, weights = self.docs[tid], self.freqs[tid]
        if numbers is None or weights is None:
            start, end = self.loaded_offsets[tid], self.loaded_offsets[tid + 1]
            return self.loaded_docs[start:end], self.loaded_freqs[start:end]
        return np.frombuffer(numbers, dtype=np.int32), np.frombuffer(weights, dtype=np.float32)

    def add(self, term: str, number: int, freq: float) -> None:
        tid = self.terms.get(term)
        if tid is None:
            tid = self.terms[term] = len(self.docs)
            self.docs.append(array("i"))
            self.freqs.append(array("f"))
        numbers, weights = self.docs[tid], self.freqs[tid]
        if numbers is None or weights is None:  # a loaded term: copy it out to grow it
            loaded, loaded_freqs = self.postings(tid)
            numbers, weights = array("i"), array("f")
            numbers.frombytes(loaded.tobytes())
            weights.frombytes(loaded_freqs.tobytes())
            self.docs[tid], self.freqs[tid] = numbers, weights
        numbers.append(number)
        weights.append(freq)


@dataclass(slots=True)
class _Owner:
    lock: threading.Lock = field(default_factory=threading.Lock)
    postings: _Postings | None = None
    applied_seq: int = 0
    looked_on_disk: bool = False  # a saved index is only worth loading once
    dirty: bool = False  # changed since it was built, loaded or saved


class KeywordIndex:
    """BM25 search per owner over the texts of a `KeywordSource`. Thread-safe.

    With a ``directory``, owners of ``save_min_docs`` (default :data:`SAVE_MIN_DOCS`)
    documents or more are saved there (see the module's docstring) and loaded instead of
    rebuilt. At most ``max_docs`` documents stay in memory, over all owners: past that
    the owners used longest ago are let go (saved first, when big enough), so a server
    that meets many owners does not grow without bound; the next search of one builds
    or loads it again.
    """

    def __init__(
        self,
        source: KeywordSource,
        *,
        context_weight: float = 0.5,
        directory: Path | None = None,
        save_min_docs: int | None = None,
        max_docs: int | None = None,
    ) -> None:
        self._source = source
        self._context_weight = context_weight
        self._directory = directory
        self._save_min_docs = SAVE_MIN_DOCS if save_min_docs is None else save_min_docs
        self._signature = _signature(context_weight)
        self._owners = Owners(lambda _: _Owner(), max_docs)

    def search(
        self, owner: str, terms: Sequence[str], n: int, among: Collection[int] | None = None
    ) -> list[tuple[int, float]]:
        """The best ``n`` keys of ``owner`` for these query terms, with BM25 scores; only
        of the keys ``among`` when given."""
        entry = self._owners.get(owner)
        with entry.lock:
            postings = self._ready(owner, entry)
            found, size = _search(postings, terms, n, among), len(postings.number)
        self._trim(owner, entry, size)
        return found

    def frequencies(self, owner: str, terms: Collection[str]) -> tuple[dict[str, int], int]:
        """How many of ``owner``'s live documents say each of ``terms`` themselves (in
        their text, not only in their context), and how many live documents it has.

        A document counts a term as its own when the term's weighted frequency reaches
        one occurrence; a context word weighs ``context_weight``, so a word only in the
        context of a document, but there twice, counts too: the count errs towards common.
        """
        entry = self._owners.get(owner)
        with entry.lock:
            postings = self._ready(owner, entry)
            alive = _alive(postings)
            counts = {term: _said(postings, term, alive) for term in terms}
            size = len(postings.number)
        self._trim(owner, entry, size)
        return counts, size

    def count(self, owner: str) -> int:
        """Live documents of ``owner``, after catching up with the log."""
        entry = self._owners.get(owner)
        with entry.lock:
            count = len(self._ready(owner, entry).number)
        self._trim(owner, entry, count)
        return count

    def size(self, owner: str) -> int | None:
        """``owner``'s live documents when last searched, without catching up with the
        log; None if its index is not held."""
        return self._owners.size(owner)

    def drop(self, owner: str) -> None:
        """Forget ``owner``: in memory and on disk. The store's rows are not touched."""
        entry = self._owners.pop(owner)
        if entry is not None:
            with entry.lock:
                entry.postings = None
        self._unlink(owner)

    def drop_saved(self, owner: str) -> None:
        """Remove ``owner``'s saved index (it holds forgotten words); the next flush
        writes it again from what is left."""
        entry = self._owners.peek(owner)
        if entry is not None:
            with entry.lock:
                entry.dirty = entry.postings is not None
        self._unlink(owner)

    def flush(self) -> None:
        """Save every owner big enough to keep whose index changed since it was built,
        loaded or saved (caught up with the log first)."""
        if self._directory is None:
            return
        for owner, entry in self._owners.items():
            with entry.lock:
                postings = entry.postings
                if entry.dirty and postings and len(postings.number) >= self._save_min_docs:
                    postings = self._ready(owner, entry)  # a rebuild here saves itself
                    if entry.dirty:
                        self._save(owner, entry, postings)

    def close(self) -> None:
        """Flush and release all owners."""
        self.flush()
        self._owners.clear()

    def _trim(self, owner: str, used: _Owner, size: int) -> None:
        """Let owners go, least recently used first, until the documents held fit."""
        for other, entry in self._owners.used(owner, used, size):
            with entry.lock:
                if entry.postings is not None and entry.dirty:
                    self._save(other, entry, entry.postings)  # when big enough to keep
                entry.postings = None

    def _ready(self, owner: str, entry: _Owner) -> _Postings:
        """The owner's postings, loaded, built or caught up with the log. Call under its lock."""
        if entry.postings is None and not entry.looked_on_disk:
            entry.looked_on_disk = True
            self._load(owner, entry)
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
                entry.dirty = entry.dirty or bool(final)
        if postings is None or postings.dead > len(postings.number) // 3 + 64:
            entry.postings = None  # free the old one first
            rows, entry.applied_seq = self._source.keyword_snapshot(owner)
            postings = _Postings()
            for key, text, context in rows:
                self._add(postings, key, text, context)
            del rows  # free the texts before saving, which needs memory of its own
            entry.postings = postings
            entry.dirty = True
            self._save(owner, entry, postings)
        return postings

    # -- on disk ---------------------------------------------------------------------------

    def _path(self, owner: str) -> Path:
        assert self._directory is not None
        name = hashlib.sha256(owner.encode("utf-8")).hexdigest()[:32]
        return self._directory / f"{name}.keywords.npz"

    def _unlink(self, owner: str) -> None:
        if self._directory is not None:
            with contextlib.suppress(FileNotFoundError):
                self._path(owner).unlink()

    def _save(self, owner: str, entry: _Owner, postings: _Postings) -> None:
        """Write the owner's live documents, if it is big enough. Call under its lock."""
        if self._directory is None:
            return
        if len(postings.number) < self._save_min_docs:
            self._unlink(owner)  # one left from when it was bigger is stale
            return
        arrays = _compact(postings)
        meta = {
            "format": FORMAT_VERSION,
            "owner": owner,
            "signature": self._signature,
            "seq": entry.applied_seq,
        }
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)

        def write(path: Path) -> None:
            with open(path, "wb") as file:
                np.savez(file, **arrays)  # type: ignore[arg-type]  # numpy's stub

        try:
            self._directory.mkdir(parents=True, exist_ok=True)
            files.write_atomically(self._path(owner), write)
        except OSError:
            return  # a cache: the next process rebuilds
        entry.dirty = False

    def _load(self, owner: str, entry: _Owner) -> None:
        """Take the owner's saved index if it is one of this analysis; else leave it None."""
        if self._directory is None:
            return
        try:
            with (
                open(self._path(owner), "rb") as file,  # closed even when np.load fails
                np.load(file, allow_pickle=False) as saved,
            ):
                meta = json.loads(saved["meta"].tobytes())
                if not (
                    isinstance(meta, dict)
                    and meta.get("format") == FORMAT_VERSION
                    and meta.get("owner") == owner
                    and meta.get("signature") == self._signature
                    and type(meta.get("seq")) is int
                ):
                    return
                postings = _expand({name: saved[name] for name in _ARRAYS})
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
            return  # missing, torn or of another version: rebuilt from the store
        entry.postings = postings
        entry.applied_seq = meta["seq"]

    def _add(self, entry: _Postings, key: int, text: str, context: str) -> None:
        own, own_length = _ANALYZER.counts(text)
        near, near_length = _ANALYZER.counts(context) if context else ({}, 0)
        weighted: dict[str, float] = dict(own)
        for term, n in near.items():
            weighted[term] = weighted.get(term, 0.0) + self._context_weight * n
        number = len(entry.keys)
        for term, freq in weighted.items():
            entry.add(term, number, freq)
        length = float(own_length + near_length)
        entry.keys.append(key)
        entry.lengths.append(length)
        entry.alive.append(1)
        entry.number[key] = number
        entry.total_length += length


_ARRAYS: Final = ("keys", "lengths", "terms", "offsets", "docs", "freqs")


@functools.cache
def _signature(context_weight: float) -> str:
    """What decides an index's contents besides the texts: a saved one must match it."""
    analysis = [_WORD.pattern, _IRREGULAR_FORMS, "english", version("pystemmer"), context_weight]
    return hashlib.sha256(json.dumps(analysis).encode("utf-8")).hexdigest()


def _compact(entry: _Postings, *, chunk: int = 1 << 16) -> dict[str, np.ndarray]:
    """The live documents as flat arrays, renumbered; terms left without any are dropped.

    Worked through whole arrays, ``chunk`` postings at a time, so that what it needs
    beside the index in use is its result and one chunk.
    """
    alive = np.frombuffer(bytes(entry.alive), dtype=np.uint8).astype(bool)
    renumber = np.cumsum(alive, dtype=np.int32) - 1
    no_docs, no_freqs = np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32)
    sizes = np.zeros(len(entry.docs), dtype=np.int64)
    loaded = np.diff(entry.loaded_offsets)
    sizes[: len(loaded)] = loaded
    for tid, grown in enumerate(entry.docs):
        if grown is not None:
            sizes[tid] = len(grown)
    ends = np.cumsum(sizes)
    cuts = [0, *np.searchsorted(ends, np.arange(chunk, ends[-1] if len(ends) else 0, chunk))]
    spans = list(itertools.pairwise([*dict.fromkeys(cuts), len(sizes)]))

    def live_postings(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        numbers = np.concatenate([no_docs, *(entry.postings(tid)[0] for tid in range(lo, hi))])
        live = alive[numbers]
        term_of = np.repeat(np.arange(hi - lo, dtype=np.int32), sizes[lo:hi])
        return numbers[live], live, np.bincount(term_of[live], minlength=hi - lo)

    counts = np.zeros(len(sizes), dtype=np.int64)
    for lo, hi in spans:  # first count, so the result is allocated once
        counts[lo:hi] = live_postings(lo, hi)[2]
    docs = np.empty(int(counts.sum()), dtype=np.int32)
    freqs = np.empty(len(docs), dtype=np.float32)
    at = 0
    for lo, hi in spans:
        numbers, live, _ = live_postings(lo, hi)
        weights = np.concatenate([no_freqs, *(entry.postings(tid)[1] for tid in range(lo, hi))])
        docs[at : at + len(numbers)] = renumber[numbers]
        freqs[at : at + len(numbers)] = weights[live]
        at += len(numbers)
    kept = counts > 0
    terms = [term for term, keep in zip(entry.terms, kept.tolist(), strict=True) if keep]
    return {
        "keys": np.frombuffer(entry.keys, dtype=np.int64)[alive],
        "lengths": np.frombuffer(entry.lengths, dtype=np.float32)[alive],
        "terms": np.frombuffer("\n".join(terms).encode("utf-8"), dtype=np.uint8),
        "offsets": np.concatenate(([0], np.cumsum(counts[kept]))).astype(np.int64),
        "docs": docs,
        "freqs": freqs,
    }


def _expand(saved: dict[str, np.ndarray]) -> _Postings:
    """The inverse of :func:`_compact`; raises ValueError if the arrays do not fit together."""
    keys, lengths, offsets = saved["keys"], saved["lengths"], saved["offsets"]
    docs, freqs = saved["docs"], saved["freqs"]
    text = saved["terms"].tobytes().decode("utf-8")
    terms = text.split("\n") if text else []
    if (
        keys.dtype != np.int64
        or lengths.dtype != np.float32
        or docs.dtype != np.int32
        or freqs.dtype != np.float32
        or len(keys) != len(lengths)
        or len(offsets) != len(terms) + 1
        or len(docs) != len(freqs)
        or (len(offsets) and (offsets[0] != 0 or offsets[-1] != len(docs)))
        or np.any(np.diff(offsets) < 0)
        or (len(docs) and (docs.min() < 0 or docs.max() >= len(keys)))
    ):
        raise ValueError("inconsistent keyword index file")
    tids = {term: tid for tid, term in enumerate(terms)}
    if len(tids) != len(terms):
        raise ValueError("a term twice in a keyword index file")
    postings = _Postings(
        terms=tids,
        docs=[None] * len(terms),
        freqs=[None] * len(terms),
        loaded_offsets=offsets.tolist(),
        loaded_docs=docs,
        loaded_freqs=freqs,
    )
    postings.keys.frombytes(keys.tobytes())
    postings.lengths.frombytes(lengths.tobytes())
    postings.alive = bytearray(b"\x01" * len(keys))
    postings.number = dict(zip(keys.tolist(), range(len(keys)), strict=True))
    postings.total_length = float(lengths.sum(dtype=np.float64))
    return postings


def _remove(entry: _Postings, key: int) -> None:
    number = entry.number.pop(key, None)
    if number is not None:
        entry.total_length -= entry.lengths[number]
        entry.alive[number] = 0


def _alive(entry: _Postings) -> np.ndarray | None:
    """Which documents are live (removed ones stay in the postings until a rebuild);
    None when all are. A copy: the bytearray may grow later."""
    if not entry.dead:
        return None
    return np.frombuffer(bytes(entry.alive), dtype=np.uint8).astype(bool)


def _said(entry: _Postings, term: str, alive: np.ndarray | None) -> int:
    """The live documents of ``entry`` with ``term`` in their own text."""
    tid = entry.terms.get(term)
    if tid is None:
        return 0
    docs, freqs = entry.postings(tid)
    own = freqs >= 1.0
    if alive is not None:
        own &= alive[docs]
    return int(own.sum())


def _search(
    entry: _Postings, terms: Sequence[str], n: int, among: Collection[int] | None = None
) -> list[tuple[int, float]]:
    live = len(entry.number)
    if not live or n <= 0:
        return []
    lengths = np.frombuffer(entry.lengths, dtype=np.float32)
    alive = _alive(entry)
    average = max(entry.total_length / live, 1e-9)
    scores = np.zeros(len(entry.keys), dtype=np.float32)
    for term in terms:
        tid = entry.terms.get(term)
        if tid is None:
            continue
        docs, freqs = entry.postings(tid)
        if alive is not None:  # removed documents stay in the postings until a rebuild
            keep = alive[docs]
            docs, freqs = docs[keep], freqs[keep]
        df = len(docs)
        if not df:
            continue
        # counted as if one more document lacked the word: on a store of two, a word of
        # one of them tells them apart (log(1.5/1.5) = 0 said not); on large ones, no change
        idf = max(math.log((live + 1 - df + 0.5) / (df + 0.5)), 1e-6)
        norm = K1 * (1.0 - B + B * lengths[docs] / average)
        scores[docs] += idf * freqs * (K1 + 1.0) / (freqs + norm)
        del docs, freqs  # release the buffers: the arrays may grow later
    del lengths
    if among is None:
        hit = np.flatnonzero(scores > 0)
    else:
        known = (d for key in among if (d := entry.number.get(key)) is not None)
        hit = np.unique(np.fromiter(known, np.int64))  # in document order, as above
        hit = hit[scores[hit] > 0]
    if len(hit) > n:
        hit = hit[np.argpartition(-scores[hit], n - 1)[:n]]
    hit = hit[np.argsort(-scores[hit], kind="stable")]
    return [(entry.keys[i], float(scores[i])) for i in hit]
