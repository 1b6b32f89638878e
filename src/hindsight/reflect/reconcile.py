"""What drafts do to the stored memories of their keys: insert, rewrite or supersede."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from hindsight.models import Memory, Provenance, Source, new_id
from hindsight.reflect.drafts import Draft
from hindsight.write.decide import supersede

GENERATOR: Final = "heuristic"
Vector = npt.NDArray[np.float32]


@dataclass(slots=True)
class Changes:
    """What :func:`reconcile` decided: the writes, and the memory holding each draft."""

    insert: list[Memory] = field(default_factory=list)
    rewrite: list[Memory] = field(default_factory=list)  # same key and evidence, new text
    retire: list[Memory] = field(default_factory=list)  # superseded by an insert
    current: list[Memory] = field(default_factory=list)  # one per draft, in order
    changed: list[Memory] = field(default_factory=list)  # inserts and rewrites, in order

    def rows(
        self, vectors: Sequence[Vector]
    ) -> tuple[list[tuple[Memory, Vector]], list[tuple[Memory, Vector | None]]]:
        """The store's insert and update rows, given one vector per :attr:`changed` memory."""
        by_id = dict(zip((m.id for m in self.changed), vectors, strict=True))
        inserts = [(m, by_id[m.id]) for m in self.insert]
        updates = [(m, by_id.get(m.id)) for m in [*self.rewrite, *self.retire]]
        return inserts, updates


def reconcile(
    drafts: Sequence[Draft],
    existing: Iterable[Memory],
    *,
    owner: str,
    embedding_model: str,
    now: datetime,
) -> Changes:
    """Decide what each draft does to the stored memories of its key.

    The same text and evidence: nothing. No new evidence (say some was forgotten, or
    a count changed): the memory is rewritten in place. New evidence: a new memory
    supersedes the old one, which keeps its text with ``valid_to``/``superseded_by``.
    An offline draft of exactly the evidence an LLM's draft was written from changes
    nothing: the model's text of the same turns stands (``metadata["generator"]``).
    """
    stored = {m.metadata["key"]: m for m in existing if isinstance(m.metadata.get("key"), str)}
    out = Changes()
    for draft in drafts:
        metadata = {"generator": GENERATOR, **draft.metadata, "key": draft.key}
        old = stored.get(draft.key)
        if old is not None and (
            _holds(old, draft, metadata) or _drafted_better(old, metadata, draft)
        ):
            out.current.append(old)
            continue
        if old is not None and set(draft.evidence) <= set(old.provenance.derived_from):
            old.content, old.confidence, old.metadata = draft.content, draft.confidence, metadata
            old.query_hints, old.observed_at = list(draft.query_hints), draft.observed_at
            old.provenance.derived_from = list(draft.evidence)
            old.provenance.session_id = draft.session_id
            old.updated_at = now
            out.rewrite.append(old)
            out.changed.append(old)
            out.current.append(old)
            continue
        new = Memory(
            id=new_id(),
            owner=owner,
            kind=draft.kind,
            content=draft.content,
            confidence=draft.confidence,
            provenance=Provenance(
                source=Source.SYSTEM,
                session_id=draft.session_id,
                derived_from=list(draft.evidence),
            ),
            observed_at=draft.observed_at
            if old is None
            else max(draft.observed_at, old.observed_at),
            created_at=now,
            updated_at=now,
            query_hints=list(draft.query_hints),
            embedding_model=embedding_model,
            metadata=metadata,
        )
        new.valid_from = new.observed_at
        if old is not None:
            retired, _ = supersede(old, new, now=now)  # new is never the older: see above
            out.retire.append(retired)
        out.insert.append(new)
        out.changed.append(new)
        out.current.append(new)
    return out


def _drafted_better(old: Memory, metadata: Mapping[str, Any], draft: Draft) -> bool:
    """Whether ``old`` is an LLM's draft of the very evidence of an offline one."""
    by_model = str(old.metadata.get("generator", "")).startswith("llm:")
    return (
        by_model
        and metadata["generator"] == GENERATOR
        and set(old.provenance.derived_from) == set(draft.evidence)
    )


def _holds(old: Memory, draft: Draft, metadata: Mapping[str, Any]) -> bool:
    """Whether a stored memory already says exactly what the draft says."""
    return (
        old.content == draft.content
        and set(old.provenance.derived_from) == set(draft.evidence)
        and old.metadata == metadata
        and old.confidence == min(draft.confidence, old.trust)  # capped at its trust
        and old.query_hints == list(draft.query_hints)
        and old.provenance.session_id == draft.session_id
    )
