"""The local embedding model, the store's refusal to mix models, and re-embedding."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from conftest import execute_sql
from providers import TinyHash

from hindsight import (
    EmbeddingError,
    EmbeddingMismatchError,
    Hindsight,
    Settings,
    ValidationError,
)
from hindsight.embed import Embeddings, Vectors, registry
from hindsight.jobs import reembed
from hindsight.store import Filter

pytestmark = pytest.mark.backends  # the store's binding and re-embedding


def test_minilm_embeds_meaning_offline(embedder: Embeddings) -> None:
    vectors = embedder.encode_documents(
        ["The cat sleeps on the sofa.", "A kitten is napping on the couch.", "Stock prices fell."]
    )
    assert vectors.shape == (3, embedder.dimension) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > 0.6 > vectors[0] @ vectors[2] + 0.3


def test_a_vector_depends_on_its_text_alone(embedder: Embeddings) -> None:
    # The model quantizes activations per inference call: texts must not share one.
    texts = [f"sentence number {i} about {w}" for i, w in enumerate(["tea", "rain", "maps"] * 30)]
    texts[7] = "a much longer sentence, " * 40
    together = embedder.encode_documents(texts)
    alone = np.stack([embedder.encode_query(t) for t in texts[:10]])
    assert np.array_equal(together[:10], alone)


def _embed_in(embedder: Embeddings, texts: list[str], out: Any) -> None:
    out.put(embedder.encode_documents(texts))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")
def test_a_forked_child_embeds_too(embedder: Embeddings) -> None:
    # the parent's worker threads do not survive a fork: the child must not wait for them
    texts = ["one text", "another text", "a third one"]
    here = embedder.encode_documents(texts)
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_embed_in, args=(embedder, texts, out))
    child.start()
    try:
        assert np.array_equal(out.get(timeout=60), here)
    finally:
        child.join(5)
        child.kill()


def test_long_text_is_truncated_not_refused(embedder: Embeddings) -> None:
    (vector,) = embedder.encode_documents(["word " * 5_000])
    assert np.isfinite(vector).all()


def test_a_store_refuses_another_model(settings: Settings, embedder: Embeddings) -> None:
    with Hindsight(settings, embedder=embedder) as hs:
        hs.retain("user:alice", "I love jazz.")
    other = settings.model_copy(update={"embedding_provider": "tiny-hash"})
    with pytest.raises(EmbeddingMismatchError, match="run 'hindsight reembed'"):
        Hindsight(other)


def _tiny_store(settings: Settings) -> list[str]:
    """A store whose vectors TinyHash made, of two owners; returns its memories' ids."""
    with Hindsight(settings, embedder=TinyHash()) as hs:
        hs.retain("user:alice", "I love jazz.")
        (gone,) = hs.retain("user:alice", "My sister lives in Lyon.", kind="fact").created
        hs.retain("user:bob", "I play the cello.")
        hs.forget(gone)  # nothing to remake
        owners = ("user:alice", "user:bob")
        return [m.id for owner in owners for m in hs.list_memories(owner, limit=100)]


def test_reembed_moves_a_store_to_the_configured_model(
    settings: Settings, embedder: Embeddings
) -> None:
    kept = _tiny_store(settings)
    execute_sql(settings, "UPDATE keyword_docs SET text = 'stale'")  # as an older version
    done: list[int] = []
    assert reembed(settings, embedder=embedder, progress=done.append) == len(kept) == done[-1]
    with Hindsight(settings, embedder=embedder) as hs:
        assert hs.stats().embedding_model == embedder.model_id
        assert {hs.get(i).embedding_model for i in kept} == {embedder.model_id}
        (hit, *_) = hs.recall("user:alice", "what music does she enjoy?")  # no shared word
        assert "jazz" in hit.memory.content
        found = hs.store.keyword_search(Filter(owners=["user:bob"]), "cello", 5)
        assert found and "cello" in hs.get(found[0][0]).content  # keyword text derived anew
    assert reembed(settings, embedder=embedder) == 0  # already of this model


