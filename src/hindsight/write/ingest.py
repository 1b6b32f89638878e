"""Turns and records -> memories -> the write door.

:class:`Ingest` checks what a caller hands in (turns, one memory of a given kind,
an update, exported records), builds the memories (verbatim episodes and what the
extractor finds in them), embeds them outside any lock, and commits each write
through :class:`~hindsight.write.door.Door` with a planner that reads the store under it.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from typing import Any, Final

from hindsight import validate, views
from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.errors import (
    EmbeddingUnavailableError,
    ExtractionError,
    HindsightError,
    NotFoundError,
    ValidationError,
)
from hindsight.extract import Extracted, Extractor
from hindsight.jobs.kinds import extraction_jobs
from hindsight.models import (
    ROLE_OF_SOURCE,
    Kind,
    Memory,
    Provenance,
    RetainResult,
    Source,
    Status,
    Turn,
    new_id,
)
from hindsight.reflect import Changes, Draft, reconcile
from hindsight.store import QueuedJob
from hindsight.write.decide import Candidate, Plan, Vector, embedding_text, plan
from hindsight.write.door import Door, Once, StoreKnown, WriteContext
from hindsight.write.transfer import memory_from_dict

_log = logging.getLogger("hindsight.write.ingest")

SOURCE_OF_ROLE: Final = {
    "user": Source.USER,
    "assistant": Source.AGENT,
    "tool": Source.TOOL,
    "system": Source.SYSTEM,
}
Changer = Callable[[Memory], None]
"""Changes a memory in place (an update's new content, metadata, ...)."""
_TURN_FIELDS: Final = frozenset(
    {"role", "content", "speaker", "observed_at", "tool_name", "metadata", "source"}
)


@dataclass(frozen=True, slots=True)
class TurnReader:
    """Checks turns as callers give them (dicts or :class:`Turn`), within the settings' limits."""

    max_content_chars: int
    max_metadata_bytes: int
    max_turns: int

    def text(self, value: object, field: str = "content") -> str:
        return validate.text(value, field=field, limit=self.max_content_chars)

    def metadata(self, value: object) -> dict[str, Any]:
        return validate.metadata(value, limit=self.max_metadata_bytes)

    def turns(
        self,
        content: str | None,
        messages: Sequence[Turn | Mapping[str, Any]] | None,
        source: Source,
        when: datetime,
    ) -> list[Turn]:
        if (content is None) == (messages is None):
            raise ValidationError("give exactly one of content or messages")
        if content is not None:
            text = self.text(content)
            return [
                Turn(role=ROLE_OF_SOURCE[source], content=text, observed_at=when, source=source)
            ]
        assert messages is not None
        if not messages:
            raise ValidationError("messages is empty")
        if len(messages) > self.max_turns:
            raise ValidationError(
                f"messages holds {len(messages)} turns; the limit is {self.max_turns} a "
                "call (HINDSIGHT_MAX_TURNS_PER_WRITE): send them in several"
            )
        return [self.turn(m, i, when) for i, m in enumerate(messages)]

    def turn(self, message: Turn | Mapping[str, Any], index: int, when: datetime) -> Turn:
        where = f"messages[{index}]"
        if isinstance(message, Mapping):
            unknown = set(message) - _TURN_FIELDS
            if unknown:
                raise ValidationError(f"{where} has unknown fields: {', '.join(sorted(unknown))}")
            message = Turn(
                role=message.get("role", "user"),
                content=message.get("content"),  # type: ignore[arg-type]  # validated below
                speaker=message.get("speaker"),
                observed_at=message.get("observed_at"),
                tool_name=message.get("tool_name"),
                metadata=message.get("metadata") or {},
                source=message.get("source"),
            )
        if message.role not in SOURCE_OF_ROLE:
            raise ValidationError(
                f"{where}.role must be one of {', '.join(SOURCE_OF_ROLE)}, not {message.role!r}"
            )
        return Turn(
            role=message.role,
            content=self.text(message.content, f"{where}.content"),
            speaker=None if message.speaker is None else self.text(message.speaker, "speaker"),
            observed_at=validate.timestamp(message.observed_at, field=f"{where}.observed_at")
            or when,
            tool_name=message.tool_name,
            metadata=self.metadata(message.metadata),
            source=None
            if message.source is None
            else validate.choice(Source, message.source, field=f"{where}.source"),
        )


def _counts(recorded: Mapping[str, Any]) -> dict[str, int]:
    """An import's answer, as recorded with its key."""
    return {
        "imported": int(recorded["imported"]),
        "skipped": int(recorded["skipped"]),
        # of those imported, how many the guard holds (none in what was recorded before)
        "held": int(recorded.get("held", 0)),
    }


class Ingest:
    """Every write of the library, each through the one door."""

    def __init__(
        self,
        settings: Settings,
        *,
        embedder: Embeddings,
        extractor: Extractor,
        door: Door,
        zone: tzinfo,
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        self.extractor = extractor
        self.door = door
        self.zone = zone  # the users' days: what "yesterday" in a turn means
        self.reader = TurnReader(
            settings.max_content_chars, settings.max_metadata_bytes, settings.max_turns_per_write
        )

    # -- memories from turns -------------------------------------------------------
    def new_memory(
        self,
        owner: str,
        kind: Kind,
        content: str,
        *,
        confidence: float,
        provenance: Provenance,
        observed_at: datetime,
        now: datetime,
        metadata: dict[str, Any],
    ) -> Memory:
        return Memory(
            id=new_id(),
            owner=owner,
            kind=kind,
            content=content,
            confidence=confidence,
            provenance=provenance,
            observed_at=observed_at,
            created_at=now,
            updated_at=now,
            valid_from=observed_at,
            embedding_model=self.embedder.model_id,
            metadata=metadata,
        )

    def extract(self, turns: Sequence[Turn]) -> list[Extracted]:
        """What the extractor finds in turns, dated in the users' time zone."""
        local = [
            replace(t, observed_at=t.observed_at and t.observed_at.astimezone(self.zone))
            for t in turns
        ]
        try:
            return self.extractor.extract(local, subject="User")
        except HindsightError:
            raise
        except Exception as exc:  # a provider's own failure: typed, with its cause kept
            raise ExtractionError(f"extractor {self.extractor.name!r} failed: {exc}") from exc

    def turns(
        self,
        context: WriteContext,
        owner: str,
        turns: Sequence[Turn],
        *,
        session_id: str | None,
        metadata: Mapping[str, Any],
        once: Once | None = None,
        expires_at: datetime | None = None,
    ) -> RetainResult:
        """Keep each turn verbatim, with what the extractor finds in them (each new memory
        expiring at ``expires_at``, if given)."""
        if once is not None and (done := self.door.recorded(context, once)) is not None:
            return views.retained_from(done)  # made before: nothing to extract
        now = context.at
        episodes = [
            self.new_memory(
                owner,
                Kind.EPISODE,
                turn.content,
                confidence=1.0,
                provenance=Provenance(
                    source=turn.source or SOURCE_OF_ROLE.get(turn.role, Source.USER),
                    session_id=session_id,
                    speaker=turn.speaker,
                    input_hash=input_hash(turn.content),
                ),
                observed_at=turn.observed_at or now,
                now=now,
                metadata={
                    **metadata,
                    **turn.metadata,
                    "role": turn.role,
                    **({"tool_name": turn.tool_name} if turn.tool_name else {}),
                },
            )
            for turn in turns
        ]
        derived = [
            self._from_extracted(
                owner, item, episodes[item.turn_index], now=now, extractor=self.extractor.name
            )
            for item in self.extract(turns)
        ]
        for memory in [*episodes, *derived]:
            memory.expires_at = expires_at
        queue = None
        if self.settings.llm_configured and self.settings.llm_extract:

            def queue(written: Plan) -> list[QueuedJob]:
                roles = [e.metadata["role"] for e in episodes]
                kept = list(zip(written.result.episodes, roles, strict=True))
                return extraction_jobs(context, kept, self.settings.llm_extract_turns)

        return self._write(context, [*episodes, *derived], once, queue=queue)

    def derived(
        self,
        context: WriteContext,
        episodes: Sequence[Memory],
        items: Sequence[Extracted],
        *,
        extractor: str,
    ) -> RetainResult:
        """Write what an extractor found in stored ``episodes`` (the turns of ``items``'
        ``turn_index``), each retiring the memories it ``replaces``."""
        (owner,) = context.owners
        memories = [
            self._from_extracted(
                owner, item, episodes[item.turn_index], now=context.at, extractor=extractor
            )
            for item in items
        ]
        for memory in memories:
            memory.expires_at = episodes[0].expires_at if episodes else None
        replaces = {m.id: item.replaces for m, item in zip(memories, items, strict=True)}
        return self._write(context, memories, None, replaces=replaces)

    def _from_extracted(
        self, owner: str, item: Extracted, episode: Memory, *, now: datetime, extractor: str
    ) -> Memory:
        meta: dict[str, Any] = {"extractor": extractor}
        if item.value is not None:
            meta["value"] = item.value
        if item.polarity != 1:
            meta["polarity"] = item.polarity
        if item.tags:
            meta["tags"] = [str(t) for t in item.tags]
        if item.applies_when:
            meta["applies_when"] = item.applies_when
        if item.tool is not None:
            meta["tool"] = item.tool
        if item.detail is not None:
            meta["detail"] = item.detail
        if item.entities is not None:
            meta["entities"] = item.entities
        memory = self.new_memory(
            owner,
            item.kind,
            item.content,
            confidence=item.confidence,
            provenance=Provenance(
                source=episode.provenance.source,
                session_id=episode.provenance.session_id,
                speaker=episode.provenance.speaker,
                derived_from=[episode.id],
                input_hash=episode.provenance.input_hash,
            ),
            observed_at=episode.observed_at,
            now=now,
            metadata=meta,
        )
        memory.query_hints = list(item.query_hints)
        memory.attribute = item.attribute
        return memory

    # -- the writes --------------------------------------------------------------------
    def memories(
        self, context: WriteContext, memories: Sequence[Memory], *, once: Once | None = None
    ) -> RetainResult:
        """Write new memories: deduplicated, merged or superseding what is known."""
        if once is not None and (done := self.door.recorded(context, once)) is not None:
            return views.retained_from(done)  # made before: nothing to embed
        return self._write(context, memories, once)

    def _vectors(self, memories: Sequence[Memory]) -> list[Vector | None]:
        """The memories' vectors; all None while the embedding endpoint is down (the
        write goes on, and the door queues a job that makes them)."""
        try:
            return list(self.embedder.encode_documents([embedding_text(m) for m in memories]))
        except EmbeddingUnavailableError as exc:
            _log.warning("writing without vectors, queued for later: %s", exc)
            return [None] * len(memories)

    def _write(
        self,
        context: WriteContext,
        memories: Sequence[Memory],
        once: Once | None,
        *,
        queue: Callable[[Plan], list[QueuedJob]] | None = None,
        replaces: Mapping[str, tuple[str, ...]] | None = None,
    ) -> RetainResult:
        """Embed and commit ``memories``; ``queue`` names the jobs the write queues (in
        its transaction), from its plan."""
        vectors = self._vectors(memories)
        retires = replaces or {}
        candidates = [
            Candidate(m, v, retires.get(m.id, ())) for m, v in zip(memories, vectors, strict=True)
        ]
        threshold = self.settings.dedupe_similarity

        def planner(known: StoreKnown) -> Plan:
            out = plan(known, candidates, dedupe_similarity=threshold, now=context.at)
            if queue is not None:
                out.jobs = queue(out)
            return out

        written = self.door.commit(context, planner, once=once)
        if written.replayed is not None:
            return views.retained_from(written.replayed)
        return written.result

    def update(
        self,
        context: WriteContext,
        memory_id: str,
        change: Changer,
        *,
        detail: Callable[[], dict[str, Any]] | None = None,
    ) -> Memory:
        """Change a stored memory in place, read and written under the owner's lock;
        ``detail`` is what the audit entry records of the change (see :meth:`Door.commit`).

        New words are the editor's (``provenance.principal``), and the door has the
        checkpoints judge them as a new write of them; so they judge a memory back from
        the archive afresh."""
        changed: list[Memory] = []

        def planner(known: StoreKnown) -> Plan:
            found = known.store.get([memory_id])
            if not found or found[0].owner not in context.owners:
                raise NotFoundError(f"no memory with id {memory_id!r}")
            memory = found[0]
            before, was = embedding_text(memory), memory.status
            change(memory)
            memory.updated_at = context.at
            out = Plan(updates={memory.id: (memory, None)})
            if embedding_text(memory) != before:
                memory.provenance.principal = context.principal.name
                out.needs_vector.add(memory.id)
            elif was is Status.ARCHIVED and memory.status is Status.ACTIVE:
                out.needs_vector.add(memory.id)  # restored: the world may have changed
            changed.append(memory)
            return out

        self.door.commit(context, planner, detail=detail)
        return changed[0]

    def records(
        self,
        context: WriteContext,
        records: Iterable[Mapping[str, Any]],
        *,
        request_id: str | None = None,
    ) -> dict[str, int]:
        """Load exported records, each checked (and its owner's write access) before any is
        written; ids the owner already holds are skipped."""
        records = list(records)
        for line, record in enumerate(records, start=1):  # whose, before what
            try:
                if not isinstance(record, Mapping):
                    raise ValidationError("a record must be a JSON object")
                owner = validate.owner(record.get("owner"))
            except ValidationError as exc:
                raise ValidationError(f"record {line}: {exc}") from None
            context.principal.check_write(owner)
        memories: list[Memory] = []
        first: dict[str, int] = {}
        for line, record in enumerate(records, start=1):
            try:
                memory = memory_from_dict(record, limit=self.settings.max_content_chars)
            except ValidationError as exc:
                raise ValidationError(f"record {line}: {exc}") from None
            if memory.id in first:
                raise ValidationError(
                    f"record {line}: repeats id {memory.id!r} of record {first[memory.id]}"
                )
            first[memory.id] = line
            memory.embedding_model = self.embedder.model_id
            _as_imported(memory)
            memories.append(memory)
        context = replace(context, owners=tuple(sorted({m.owner for m in memories})))

        def imported(plan: Plan) -> dict[str, Any]:
            return {
                "imported": len(plan.inserts),
                "skipped": len(memories) - len(plan.inserts),
                "held": len(plan.result.held),
            }

        once = Once.of(request_id, records, imported)
        if once is not None and (done := self.door.recorded(context, once)) is not None:
            return _counts(done)  # made before: nothing to embed
        pairs = list(zip(memories, self._vectors(memories), strict=True))

        def planner(known: StoreKnown) -> Plan:
            owner_of = {m.id: m.owner for m in known.store.get([m.id for m in memories])}
            renamed = _rename_foreign_ids(memories, owner_of)
            held = {mid for mid in owner_of if mid not in renamed}  # the owner's own
            held |= {m.id for m in known.store.get(list(renamed.values()))}  # imported before
            out = Plan(inserts=[(m, v) for m, v in pairs if m.id not in held])
            out.result.created = [m.id for m, _ in out.inserts]
            return out

        written = self.door.commit(context, planner, once=once)
        return _counts(written.replayed or imported(written))

    def drafts(
        self,
        context: WriteContext,
        drafts: Sequence[Draft],
        existing: Callable[[StoreKnown], Iterable[Memory]],
        *,
        jobs: Sequence[QueuedJob] = (),
    ) -> Changes:
        """Write summaries or reflections: what changed between the drafts and the stored
        memories of their keys (read under the lock), as :func:`reconcile` decides; queue
        ``jobs`` in the same transaction."""
        (owner,) = context.owners
        decided: list[Changes] = []

        def planner(known: StoreKnown) -> Plan:
            changes = reconcile(
                drafts,
                existing(known),
                owner=owner,
                embedding_model=self.embedder.model_id,
                now=context.at,
            )
            decided.append(changes)
            out = Plan(
                inserts=[(m, None) for m in changes.insert],
                updates={m.id: (m, None) for m in [*changes.rewrite, *changes.retire]},
            )
            out.needs_vector.update(m.id for m in changes.rewrite)
            out.result.created = [m.id for m in changes.insert]
            out.result.updated = [m.id for m in changes.rewrite]
            out.jobs = list(jobs)
            return out

        self.door.commit(context, planner)
        return decided[0]


def _as_imported(memory: Memory) -> None:
    """An imported record is a new write by the importer: the guard reads it here (or
    recall does, with the guard off), and no approval comes with it, since the importer
    is its writer and a writer does not approve what it writes (a rejection stands)."""
    memory.screened = False
    review = memory.review
    if review is not None and review.decision == "approved":
        review.decision = review.decided_by = review.decided_at = None


def _rename_foreign_ids(memories: Sequence[Memory], held: Mapping[str, str]) -> dict[str, str]:
    """Give each record whose id another owner holds an id of its own, derived from its
    owner and the id it came with, and follow the rename in the batch's links. The
    record imports as one with an unknown id would, and the same import again is
    skipped as it would be, so the answer tells nothing about other owners' ids.
    Returns the renames (old id -> new)."""
    renamed = {
        m.id: _owned_id(m.owner, m.id) for m in memories if held.get(m.id, m.owner) != m.owner
    }
    for m in memories if renamed else ():
        m.id = renamed.get(m.id, m.id)
        m.provenance.derived_from = [renamed.get(x, x) for x in m.provenance.derived_from]
        if m.superseded_by is not None:
            m.superseded_by = renamed.get(m.superseded_by, m.superseded_by)
    return renamed


def _owned_id(owner: str, memory_id: str) -> str:
    digest = hashlib.sha256(f"{owner}\0{memory_id}".encode()).hexdigest()
    return f"m_{digest[:28]}"


def input_hash(text: str) -> str:
    """The hash a memory keeps of the raw text it was made from (its provenance)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
