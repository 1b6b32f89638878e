"""Remake a store's vectors with another embedding model.

A store records the model that made its vectors and refuses any other, since vectors of
two models do not compare. After a change of model (a new provider, or a new version of
the built-in one), ``reembed`` moves the store over in place: it adopts the new model at
once, then re-embeds the memories whose vectors the old one made (and derives their
keyword-index text anew), a batch per transaction. Until it has finished, the store
refuses to open for anything else, and running it again resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable

from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.embed import registry as embedders
from hindsight.store import open_store
from hindsight.write import embedding_text

__all__ = ["reembed"]

BATCH = 512


def reembed(
    settings: Settings | None = None,
    *,
    embedder: Embeddings | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Re-embed every memory whose vector another model made; returns how many.

    ``progress`` is called with the count done after each batch. A store already of
    the configured model is left as it is (returns 0).
    """
    settings = settings or Settings()
    embedder = embedder or embedders.create(settings.embedding_provider)
    store = open_store(settings)
    done = 0
    try:
        store.bind_embedding(embedder.model_id, embedder.dimension, rebind=True)
        while batch := store.stale_vectors(BATCH):
            for memory in batch:
                memory.embedding_model = embedder.model_id
            vectors = embedder.encode_documents([embedding_text(m) for m in batch])
            store.replace_vectors(list(zip(batch, vectors, strict=True)))
            done += len(batch)
            if progress is not None:
                progress(done)
        store.finish_rebind()
    finally:
        store.close()
    return done
