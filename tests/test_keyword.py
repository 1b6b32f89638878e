"""The in-memory BM25 keyword index: scores, analysis, per-owner statistics, catching up,
and saving big owners' indexes so that the next process loads them instead of rebuilding."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings
from hindsight.store import Filter
from hindsight.store import keyword as keyword_module
from hindsight.store.bm25 import K1, B, Postings, compact, expand, remove, search
from hindsight.store.keyword import KeywordIndex, TextChange
from hindsight.text.terms import _ANALYZER, query_terms


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
        idf = max(math.log((live + 1 - df + 0.5) / (df + 0.5)), 1e-6)  # one more without it
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


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(st.tuples(TEXTS, TEXTS), min_size=1, max_size=12),
    query=TEXTS,
    among=st.sets(st.integers(0, 14)),
)
def test_a_search_among_given_keys_scores_as_the_whole_index(
    docs: list[tuple[str, str]], query: str, among: set[int]
) -> None:
    """A filter that lets few documents by asks for those keys only: the same scores as
    searching all, of those keys (unknown ones ignored)."""
    index = KeywordIndex(ListSource(docs), context_weight=0.5)
    terms = query_terms(query)
    everything = index.search("user:a", terms, 100)
    assert index.search("user:a", terms, 100, among) == [h for h in everything if h[0] in among]


def test_words_are_stemmed_and_folded() -> None:
    assert query_terms("Running to the CAFÉ") == query_terms("runs cafe")
    assert query_terms("the of") == ["the", "of"]  # only stop words: keep them


@pytest.mark.backends
def test_irregular_forms_meet_their_base_form(hs: Hindsight) -> None:
    assert query_terms("went gone going") == ["go"]
    assert query_terms("broke broken breaks children") == ["break", "child"]
    hs.retain("user:kw-irr", "We go to Lisbon every spring.", kind="fact")
    hs.retain("user:kw-irr", "The printer is out of paper.", kind="fact")
    (hit,) = keyword(hs, "user:kw-irr", "where they went")
    assert "Lisbon" in hs.get(hit).content


def keyword(hs: Hindsight, owner: str, query: str) -> list[str]:
    return [mid for mid, _ in hs.store.keyword_search(Filter(owners=[owner]), query, 10)]


@pytest.mark.backends
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


@pytest.mark.backends
def test_forgetting_most_documents_with_a_word_leaves_it_searchable(hs: Hindsight) -> None:
    owner = "user:kw-few"
    ids = [hs.retain(owner, f"the zanzibar trip {i}", kind="fact").created[0] for i in range(3)]
    assert len(keyword(hs, owner, "zanzibar")) == 3
    hs.forget(ids[0])
    hs.forget(ids[1])  # two of three gone: the word's live count is 1, not 3
    assert keyword(hs, owner, "zanzibar") == [ids[2]]
    assert [r.memory.id for r in hs.recall(owner, "zanzibar", k=1)] == [ids[2]]
    fresh = KeywordIndex(hs.store)  # and it scores as an index built afresh
    terms = ["zanzibar"]
    assert hs.store._keywords.search(owner, terms, 5) == fresh.search(owner, terms, 5)


@pytest.mark.backends
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
            assert writer.store.db.read(f"SELECT count(*) FROM {log}")[0][0] <= 20
        # the reader's indexes stand at a seq the logs no longer reach: they rebuild
        hits = keyword(reader, "user:p", "parcel depot")
        assert len(hits) == 10 and set(hits) <= set(ids)
        top = reader.recall("user:p", "parcel 7 arrived at depot 7", k=3)
        assert ids[7] in [r.memory.id for r in top]


# -- saved indexes ------------------------------------------------------------------------
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
            st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
        ),
        min_size=1,
        max_size=60,
    ),
    data=st.data(),
)
def test_a_saved_index_scores_as_a_rebuild_of_its_live_documents(
    docs: list[tuple[str, str]], data: st.DataObject
) -> None:
    index = KeywordIndex(ListSource(docs))
    postings = index._ready("o", index._owners.get("o"))
    gone = data.draw(st.sets(st.integers(1, len(docs))))
    for key in gone:
        remove(postings, key)
    restored = expand(compact(postings, chunk=data.draw(st.integers(1, 64))))
    rows = [row for row in ListSource(docs).rows if row[0] not in gone]
    assert_same_as_built(restored, rows)
    # a loaded index grows (its terms copied out on their first new posting), loses
    # documents, and is saved and loaded again
    more = data.draw(st.lists(st.lists(st.sampled_from(WORDS), min_size=1).map(" ".join)))
    for key, text in enumerate(more, start=len(docs) + 1):
        index._add(restored, key, text, "")
        rows.append((key, text, ""))
    later = data.draw(st.sets(st.sampled_from([key for key, _, _ in rows]))) if rows else set()
    for key in later:
        remove(restored, key)
    rows = [row for row in rows if row[0] not in later]
    assert_same_as_built(restored, rows)
    assert_same_as_built(expand(compact(restored, chunk=data.draw(st.integers(1, 64)))), rows)


def assert_same_as_built(postings: Postings, rows: list[tuple[int, str, str]]) -> None:
    """Search ``postings`` as an index built from the live ``rows`` alone would score."""
    source = ListSource([])
    source.rows = rows
    fresh = KeywordIndex(source)
    built = fresh._ready("o", fresh._owners.get("o"))
    for terms in (["alpha"], ["beta", "zeta"], ["kappa", "iota", "gamma", "delta"]):
        got, want = search(postings, terms, 100), search(built, terms, 100)
        assert [key for key, _ in got] == [key for key, _ in want]
        assert np.allclose([v for _, v in got], [v for _, v in want])


FACTS = [
    "the spare key is under the blue flowerpot",
    "my sister lives in Zanzibar",
    "the boiler was serviced in March",
    "the wifi password is on the fridge",
    "the car needs new tyres before winter",
    "the dentist appointment is on Friday",
]


@pytest.fixture
def small_saves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Save owners of 5 documents or more (the default threshold is thousands)."""
    monkeypatch.setattr(keyword_module, "SAVE_MIN_DOCS", 5)


