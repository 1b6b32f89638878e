"""Per-owner BM25 keyword index in memory: a cache of the store's texts, kept in step by a log.

The store holds, for each memory, the text keyword search sees (its content, hints,
speaker, date) and a context (neighbouring turns). Every change to those rows gets a
``seq`` in a change log; this module keeps one inverted index per owner, remembers
the seq it reflects, and replays what the log gained before each search, exactly as
the vector index does (:mod:`hindsight.store.vectors.index`). Statistics (document
count, document frequencies, average length) are each owner's own: one tenant's words
never change another's scores.

Texts become terms as :mod:`hindsight.text.terms` reads them; an owner's postings and
their BM25 scoring are :mod:`hindsight.store.bm25`. A removed or changed document
stays in the postings, masked, until the owner's index is rebuilt (when a quarter of
it is dead).

Building an owner's index means analysing every text it has (100,000 memories: ~3 s;
1,000 notes of ten sentences: ~240 ms, twenty times a warm recall), so an owner of
at least ``SAVE_MIN_DOCS`` documents is saved to ``directory`` when it is built and
when the index is flushed or closed, and the next process loads it and replays only
the log since. A file, ``<name>.keywords.npz`` (``<name>`` as in
:mod:`hindsight.store.vectors.saved`), holds the live documents only (nothing
forgotten is written), the log position it reflects, and a signature of the analysis
(tokenizer, irregular forms, stemmer version, context weight): a file of another
analysis, of another owner, torn (zip checksums) or ahead of the log is ignored and the
index rebuilt from the store. Files are written whole or not at all
(``files.write_atomically``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import threading
import zipfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

import numpy as np

from hindsight.store import bm25, files
from hindsight.store.owners import Owners
from hindsight.text.terms import analysis, term_counts

__all__ = ["KeywordIndex", "KeywordSource", "TextChange"]

TextChange = tuple[int, int, str | None, str | None]
"""One log entry: (seq, key, text, context); text is None when the row is gone."""

FORMAT_VERSION: Final = 1
SAVE_MIN_DOCS: Final = 100  # smaller owners build in ~5 (short notes) to ~25 ms: no file


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
class _Owner:
    lock: threading.Lock = field(default_factory=threading.Lock)
    postings: bm25.Postings | None = None
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
            found, size = bm25.search(postings, terms, n, among), len(postings.number)
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
            alive = bm25.live_mask(postings)
            counts = {term: bm25.said(postings, term, alive) for term in terms}
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

    def _ready(self, owner: str, entry: _Owner) -> bm25.Postings:
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
                    bm25.remove(postings, key)
                    if now_text is not None:
                        self._add(postings, key, now_text, now_context or "")
                entry.dirty = entry.dirty or bool(final)
        if postings is None or postings.dead > len(postings.number) // 3 + 64:
            entry.postings = None  # free the old one first
            rows, entry.applied_seq = self._source.keyword_snapshot(owner)
            postings = bm25.Postings()
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

    def _save(self, owner: str, entry: _Owner, postings: bm25.Postings) -> None:
        """Write the owner's live documents, if it is big enough. Call under its lock."""
        if self._directory is None:
            return
        if len(postings.number) < self._save_min_docs:
            self._unlink(owner)  # one left from when it was bigger is stale
            return
        arrays = bm25.compact(postings)
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
                postings = bm25.expand({name: saved[name] for name in bm25.ARRAYS})
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
            return  # missing, torn or of another version: rebuilt from the store
        entry.postings = postings
        entry.applied_seq = meta["seq"]

    def _add(self, entry: bm25.Postings, key: int, text: str, context: str) -> None:
        own, own_length = term_counts(text)
        near, near_length = term_counts(context) if context else ({}, 0)
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


@functools.cache
def _signature(context_weight: float) -> str:
    """What decides an index's contents besides the texts: a saved one must match it."""
    decides = [*analysis(), context_weight]
    return hashlib.sha256(json.dumps(decides).encode("utf-8")).hexdigest()