class Failing(TinyHash):
    """Embeds ``budget`` batches, then fails like a provider that went away."""

    model_id = "tiny-hash-2"

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if self.budget == 0:
            raise EmbeddingError("the provider went away")
        self.budget -= 1
        return super().embed_batch(texts)


@pytest.mark.backends("sqlite")
def test_a_query_the_provider_fails_to_embed_fails_the_recall(settings: Settings) -> None:
    """The query is embedded on a thread of its own (beside the keyword search): its
    error reaches the caller as the provider raised it."""
    with Hindsight(settings, embedder=Failing(budget=1)) as hs:
        hs.retain("user:alice", "I love jazz.")  # the one batch the provider embeds
        with pytest.raises(EmbeddingError, match="went away"):
            hs.recall("user:alice", "what music does she love?")


def test_an_interrupted_reembed_blocks_the_store_until_resumed(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _tiny_store(settings)
    monkeypatch.setattr("hindsight.jobs.scheduled.REEMBED_BATCH", 1)
    with pytest.raises(EmbeddingError, match="went away"):
        reembed(settings, embedder=Failing(budget=1))
    for embedder in (TinyHash(), Failing(budget=9)):  # neither the old model nor the new
        with pytest.raises(EmbeddingMismatchError, match="hindsight reembed"):
            Hindsight(settings, embedder=embedder)
    assert reembed(settings, embedder=Failing(budget=9)) == len(kept) - 1
    with Hindsight(settings, embedder=Failing(budget=9)) as hs:
        assert {hs.get(i).embedding_model for i in kept} == {"tiny-hash-2"}


def test_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(ValidationError, match="minilm"):
        registry.create("no-such-model", Settings())


# -- the tokenizer: the ids the model was trained on ----------------------------------------
EDGES = [
    "I live in Paris and I love jazz.",
    "naïve café, Ångström, Zoë; résumé!",
    "ﬁne ﬂow ﬀ",  # ligatures: folding makes new letters
    "İstanbul ΣΑΣ Straße",
    "我住在北京。東京タワー",  # CJK ideographs are words of their own
    "emoji 😀👍🏽 test, flags 🇫🇷",
    "Hello\u200bworld\ufeff \x00nul\ufffd \x07bell",
    "tab\there\r\nnew\u2028line\u3000wide",
    "supercalifragilistic" * 6,  # a word of over 100 characters is [UNK]
    "x" * 300,
    "the " * 400,  # truncated at 256 ids
    "$5 + 3 = 8 < 9 ^ 2 | ~ ` @ # % & * ( ) [ ] { } \\ / ' \"",
    "https://example.org/a?b=c&d=e#f",
    "",
]


def _benchmark_texts() -> list[str]:
    import json
    from pathlib import Path

    data = Path(__file__).resolve().parents[2] / "shared" / "data"
    path = data / "locomo10.json"
    if not path.exists():
        return []
    texts = []
    for conversation in json.loads(path.read_text()):
        for value in conversation["conversation"].values():
            if isinstance(value, list):
                texts += [turn["text"] for turn in value]
        texts += [qa["question"] for qa in conversation["qa"]]
    return texts


def test_the_tokenizer_gives_the_reference_ids() -> None:
    from pathlib import Path

    from tokenizers.implementations.bert_wordpiece import BertWordPieceTokenizer

    from hindsight.embed import minilm
    from hindsight.embed.wordpiece import WordPiece

    vocab = Path(minilm.__file__).parent / "data" / "minilm-vocab.txt"
    reference = BertWordPieceTokenizer(str(vocab), lowercase=True)
    reference.enable_truncation(minilm.MAX_TOKENS)
    ours = WordPiece.from_file(vocab, max_tokens=minilm.MAX_TOKENS)
    texts = EDGES + _benchmark_texts()
    expected = [e.ids for e in reference.encode_batch(texts)]
    assert [ours.encode(t) for t in texts] == expected
    assert len(texts) > 5_000 or not _benchmark_texts()
