"""The in-memory BM25 keyword index: scores, analysis, per-owner statistics, catching up."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings
from hindsight.store import Filter
from hindsight.store.keyword import _ANALYZER, K1, B, KeywordIndex, TextChange, query_terms


class ListSource:
    """A KeywordSource over a list of texts for one owner (no log: nothing changes)."""

    def __init__(self, docs: list[tuple[str, str]]) -> None:
        self.rows = [(key, text, context) for key, (text, context) in enumerate(docs, start=1)]

    def keyword_snapshot(self, owner: str) -> tuple[list[tuple[int, str, str]], int]:
        return self.rows, 0

    def keyword_changes(self, owner: str, after_seq: int) -> tuple[list[TextChange], int]:
        return [], 0

    def keyword_log_head(self) -> int:
        return 0


def reference_bm25(docs: list[tuple[str, str]], query: str, weight: float) -> dict[int, float]:
    """BM25 written out plainly, as the index's docstring defines it."""
    terms = query_terms(query)
    analysed = []
    for text, context in docs:
        own, near = query_terms_all(text), query_terms_all(context)
        freq: Counter[str] = Counter(own)
        weighted = {t: float(c) for t, c in freq.items()}
        for t in near:
            weighted[t] = weighted.get(t, 0.0) + weight
        analysed.append((weighted, len(own) + len(near)))
    live = len(docs)
    average = sum(length for _, length in analysed) / live
    scores: dict[int, float] = {}
    for term in terms:
        df = sum(1 for weighted, _ in analysed if term in weighted)
        if not df:
            continue
        idf = max(math.log((live - df + 0.5) / (df + 0.5)), 1e-6)
        for key, (weighted, length) in enumerate(analysed, start=1):
            f = weighted.get(term)
            if f:
                norm = K1 * (1 - B + B * length / average)
                scores[key] = scores.get(key, 0.0) + idf * f * (K1 + 1) / (f + norm)
    return scores


def query_terms_all(text: str) -> list[str]:
    """Every term of a text, stop words included, as documents are indexed."""
    return _ANALYZER.terms(_ANALYZER.words(text))


WORDS = st.sampled_from(
    [
        "apple",
        "banana",
        "cherry",
        "running",
        "runs",
        "café",
        "cafe",
        "jazz",
        "the",
        "of",
        "42",
        "paris",
    ]
)
TEXTS = st.lists(WORDS, max_size=8).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.tuples(TEXTS, TEXTS), min_size=1, max_size=12), query=TEXTS)
def test_scores_match_a_plain_bm25(docs: list[tuple[str, str]], query: str) -> None:
    index = KeywordIndex(ListSource(docs), context_weight=0.5)
    found = dict(index.search("user:a", query_terms(query), 100))
    expected = {k: s for k, s in reference_bm25(docs, query, 0.5).items() if s > 0}
    assert found.keys() == expected.keys()
    for key, score in expected.items():
        assert math.isclose(found[key], score, rel_tol=1e-4)


def test_words_are_stemmed_and_folded() -> None:
    assert query_terms("Running to the CAFÉ") == query_terms("runs cafe")
    assert query_terms("the of") == ["the", "of"]  # only stop words: keep them


def test_irregular_forms_meet_their_base_form(hs: Hindsight) -> None:
    assert query_terms("went gone going") == ["go"]
    assert query_terms("broke broken breaks children") == ["break", "child"]
    hs.retain("user:kw-irr", "We go to Lisbon every spring.", kind="fact")
    hs.retain("user:kw-irr", "The printer is out of paper.", kind="fact")
    (hit,) = keyword(hs, "user:kw-irr", "where they went")
    assert "Lisbon" in hs.get(hit).content


def keyword(hs: Hindsight, owner: str, query: str) -> list[str]:
    return [mid for mid, _ in hs.store.keyword_search(Filter(owners=[owner]), query, 10)]


def test_statistics_are_per_owner(hs: Hindsight) -> None:
    for text in ("my locker code is 4471", "I swim on mondays", "jazz on fridays"):
        hs.retain("user:kw-alice", text, kind="fact")
    before = hs.store.keyword_search(Filter(owners=["user:kw-alice"]), "locker jazz", 10)
    for i in range(30):  # another tenant floods the same words
        hs.retain("user:kw-bob", f"locker {i} jazz band number {i}", kind="fact")
    after = hs.store.keyword_search(Filter(owners=["user:kw-alice"]), "locker jazz", 10)
    assert before == after and len(before) == 2


def test_another_store_on_the_same_file_catches_up(tmp_path: Path, embedder: Embeddings) -> None:
    settings = Settings(home=tmp_path, sqlite_synchronous="OFF")
    with (
        Hindsight(settings, embedder=embedder) as writer,
        Hindsight(settings, embedder=embedder) as reader,
    ):
        first = writer.retain("user:c", "the spare key is under the blue flowerpot", kind="fact")
        assert keyword(reader, "user:c", "flowerpot") == [first.created[0]]
        writer.update(first.created[0], content="the spare key is with the neighbour")
        assert keyword(reader, "user:c", "flowerpot") == []
        assert keyword(reader, "user:c", "neighbour") == [first.created[0]]
        writer.forget(first.created[0])
        assert keyword(reader, "user:c", "neighbour") == []


def test_many_deletions_rebuild_the_index_and_keep_it_right(hs: Hindsight) -> None:
    ids = [
        hs.retain("user:kw-del", f"parcel {i} arrived at depot {i}", kind="fact").created[0]
        for i in range(120)
    ]
    for mid in ids[:100]:
        hs.forget(mid)
    hits = keyword(hs, "user:kw-del", "parcel depot")
    assert set(hits) <= set(ids[100:]) and len(hits) == 10
    assert hs.store._keywords.count("user:kw-del") == 20


def test_pruned_logs_stay_bounded_and_a_reader_left_behind_rebuilds(
    tmp_path: Path, embedder: Embeddings
) -> None:
    settings = Settings(home=tmp_path, sqlite_synchronous="OFF", log_keep=20)
    with (
        Hindsight(settings, embedder=embedder) as writer,
        Hindsight(settings, embedder=embedder) as reader,
    ):
        first = writer.retain("user:p", "the spare key is under the blue flowerpot", kind="fact")
        assert [r.memory.id for r in reader.recall("user:p", "flowerpot", k=1)] == first.created
        ids = [
            writer.retain("user:p", f"parcel {i} arrived at depot {i}", kind="fact").created[0]
            for i in range(40)
        ]
        writer.store.prune_logs()
        for log in ("keyword_log", "vector_log"):
            assert writer.store._read(f"SELECT count(*) FROM {log}")[0][0] <= 20
        # the reader's indexes stand at a seq the logs no longer reach: they rebuild
        hits = keyword(reader, "user:p", "parcel depot")
        assert len(hits) == 10 and set(hits) <= set(ids)
        top = reader.recall("user:p", "parcel 7 arrived at depot 7", k=3)
        assert ids[7] in [r.memory.id for r in top]
