"""Summaries and lessons drawn from the store: what :mod:`hindsight.reflect` drafts
from, gathered here, and the drafts written through the write door.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from hindsight.errors import NotFoundError
from hindsight.extract import EXTRACTABLE_KINDS
from hindsight.jobs.kinds import REFLECT, SUMMARIZE, distil_job
from hindsight.models import Kind, Memory
from hindsight.reflect import GENERATED_KINDS, Draft, reflect_on, summarize_session
from hindsight.reflect.llm import MAX_POOL
from hindsight.store import Filter, Store
from hindsight.write.door import StoreKnown, WriteContext
from hindsight.write.ingest import Ingest


class Distil:
    """Session summaries and reflections of one store."""

    def __init__(self, store: Store, ingest: Ingest) -> None:
        self.store = store
        self.ingest = ingest

    def session(self, owner: str, sid: str) -> tuple[list[Memory], Draft]:
        """A session's turns, oldest first, and the offline draft of its summary."""
        turns = Filter(owners=[owner], kinds=[Kind.EPISODE], session_id=sid)
        episodes = list(self.store.iterate(turns))
        if not episodes:
            raise NotFoundError(f"session {sid!r} of {owner} has no turns to summarize")
        stored = Filter(
            owners=[owner], kinds=sorted(EXTRACTABLE_KINDS), session_id=sid, current_only=False
        )
        related = [*self.store.children([e.id for e in episodes]), *self.store.iterate(stored)]
        return episodes, summarize_session(sid, episodes, related)

    def summarize(self, context: WriteContext, sid: str) -> Memory:
        (owner,) = context.owners
        episodes, draft = self.session(owner, sid)
        jobs = []
        if self.ingest.settings.llm_configured:  # the model's summary, later
            jobs = [distil_job(context, SUMMARIZE, [e.id for e in episodes], session_id=sid)]
        changes = self.ingest.drafts(context, [draft], self.summaries(owner, sid), jobs=jobs)
        return changes.current[0]

    @staticmethod
    def summaries(owner: str, sid: str) -> Callable[[StoreKnown], Iterable[Memory]]:
        """What a session's summary draft is reconciled with: its stored summary."""
        flt = Filter(owners=[owner], kinds=[Kind.SUMMARY], session_id=sid)
        return lambda known: known.store.iterate(flt)

    def reflect(
        self,
        context: WriteContext,
        *,
        sid: str | None,
        since: datetime | None,
        until: datetime | None,
    ) -> list[Memory]:
        (owner,) = context.owners
        flt = Filter(owners=[owner], session_id=sid, since=since, until=until, current_only=False)
        scope = list(self.store.iterate(flt))
        session = Filter(owners=[owner], session_id=sid, current_only=False)
        if sid is not None and not scope and not self.store.count(session):
            raise NotFoundError(f"session {sid!r} of {owner} has no memories to reflect on")
        turns = [m.id for m in scope if m.kind is Kind.EPISODE]
        pool = {m.id: m for m in [*scope, *self.store.children(turns)]}
        in_scope = set(pool)
        existing = list(self.store.iterate(Filter(owners=[owner], kinds=[Kind.REFLECTION])))
        # a lesson is redrawn from all its evidence, not just what lies in scope
        cited = {p for r in existing for p in r.provenance.derived_from} - pool.keys()
        pool.update((m.id, m) for m in self.store.get(sorted(cited)))
        attributes = {m.attribute for m in pool.values() if m.attribute}
        if attributes:
            history = Filter(owners=[owner], kinds=[Kind.FACT, Kind.PREFERENCE], current_only=False)
            for m in self.store.iterate(history):
                if m.attribute in attributes:
                    pool.setdefault(m.id, m)
        parents = {p for m in pool.values() for p in m.provenance.derived_from} - pool.keys()
        pool.update((m.id, m) for m in self.store.get(sorted(parents)))
        drafts = reflect_on(pool.values(), scope=in_scope)
        jobs = []
        if self.ingest.settings.llm_configured and in_scope:  # the model's lessons, later
            evidence = [
                m for m in pool.values() if m.id in in_scope and m.kind not in GENERATED_KINDS
            ]
            latest = sorted(evidence, key=lambda m: (m.observed_at, m.id))[-MAX_POOL:]
            jobs = [distil_job(context, REFLECT, [m.id for m in latest])]
        return self.ingest.drafts(context, drafts, self.lessons(owner), jobs=jobs).changed

    @staticmethod
    def lessons(owner: str) -> Callable[[StoreKnown], list[Memory]]:
        """What lesson drafts are reconciled with: the owner's current lessons and topic
        digests (summaries of no one session)."""
        flt = Filter(owners=[owner], kinds=[Kind.REFLECTION, Kind.SUMMARY])

        def current(known: StoreKnown) -> list[Memory]:
            return [
                m
                for m in known.store.iterate(flt)
                if m.kind is Kind.REFLECTION or str(m.metadata.get("key")).startswith("digest:")
            ]

        return current