def saved_file(settings: Settings) -> Path:
    files = list(settings.index_dir.glob("*.keywords.npz"))
    assert len(files) == 1
    return files[0]


def no_rebuild(engine: Hindsight) -> None:
    def refuse(owner: str) -> object:
        raise AssertionError("the index was rebuilt from the store, not loaded")

    engine.store.keyword_snapshot = refuse  # type: ignore[method-assign]


def searches(engine: Hindsight) -> dict[str, list[tuple[str, float]]]:
    flt = Filter(owners=["user:s"])
    return {q: engine.store.keyword_search(flt, q, 10) for q in ("key flowerpot", "sister", "car")}


@pytest.mark.backends
@pytest.mark.usefixtures("small_saves")
def test_a_saved_index_is_loaded_and_caught_up_not_rebuilt(
    settings: Settings, embedder: Embeddings
) -> None:
    with Hindsight(settings, embedder=embedder) as first:
        ids = [first.retain("user:s", fact, kind="fact").created[0] for fact in FACTS]
        before = searches(first)  # builds the index, and saves it: 6 documents
        assert saved_file(settings).exists()
    with Hindsight(settings, embedder=embedder) as second:
        no_rebuild(second)
        assert searches(second) == before
        # written after the save: the loaded index catches up from the log
        later = second.retain("user:s", "the car keys hang by the door", kind="fact")
        second.update(ids[0], content="the spare key is with the neighbour")
        assert keyword(second, "user:s", "flowerpot") == []
        assert keyword(second, "user:s", "neighbour") == [ids[0]]
        assert later.created[0] in keyword(second, "user:s", "car keys")
    with Hindsight(settings, embedder=embedder) as third:  # saved again on close
        no_rebuild(third)
        assert keyword(third, "user:s", "neighbour") == [ids[0]]


