"""Vector and keyword search in a SQL store, within a filter, and the change log the
keyword index catches up from: the :class:`~hindsight.store.base.Search` part of the
store, its :class:`~hindsight.store.vectors.base.Rows` (what a vector backend asks of
it) and its :class:`~hindsight.store.keyword.KeywordSource`.

An index (keyword or vector) ranks an owner's memories; the database decides which of
them pass the filter (:meth:`SQLSearch.within`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from hindsight.models import Status
from hindsight.store.keyword import TextChange
from hindsight.store.records import Filter
from hindsight.store.rows import chunks, filter_sql
from hindsight.store.sql.core import SQLCore
from hindsight.text.terms import query_terms

if TYPE_CHECKING:
    from hindsight.store.vectors.base import Hits

# A search whose filter lets at most this many memories by, and too few of the index's
# best, scores those alone: listed by the database, compared by the index.
_FEW = 2_000


class SQLSearch(SQLCore):
    """Search within a filter, and the keyword log's reads."""

    def vector_search(
        self, flt: Filter, query: npt.NDArray[np.float32], k: int
    ) -> list[tuple[str, float]]:
        return self.vectors.search(flt, query, k, self)

    def term_frequencies(self, owner: str, terms: Collection[str]) -> tuple[dict[str, int], int]:
        with self.db.searching():  # the index catches up under its lock: see within()
            return self._keywords.frequencies(owner, terms)

    def keyword_search(self, flt: Filter, query: str, k: int) -> list[tuple[str, float]]:
        terms = query_terms(query)
        if not terms:
            return []

        def hits(
            n: int, among: Collection[int] | None = None
        ) -> tuple[list[tuple[int, float]], bool]:
            found = [self._keywords.search(owner, terms, n, among) for owner in flt.owners]
            return [h for part in found for h in part], all(len(p) < n for p in found)

        return self.within(flt, k, hits)

    def passing(self, flt: Filter, ids: Collection[str]) -> set[str]:
        where, params = filter_sql(flt)
        passed: set[str] = set()
        for chunk in chunks(sorted(set(ids))):
            among, values = self.db.among(chunk)
            rows = self.db.read(
                f"SELECT id FROM memories AS m WHERE id {among} AND {where}", (*values, *params)
            )
            passed.update(mid for (mid,) in rows)
        return passed

    def within(self, flt: Filter, k: int, hits: Hits) -> list[tuple[str, float]]:
        """The best ``k`` of an index's hits (row keys, scores) that pass the filter.

        ``hits(n)`` gives the index's top ``n`` and whether there are no more. When a
        narrow filter rejects most of them, look further; when it lets few of the owners'
        memories by at all (a type, a session), score only those (``hits(k, among=...)``)
        rather than read the whole index for them, as a search among what is not active
        (the review queue) does from the start. Within the database's ``searching()``
        (its lock, where reads take it), taken before an index's own (which catches up
        from the database): a writer holds it while it plans (:meth:`exclusive`) and
        searches an index too, so the order is always the database's lock, then an
        index's. Everything else that makes an index catch up (counts, warming,
        closing) takes them in the same order.
        """
        with self.db.searching():
            return self._within(flt, k, hits)

    def _within(self, flt: Filter, k: int, hits: Hits) -> list[tuple[str, float]]:
        # what is not active (held for review, archived) is the few by design: listed first
        few = None if Status.ACTIVE in flt.statuses else self._few(flt)
        if few is None:
            found, passed = self._widening(flt, k, hits)
        else:
            found, passed = hits(k, among=few)[0], few
        # ties in row order: the same however an index numbers its entries
        ranked = sorted((-score, key) for key, score in found if key in passed)
        return [(passed[key], -score) for score, key in ranked[:k]]

    def _widening(
        self, flt: Filter, k: int, hits: Hits
    ) -> tuple[list[tuple[int, float]], dict[int, str]]:
        """The index's best, in ever larger rounds until ``k`` of them pass the filter;
        or, when the first round held too few and the filter lets few by at all, those
        few alone. The hits, and those that pass with their ids."""
        where, params = filter_sql(flt, owner=None)  # hits from the owners' own indexes
        first = fetch = max(k * 2, 64)  # twice what is kept: most pass the usual filter
        while True:
            found, exhausted = hits(fetch)
            passed = self._passing([key for key, _ in found], where, params)
            if len(passed) >= k or exhausted:
                return found, passed
            if fetch == first and (few := self._few(flt)) is not None:
                return hits(k, among=few)[0], few
            fetch *= 4

    def _passing(self, keys: list[int], where: str, params: list[Any]) -> dict[int, str]:
        """Of these row keys, those whose memories pass the filter, with their ids."""
        passed: dict[int, str] = {}
        for chunk in chunks(keys):
            among, values = self.db.among(chunk)
            rows = self.db.read(
                f"SELECT rowid, id FROM memories AS m {self.db.by_key} "
                f"WHERE rowid {among} AND {where}",
                (*values, *params),
            )
            passed.update((int(key), mid) for key, mid in rows)
        return passed

    def _few(self, flt: Filter) -> dict[int, str] | None:
        """Every memory the filter lets by (row keys and ids) if there are at most
        ``_FEW`` of them, else None."""
        where, params = filter_sql(flt)
        rows = self.db.read(
            f"SELECT rowid, id FROM memories AS m WHERE {where} LIMIT ?", (*params, _FEW + 1)
        )
        return None if len(rows) > _FEW else {int(key): mid for key, mid in rows}

    def known_size(self, owner: str) -> int | None:
        """The owner's memories as its keyword index last counted them (no query)."""
        return self._keywords.size(owner)

    def warm(self, owner: str) -> None:
        with self.db.searching():  # the indexes catch up under their locks: see within()
            self._keywords.count(owner)  # loads its saved index or builds it, caught up
            self.vectors.warm(owner)

    def keyword_snapshot(self, owner: str) -> tuple[list[tuple[int, str, str]], int]:
        with self.db.snapshot():  # one consistent read: the head and the rows it covers
            head = self.keyword_log_head()
            rows = self.db.read(
                "SELECT key, text, context FROM keyword_docs WHERE owner = ? ORDER BY key",
                (owner,),
            )
        return [(int(key), text, context) for key, text, context in rows], head

    def keyword_changes(self, owner: str, after_seq: int) -> tuple[list[TextChange], int] | None:
        with self.db.snapshot():
            if after_seq < self.db.pruned("keyword_log"):
                return None  # the log no longer reaches back that far: rebuild
            head = self.keyword_log_head()
            rows = self.db.read(
                "SELECT l.seq, l.key, d.text, d.context FROM keyword_log l "
                "LEFT JOIN keyword_docs d ON d.key = l.key "
                "WHERE l.owner = ? AND l.seq > ? AND l.seq <= ? ORDER BY l.seq",
                (owner, after_seq, head),
            )
        return [(int(seq), int(key), text, context) for seq, key, text, context in rows], head

    def keyword_log_head(self) -> int:
        return self.db.log_head("keyword_log")

    def generations(self, owners: Sequence[str]) -> dict[str, int]:
        # Every change to a memory rebuilds its keyword-index row, in its transaction, and
        # logs it in keyword_log (the index in every process catches up from it), in
        # commit order: the owner's newest entry there is the change count. Not below the
        # log's pruned mark, so an owner whose entries were all pruned never counts less
        # than before (the mark only grows, past every entry it removed).
        names = sorted(set(owners))
        among, values = self.db.among(names)
        with self.db.snapshot():
            pruned = self.db.pruned("keyword_log")
            rows = self.db.read(
                f"SELECT owner, max(seq) FROM keyword_log WHERE owner {among} GROUP BY owner",
                values,
            )
        newest = {owner: int(seq) for owner, seq in rows}
        return {owner: max(newest.get(owner, 0), pruned) for owner in names}
