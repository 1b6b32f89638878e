"""Forget with cascade and receipts; update; export/import round trip."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hindsight import Hindsight, Kind, NotFoundError, Settings, ValidationError
from hindsight.embed import Embeddings
from hindsight.store import Filter
from hindsight.store import keyword as keyword_module
from hindsight.store.vectors import index as vector_index_module

pytestmark = pytest.mark.backends  # deletion, cascades and restored versions


def _all(hs: Hindsight, owner: str) -> list[str]:
    flt = Filter(owners=[owner], statuses=(), current_only=False)
    return [m.id for m in hs.store.iterate(flt)]


def test_forget_an_episode_cascades_to_what_was_derived_from_it(hs: Hindsight) -> None:
    result = hs.retain("user:alice", "I live in Paris. I hate cilantro.")
    (episode,) = result.episodes
    receipt = hs.forget(episode)
    assert receipt.deleted_ids == [episode]
    assert sorted(receipt.derived_ids) == sorted(result.created)
    assert _all(hs, "user:alice") == []
    assert hs.recall("user:alice", "Paris cilantro") == []  # gone from both indexes
    (kept,) = hs.store.receipts("user:alice")
    assert kept["id"] and kept["deleted_ids"] == [episode]


def test_a_memory_also_backed_by_another_turn_survives(hs: Hindsight) -> None:
    first = hs.retain("user:alice", "I love jazz.")
    hs.retain("user:alice", "I really love jazz.")
    receipt = hs.forget(first.episodes[0])
    assert receipt.derived_ids == []
    (pref,) = hs.list_memories("user:alice", kinds=[Kind.PREFERENCE])
    assert first.episodes[0] not in pref.provenance.derived_from


def test_forget_a_session_or_a_period_or_everything(hs: Hindsight) -> None:
    hs.retain("user:alice", "I love tea.", session_id="s1", observed_at="2024-01-01")
    hs.retain("user:alice", "I love coffee.", session_id="s2", observed_at="2024-02-01")
    hs.retain("user:alice", "I love cocoa.", session_id="s3", observed_at="2024-03-01")
    hs.retain("user:bob", "I love tea.", session_id="s1")
    hs.forget(owner="user:alice", session_id="s1")
    assert all("tea" not in m.content for m in hs.list_memories("user:alice"))
    hs.forget(owner="user:alice", since="2024-02-15")
    assert {m.content for m in hs.list_memories("user:alice")} == {
        "I love coffee.",
        "User loves coffee",
    }
    receipt = hs.forget(owner="user:alice")
    assert receipt.count == 2 and _all(hs, "user:alice") == []
    assert len(_all(hs, "user:bob")) == 2  # other owners untouched


def test_forget_clears_working_memory_of_the_session(hs: Hindsight) -> None:
    hs.observe("user:alice", "s1", "hello there")
    hs.forget(owner="user:alice", session_id="s1")
    assert hs.window("user:alice", "s1") == []


@pytest.mark.backends("sqlite")
def test_forget_arguments(hs: Hindsight) -> None:
    with pytest.raises(NotFoundError):
        hs.forget("m_nope")
    with pytest.raises(ValidationError):
        hs.forget()
    with pytest.raises(ValidationError):
        hs.forget("m_x", session_id="s1")


def test_update_re_embeds_and_validates(hs: Hindsight) -> None:
    (mid,) = hs.retain("user:alice", "Alice drives a red car", kind="fact").created
    hs.update(mid, content="Alice rides a blue bicycle", metadata={"checked": True})
    memory = hs.get(mid)
    assert memory.content == "Alice rides a blue bicycle" and memory.metadata == {"checked": True}
    (top, *_) = hs.recall("user:alice", "what does she cycle on", k=1)
    assert top.memory.id == mid
    before = hs.get(mid)
    with pytest.raises(ValidationError):
        hs.update(mid, confidence=2.0)
    with pytest.raises(ValidationError):
        hs.update(mid, content="")
    assert hs.get(mid) == before


def test_an_edited_text_drops_what_was_read_off_the_old_one(hs: Hindsight) -> None:
    hs.retain("user:alice", "I live in Paris.")
    [fact] = hs.list_memories("user:alice", kinds=["fact"])
    assert fact.metadata["value"] == "Paris"
    hs.update(fact.id, content="User lives in Madrid")
    edited = hs.get(fact.id)
    assert "value" not in edited.metadata and edited.metadata["extractor"] == "heuristic"
    hs.retain("user:alice", "I moved to Lisbon.")  # the slot is still the location
    assert hs.get(fact.id).superseded_by is not None
    for content in ("\u200b\u200d\ufeff", "\u2060 \u00a0"):
        with pytest.raises(ValidationError, match="content is empty"):
            hs.update(fact.id, content=content)
        with pytest.raises(ValidationError, match="content is empty"):
            hs.retain("user:alice", content)


def test_export_import_round_trip(hs: Hindsight, tmp_path, embedder: Embeddings) -> None:  # type: ignore[no-untyped-def]
    hs.retain("user:alice", "I live in Paris.", observed_at="2024-01-01", session_id="s1")
    hs.retain("user:alice", "I moved to Berlin.", observed_at="2024-06-01", metadata={"x": 1})
    hs.retain("user:alice", "Alice keeps bees", kind="fact", confidence=0.4)
    exported = [json.loads(json.dumps(r)) for r in hs.export("user:alice")]
    assert len(exported) == len(_all(hs, "user:alice"))
    other = Settings(home=tmp_path / "other", sqlite_synchronous="OFF")
    with Hindsight(other, embedder=embedder) as fresh:
        assert fresh.import_records(exported) == {
            "imported": len(exported),
            "skipped": 0,
            "held": 0,
        }
        assert fresh.import_records(exported) == {
            "imported": 0,
            "skipped": len(exported),
            "held": 0,
        }
        again = [json.loads(json.dumps(r)) for r in fresh.export("user:alice")]
        assert again == exported
        facts = fresh.recall("user:alice", "where does the user live", kinds=["fact"])
        assert "Berlin" in facts[0].memory.content  # supersession survived the trip
        assert all("Paris" not in r.memory.content for r in facts)


@pytest.mark.backends("sqlite")
def test_import_checks_every_record_before_writing(hs: Hindsight) -> None:
    hs.retain("user:alice", "Alice keeps bees", kind="fact")
    good = list(hs.export("user:alice"))
    hs.forget(owner="user:alice")
    bad = {**good[0], "id": "m_other", "kind": "gossip"}
    with pytest.raises(ValidationError, match="record 2"):
        hs.import_records([good[0], bad])
    assert _all(hs, "user:alice") == []


def test_forget_by_id_checks_the_owner_and_returns_a_receipt_id(hs: Hindsight) -> None:
    (mid,) = hs.retain("user:alice", "Alice keeps bees", kind="fact").created
    with pytest.raises(NotFoundError, match="belongs to user:bob"):
        hs.forget(mid, owner="user:bob")
    assert hs.get(mid).content == "Alice keeps bees"
    receipt = hs.forget(mid, owner="user:alice")
    assert receipt.id.startswith("r_")
    assert hs.store.receipts("user:alice")[0]["id"] == receipt.id


@pytest.mark.backends("sqlite")
def test_import_refuses_repeated_ids(hs: Hindsight) -> None:
    hs.retain("user:alice", "Alice keeps bees", kind="fact")
    (record,) = list(hs.export("user:alice"))
    hs.forget(owner="user:alice")
    with pytest.raises(ValidationError, match="record 2: repeats id"):
        hs.import_records([record, record])
    assert _all(hs, "user:alice") == []


def test_forgetting_an_owner_removes_its_index_files(tmp_path, embedder: Embeddings) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(home=tmp_path / "h", hnsw_threshold=5, sqlite_synchronous="OFF")
    with Hindsight(settings, embedder=embedder) as hs:
        for n in range(8):
            hs.retain("user:alice", f"Alice planted tree number {n} in garden {n}", kind="fact")
        hs.recall("user:alice", "trees", k=3)  # builds the HNSW index, saved on close
    assert any(settings.index_dir.iterdir())
    with Hindsight(settings, embedder=embedder) as hs:
        hs.forget(owner="user:alice")
        assert list(settings.index_dir.iterdir()) == []
        assert hs.recall("user:alice", "trees") == []


FACTS = [
    "the spare key is under the blue flowerpot",
    "my sister lives in Zanzibar",
    "the boiler was serviced in March",
    "the wifi password is on the fridge",
    "the car needs new tyres before winter",
    "the dentist appointment is on Friday",
]
QUERIES = ("where is the key", "sister Zanzibar", "car tyres", "when is the dentist")


def _channels(hs: Hindsight) -> dict[str, tuple[list[tuple[str, float]], ...]]:
    flt = Filter(owners=["user:s"])
    return {
        q: (
            hs.store.vector_search(flt, hs.embedder.encode_query(q), 10),
            hs.store.keyword_search(flt, q, 10),
        )
        for q in QUERIES
    }


def _saved(settings: Settings) -> list[str]:
    names = (p.name.split(".", 1)[1] for p in settings.index_dir.iterdir())
    return sorted(name for name in names if name in ("keywords.npz", "vectors"))


def test_saved_indexes_answer_as_built_afresh_after_writes_and_forgets(
    tmp_path, embedder: Embeddings, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """An owner's saved keyword and exact vector indexes are loaded by the next engine
    (not rebuilt), follow the writes and forgets made meanwhile, never keep a forgotten
    memory on disk, and answer as indexes built from the store would."""
    monkeypatch.setattr(keyword_module, "SAVE_MIN_DOCS", 3)
    monkeypatch.setattr(vector_index_module, "SAVE_MIN_VECTORS", 3)
    settings = Settings(home=tmp_path / "h", sqlite_synchronous="OFF")
    with Hindsight(settings, embedder=embedder) as hs:
        ids = [hs.retain("user:s", fact, kind="fact").created[0] for fact in FACTS]
        _channels(hs)  # builds both indexes; saved when built or on close
    assert _saved(settings) == ["keywords.npz", "vectors"]
    with Hindsight(settings, embedder=embedder) as hs:
        refuse = pytest.fail  # loaded from the files, not rebuilt from the store
        hs.store.keyword_snapshot = lambda owner: refuse("keywords rebuilt")  # type: ignore[method-assign]
        hs.store.vectors.vector_snapshot = lambda *a: refuse("vectors rebuilt")  # type: ignore[method-assign,attr-defined]
        _channels(hs)
        hs.retain("user:s", "the car keys hang by the door", kind="fact")
        hs.update(ids[0], content="the spare key is with the neighbour")
        hs.forget(ids[1])
        assert _saved(settings) == []  # they held the forgotten memory
        loaded = _channels(hs)
    assert _saved(settings) == ["keywords.npz", "vectors"]  # written again on close
    saved = next(settings.index_dir.glob("*.vectors")).read_bytes()
    assert json.loads(saved.split(b"\n", 1)[0])["count"] == len(FACTS)  # one new, one gone
    with Hindsight(settings, embedder=embedder) as hs:
        reloaded = _channels(hs)
    for path in [*settings.index_dir.glob("*.npz"), *settings.index_dir.glob("*.vectors")]:
        path.unlink()
    with Hindsight(settings, embedder=embedder) as hs:
        fresh = _channels(hs)
    for got in (loaded, reloaded):  # the same hits; scores to float32's rounding
        assert got.keys() == fresh.keys()
        for query, channels in got.items():
            for hits, want in zip(channels, fresh[query], strict=True):
                assert [mid for mid, _ in hits] == [mid for mid, _ in want]
                assert np.allclose([v for _, v in hits], [v for _, v in want], atol=1e-6)
    assert ids[1] not in json.dumps(fresh) and ids[0] in json.dumps(fresh)


def test_owners_are_those_with_memories_sorted(hs: Hindsight) -> None:
    assert hs.store.owners() == []
    for owner in ("user:carol", "user:alice", "user:bob"):
        hs.retain(owner, "I love tea.")
    hs.observe("user:dave", "s1", "hello there")  # working memory only
    assert hs.store.owners() == ["user:alice", "user:bob", "user:carol"]
    hs.forget(owner="user:bob")
    assert hs.store.owners() == ["user:alice", "user:carol"]


def test_forgetting_the_newer_value_makes_the_older_current_again(hs: Hindsight) -> None:
    """Forget the session that said "I moved to Berlin": the owner lives in Paris again,
    not nowhere, and the receipt says which memory came back."""
    owner = "user:alice"
    paris = hs.retain(owner, "I live in Paris and I love jazz.", session_id="s1")
    berlin = hs.retain(owner, "I moved to Berlin.", session_id="s2")
    ((old, new),) = berlin.superseded
    assert hs.get(old).valid_to is not None
    receipt = hs.forget(owner=owner, session_id="s2")
    assert new in receipt.deleted_ids + receipt.derived_ids and receipt.restored_ids == [old]
    restored = hs.get(old)
    assert restored.valid_to is None and restored.superseded_by is None
    assert old in set(paris.created)
    current = [m.content for m in hs.list_memories(owner, limit=20)]
    assert any("Paris" in text for text in current)
    assert hs.store.receipts(owner)[0]["restored_ids"] == [old]


def test_forgetting_a_middle_value_keeps_one_current_value(hs: Hindsight) -> None:
    owner = "user:alice"
    hs.retain(owner, "I live in Paris.", session_id="s1")
    to_berlin = hs.retain(owner, "I moved to Berlin.", session_id="s2")
    to_rome = hs.retain(owner, "I moved to Rome.", session_id="s3")
    ((paris, berlin),) = to_berlin.superseded
    ((_, rome),) = to_rome.superseded
    receipt = hs.forget(berlin)
    assert receipt.restored_ids == []
    assert hs.get(paris).superseded_by == rome and hs.get(paris).valid_to is not None
    assert [m.id for m in hs.list_memories(owner, kinds=["fact"], limit=20)] == [rome]


def test_a_dry_run_lists_what_would_go_and_deletes_nothing(hs: Hindsight) -> None:
    first = hs.retain("user:alice", "I live in Paris and I love jazz.", session_id="s1")
    hs.retain("user:alice", "I moved to Berlin.", session_id="s2")
    before = list(hs.export("user:alice"))
    preview = hs.forget(owner="user:alice", session_id="s1", dry_run=True)
    assert preview.id == "preview"
    assert set(first.episodes) | set(first.created) <= {*preview.deleted_ids, *preview.derived_ids}
    assert list(hs.export("user:alice")) == before  # nothing went
    assert [e.action for e in hs.audit("user:alice")].count("forget") == 0
    done = hs.forget(owner="user:alice", session_id="s1")
    assert (done.deleted_ids, done.derived_ids) == (preview.deleted_ids, preview.derived_ids)
