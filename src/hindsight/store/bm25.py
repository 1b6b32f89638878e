"""One owner's BM25 index in memory: postings, their scoring, and the flat arrays they
are saved as.

Scoring is BM25 (k1 = 1.2, b = 0.75) over one field whose term frequency counts a
context word ``context_weight`` times, as SQLite FTS5's ``bm25()`` with column
weights did before this index replaced it. A removed or changed document stays in
the postings, masked, until the owner's index is rebuilt; document frequencies count
live documents only, so that scores are those of an index built afresh (counting the
dead too, as Lucene does, gave a negative IDF's log, and a failed search, once more
documents with a word had gone than were left). The per-owner cache around it is
:mod:`hindsight.store.keyword`.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

K1: Final = 1.2
B: Final = 0.75
# the arrays a saved index holds (compact, expand)
ARRAYS: Final = ("keys", "lengths", "terms", "offsets", "docs", "freqs")


@dataclass(slots=True)
class Postings:
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


def compact(entry: Postings, *, chunk: int = 1 << 16) -> dict[str, np.ndarray]:
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


def expand(saved: dict[str, np.ndarray]) -> Postings:
    """The inverse of :func:`compact`; raises ValueError if the arrays do not fit together."""
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
    postings = Postings(
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


def remove(entry: Postings, key: int) -> None:
    """Take ``key``'s document out: masked in the postings until a rebuild."""
    number = entry.number.pop(key, None)
    if number is not None:
        entry.total_length -= entry.lengths[number]
        entry.alive[number] = 0


def live_mask(entry: Postings) -> np.ndarray | None:
    """Which documents are live (removed ones stay in the postings until a rebuild);
    None when all are. A copy: the bytearray may grow later."""
    if not entry.dead:
        return None
    return np.frombuffer(bytes(entry.alive), dtype=np.uint8).astype(bool)


def said(entry: Postings, term: str, alive: np.ndarray | None) -> int:
    """The live documents of ``entry`` with ``term`` in their own text."""
    tid = entry.terms.get(term)
    if tid is None:
        return 0
    docs, freqs = entry.postings(tid)
    own = freqs >= 1.0
    if alive is not None:
        own &= alive[docs]
    return int(own.sum())


def search(
    entry: Postings, terms: Sequence[str], n: int, among: Collection[int] | None = None
) -> list[tuple[int, float]]:
    """The best ``n`` keys for these query terms, with BM25 scores, best first; only of
    the keys ``among`` when given."""
    live = len(entry.number)
    if not live or n <= 0:
        return []
    lengths = np.frombuffer(entry.lengths, dtype=np.float32)
    alive = live_mask(entry)
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