@pytest.mark.backends
@pytest.mark.usefixtures("small_saves")
def test_forgetting_removes_the_saved_words(settings: Settings, embedder: Embeddings) -> None:
    with Hindsight(settings, embedder=embedder) as engine:
        ids = [engine.retain("user:s", fact, kind="fact").created[0] for fact in FACTS]
        assert keyword(engine, "user:s", "zanzibar") == [ids[1]]
        engine.forget(ids[1])
        assert not list(settings.index_dir.glob("*.keywords.npz"))  # gone with the memory
    # written again on close, from what is left
    with np.load(saved_file(settings)) as saved:
        terms = saved["terms"].tobytes().decode().split("\n")
        assert "zanzibar" not in terms and "flowerpot" in terms
        assert len(saved["keys"]) == 5
    with Hindsight(settings, embedder=embedder) as engine:
        no_rebuild(engine)
        assert keyword(engine, "user:s", "zanzibar") == []
        for mid in ids[:1] + ids[2:]:
            engine.forget(mid)
    # an owner with nothing left has no index files at all
    assert not list(settings.index_dir.glob("*.keywords.npz"))


@pytest.mark.backends
@pytest.mark.usefixtures("small_saves")
@pytest.mark.parametrize("damage", ["torn", "garbage", "other owner", "other analysis"])
def test_a_file_that_does_not_fit_is_ignored_and_rebuilt(
    settings: Settings, embedder: Embeddings, damage: str
) -> None:
    with Hindsight(settings, embedder=embedder) as engine:
        for fact in FACTS:
            engine.retain("user:s", fact, kind="fact")
        before = searches(engine)
    path = saved_file(settings)
    if damage == "torn":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "garbage":
        path.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 40)
    elif damage == "other owner":  # another owner's file in this owner's place
        with Hindsight(settings, embedder=embedder) as engine:
            for fact in FACTS[:5]:
                engine.retain("user:t", fact, kind="fact")
            keyword(engine, "user:t", "car")
        files = list(settings.index_dir.glob("*.keywords.npz"))
        other = next(f for f in files if f != path)
        other.replace(path)
    changed = {"context_weight": 0.25} if damage == "other analysis" else {}
    reopened = settings.model_copy(update=changed)
    with Hindsight(reopened, embedder=embedder) as engine:
        found = searches(engine)
        if not changed:
            assert found == before
        assert found["sister"] and found["key flowerpot"]
    with np.load(path) as saved:  # rebuilt, and rewritten whole, of this analysis
        assert len(saved["keys"]) == 6
        meta = json.loads(saved["meta"].tobytes())
        assert meta["signature"] == keyword_module._signature(reopened.context_weight)


@pytest.mark.backends
@pytest.mark.usefixtures("small_saves")
def test_memory_holds_a_bounded_number_of_documents(
    settings: Settings, embedder: Embeddings
) -> None:
    """Owners searched longest ago are let go past the bound; searched again, they are
    loaded (when saved) or rebuilt, and answer as before."""
    bounded = settings.model_copy(update={"keyword_cache_docs": 8})
    with Hindsight(bounded, embedder=embedder) as hs:
        ids = {}
        for owner, facts in (("user:big", FACTS), ("user:small", FACTS[:3])):
            ids[owner] = [hs.retain(owner, fact, kind="fact").created[0] for fact in facts]
        index = hs.store._keywords  # type: ignore[attr-defined]
        big = keyword(hs, "user:big", "zanzibar")
        assert big == [ids["user:big"][1]]
        assert keyword(hs, "user:small", "zanzibar") == [ids["user:small"][1]]
        assert [o for o, _ in index._owners.items()] == [
            "user:small"
        ]  # 6 + 3 > 8: user:big went, saved
        assert len(list(bounded.index_dir.glob("*.keywords.npz"))) == 1
        no_rebuild(hs)  # user:big comes back from its file
        assert keyword(hs, "user:big", "zanzibar") == big
        assert [o for o, _ in index._owners.items()] == [
            "user:big"
        ]  # and user:small (3, unsaved) went


def test_frequencies_count_the_documents_that_say_a_word_themselves() -> None:
    docs = [
        ("lol", ""),
        ("lol ok", "we adopted a dog"),  # "dog" only in its context: not its own
        ("golden retriever", "lol"),
        ("a dog and a cat", ""),
    ]
    index = KeywordIndex(ListSource(docs), context_weight=0.5)
    assert index.frequencies("o", ["lol", "dog", "cat", "zebra"]) == (
        {"lol": 2, "dog": 1, "cat": 1, "zebra": 0},
        4,
    )
    postings = index._ready("o", index._owners.get("o"))
    remove(postings, 1)  # a removed document no longer counts
    assert index.frequencies("o", ["lol"]) == ({"lol": 1}, 3)
