"""The embedded engine: the library API every interface (CLI, REST, MCP) calls.

``Hindsight`` ties the store, the embedder and the extractor together. Each
public method validates its input first, so bad input changes nothing, and
each write lands in one store transaction.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from hindsight import validate
from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.embed import registry as embedders
from hindsight.errors import NotFoundError, ValidationError
from hindsight.extract import EXTRACTABLE_KINDS, Extracted, Extractor
from hindsight.extract import registry as extractors
from hindsight.models import (
    ROLE_OF_SOURCE,
    ChannelHit,
    ForgetReceipt,
    Kind,
    Memory,
    Provenance,
    RecallResult,
    RetainResult,
    Source,
    Status,
    Turn,
    estimate_tokens,
    new_id,
)
from hindsight.recall import (
    Rerank,
    fuse_channels,
    is_question,
    lift_replies,
    pack,
    rank_channels,
    score,
)
from hindsight.reflect import Changes, Draft, reconcile, reflect_on, summarize_session
from hindsight.store import (
    Filter,
    Store,
    StoreStats,
    WorkingMemory,
    WorkingTurn,
    open_store,
    open_working,
)
from hindsight.timewords import asked_period
from hindsight.transfer import memory_from_dict, memory_to_dict
from hindsight.write import Candidate, embedding_text, plan

MAX_K: Final = 1_000
# Recall reads whole only this many of the best fused candidates (at least 5 k).
HYDRATE_DEPTH: Final = 50
_SOURCE_OF_ROLE: Final = {
    "user": Source.USER,
    "assistant": Source.AGENT,
    "tool": Source.TOOL,
    "system": Source.SYSTEM,
}
# Extractions that should reach long-term memory at once, not at the next threshold.
_EVENT_TAGS: Final = frozenset({"correction", "tool_failure"})


class _Unset:
    """Marks an argument that was not given, where None is a meaningful value."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


class Hindsight:
    """Long-term and working memory for agents, embedded in the calling process.

    >>> hs = Hindsight()                                        # doctest: +SKIP
    >>> hs.retain("user:alice", "I live in Paris and I love jazz.")  # doctest: +SKIP
    >>> hs.recall("user:alice", "where does she live?")          # doctest: +SKIP
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        embedder: Embeddings | None = None,
        extractor: Extractor | None = None,
        store: Store | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.embedder = embedder or embedders.create(self.settings.embedding_provider)
        self.extractor = extractor or extractors.create(self.settings.extractor)
        self.store = store or open_store(self.settings)
        try:
            self.store.bind_embedding(self.embedder.model_id, self.embedder.dimension)
            self.working: WorkingMemory = open_working(self.settings, self.store)
        except BaseException:
            self.store.close()
            raise
        self._rerank = Rerank(half_life_days=self.settings.recency_half_life_days)
        self._zone = validate.time_zone(self.settings.timezone)  # the users' days
        self._access: dict[str, int] = {}
        self._access_lock = threading.Lock()
        self._access_flushed = time.monotonic()

    # -- lifecycle ---------------------------------------------------------------
    def close(self) -> None:
        try:
            self._flush_access(force=True)
            if self.working is not self.store:
                self.working.close()
        finally:
            self.store.close()

    def __enter__(self) -> Hindsight:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- write path ----------------------------------------------------------------
    def retain(
        self,
        owner: str,
        content: str | None = None,
        *,
        messages: Sequence[Turn | Mapping[str, Any]] | None = None,
        kind: Kind | str | None = None,
        session_id: str | None = None,
        source: Source | str = Source.USER,
        observed_at: datetime | str | None = None,
        confidence: float | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> RetainResult:
        """Remember a message, a conversation, or (with ``kind``) one memory as given.

        Without ``kind``, every turn is kept verbatim as an ``episode`` and the
        extractor distils preferences, facts, corrections and tool results from it.
        With ``kind``, ``content`` is stored as that kind directly.
        """
        owner = validate.owner(owner)
        session_id = validate.session_id(session_id)
        src = validate.choice(Source, source, field="source")
        when = validate.timestamp(observed_at, field="observed_at")
        meta = validate.metadata(metadata, limit=self.settings.max_metadata_bytes)
        now = datetime.now(UTC)
        if kind is not None:
            if messages is not None:
                raise ValidationError("give either messages or kind with content, not both")
            memory = self._new_memory(
                owner,
                validate.choice(Kind, kind, field="kind"),
                self._text(content),
                confidence=validate.confidence(1.0 if confidence is None else confidence),
                provenance=Provenance(source=src, session_id=session_id),
                observed_at=when or now,
                now=now,
                metadata=meta,
            )
            return self._write([memory], now=now)
        turns = self._turns(content, messages, src, when or now)
        return self._retain_turns(owner, turns, session_id=session_id, now=now, metadata=meta)

    def _retain_turns(
        self,
        owner: str,
        turns: Sequence[Turn],
        *,
        session_id: str | None,
        now: datetime,
        metadata: dict[str, Any],
    ) -> RetainResult:
        episodes = [
            self._new_memory(
                owner,
                Kind.EPISODE,
                turn.content,
                confidence=1.0,
                provenance=Provenance(
                    source=_SOURCE_OF_ROLE.get(turn.role, Source.USER),
                    session_id=session_id,
                    speaker=turn.speaker,
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
        # "yesterday" in a turn is a day of the users' time zone, not of UTC
        local = [
            replace(t, observed_at=t.observed_at and t.observed_at.astimezone(self._zone))
            for t in turns
        ]
        derived = [
            self._from_extracted(owner, item, episodes[item.turn_index], now=now)
            for item in self.extractor.extract(local, subject="User")
        ]
        return self._write([*episodes, *derived], now=now)

    def _from_extracted(
        self, owner: str, item: Extracted, episode: Memory, *, now: datetime
    ) -> Memory:
        meta: dict[str, Any] = {"extractor": self.extractor.name}
        if item.value is not None:
            meta["value"] = item.value
        if item.polarity != 1:
            meta["polarity"] = item.polarity
        if item.tags:
            meta["tags"] = list(item.tags)
        if item.applies_when:
            meta["applies_when"] = item.applies_when
        memory = self._new_memory(
            owner,
            item.kind,
            item.content,
            confidence=item.confidence,
            provenance=Provenance(
                source=episode.provenance.source,
                session_id=episode.provenance.session_id,
                speaker=episode.provenance.speaker,
                derived_from=[episode.id],
            ),
            observed_at=episode.observed_at,
            now=now,
            metadata=meta,
        )
        memory.query_hints = list(item.query_hints)
        memory.attribute = item.attribute
        return memory

    def _write(self, memories: Sequence[Memory], *, now: datetime) -> RetainResult:
        vectors = self.embedder.encode_documents([embedding_text(m) for m in memories])
        candidates = [Candidate(m, v) for m, v in zip(memories, vectors, strict=True)]
        changes = plan(
            self.store, candidates, dedupe_similarity=self.settings.dedupe_similarity, now=now
        )
        self.store.write(insert=changes.inserts, update=list(changes.updates.values()))
        return changes.result

    def _new_memory(
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

    def _text(self, value: object, field: str = "content") -> str:
        return validate.text(value, field=field, limit=self.settings.max_content_chars)

    def _turns(
        self,
        content: str | None,
        messages: Sequence[Turn | Mapping[str, Any]] | None,
        source: Source,
        when: datetime,
    ) -> list[Turn]:
        if (content is None) == (messages is None):
            raise ValidationError("give exactly one of content or messages")
        if content is not None:
            return [
                Turn(role=ROLE_OF_SOURCE[source], content=self._text(content), observed_at=when)
            ]
        assert messages is not None
        if not messages:
            raise ValidationError("messages is empty")
        return [self._turn(m, i, when) for i, m in enumerate(messages)]

    def _turn(self, message: Turn | Mapping[str, Any], index: int, when: datetime) -> Turn:
        where = f"messages[{index}]"
        if isinstance(message, Mapping):
            unknown = set(message) - {
                "role",
                "content",
                "speaker",
                "observed_at",
                "tool_name",
                "metadata",
            }
            if unknown:
                raise ValidationError(f"{where} has unknown fields: {', '.join(sorted(unknown))}")
            message = Turn(
                role=message.get("role", "user"),
                content=message.get("content"),  # type: ignore[arg-type]  # validated below
                speaker=message.get("speaker"),
                observed_at=message.get("observed_at"),
                tool_name=message.get("tool_name"),
                metadata=message.get("metadata") or {},
            )
        if message.role not in _SOURCE_OF_ROLE:
            raise ValidationError(
                f"{where}.role must be one of {', '.join(_SOURCE_OF_ROLE)}, not {message.role!r}"
            )
        return Turn(
            role=message.role,
            content=self._text(message.content, f"{where}.content"),
            speaker=None if message.speaker is None else self._text(message.speaker, "speaker"),
            observed_at=validate.timestamp(message.observed_at, field=f"{where}.observed_at")
            or when,
            tool_name=message.tool_name,
            metadata=validate.metadata(message.metadata, limit=self.settings.max_metadata_bytes),
        )

    # -- read path -----------------------------------------------------------------
    def recall(
        self,
        owners: str | Sequence[str] | Mapping[str, float],
        query: str,
        *,
        k: int = 10,
        kinds: Sequence[Kind | str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        min_confidence: float | None = None,
        token_budget: int | None = None,
        include_history: bool = False,
        timezone: str | None = None,
    ) -> list[RecallResult]:
        """The memories that best answer ``query``, each with why it came back.

        ``owners`` may weigh namespaces, e.g. ``{"user:alice": 1.0, "shared:team": 0.5}``.
        ``timezone`` (an IANA name such as "America/New_York", or an offset such as
        "-05:00") is the asker's: the days that "yesterday" or "on 8 May" in the query
        mean; by default ``settings.timezone``.
        """
        weights = self._owner_weights(owners)
        query = self._text(query, "query")
        k = validate.positive(k, field="k", maximum=MAX_K)
        if token_budget is not None:
            token_budget = validate.positive(token_budget, field="token_budget", maximum=10**7)
        flt = Filter(
            owners=list(weights),
            kinds=[validate.choice(Kind, x, field="kind") for x in kinds] if kinds else None,
            since=validate.timestamp(since, field="since"),
            until=validate.timestamp(until, field="until"),
            min_confidence=None
            if min_confidence is None
            else validate.confidence(min_confidence, field="min_confidence"),
            current_only=not include_history,
        )
        zone = self._zone if timezone is None else validate.time_zone(timezone)
        n = max(self.settings.candidates, k * 2)
        vector = self.embedder.encode_query(query)
        now = datetime.now(UTC)
        period = asked_period(query, now, zone)
        channels = {
            "dense": self.store.vector_search(flt, vector, n),
            "bm25": self.store.keyword_search(flt, query, n),
        }
        ranked = rank_channels(channels)
        fused = fuse_channels(ranked, fusion=self.settings.fusion, rrf_k=self.settings.rrf_k)
        # Only the best fused candidates are read whole (reading them was most of a
        # recall's time): the boosts after fusion seldom carry one from beyond into the top k.
        depth = sorted(fused, key=lambda mid: (-fused[mid], mid))[: max(HYDRATE_DEPTH, 5 * k)]
        found = {m.id: m for m in self.store.get(depth)}
        best = [found[mid] for mid in depth[: 2 * k] if mid in found]
        ranked["reply"] = self._lift_replies(fused, found, best, flt)
        scored = score(
            found,
            ranked,
            fused,
            owner_weights=weights,
            now=now,
            rerank=self._rerank,
            period=period,
        )
        results = pack(scored, k=k, token_budget=token_budget)
        self._note_access([r.memory.id for r in results])
        return results

    def _lift_replies(
        self, fused: dict[str, float], found: dict[str, Memory], best: list[Memory], flt: Filter
    ) -> dict[str, ChannelHit]:
        """Lift the turns that answer the questions among the ``best`` candidates.

        A question asked right after a top statement follows it up, and its answer
        says more about the same thing ("I finished my first screenplay!" - "What
        genre is it?" - "A mix of drama and romance."): that answer is lifted too, for
        what the statement scored.
        """
        weights = self._rerank.source_weights
        # question id -> what its answer is worth: its own (or its statement's) fused
        # score, times the trust in who asked (an agent's question counts as its other words)
        asked = {
            m.id: fused[m.id] * weights.get(m.provenance.source, 1.0)
            for m in best
            if is_question(m)
        }
        statements = [m.id for m in best if m.kind is Kind.EPISODE and not is_question(m)]
        for statement, follow_up in self.store.next_turns(statements, flt).items():
            if is_question(follow_up):
                worth = fused[statement] * weights.get(follow_up.provenance.source, 1.0)
                asked[follow_up.id] = max(asked.get(follow_up.id, 0.0), worth)
        if not asked:
            return {}
        replies = {
            question: reply
            for question, reply in self.store.next_turns(list(asked), flt).items()
            if reply.provenance.source is not Source.AGENT  # second-hand: not lifted
        }
        found.update((reply.id, reply) for reply in replies.values())
        return lift_replies(fused, {q: reply.id for q, reply in replies.items()}, asked)

    def _owner_weights(self, owners: str | Sequence[str] | Mapping[str, float]) -> dict[str, float]:
        if isinstance(owners, str):
            return {validate.owner(owners): 1.0}
        if isinstance(owners, Mapping):
            weights = {}
            for name, weight in owners.items():
                if (
                    isinstance(weight, bool)
                    or not isinstance(weight, int | float)
                    or not math.isfinite(weight)
                    or weight <= 0
                ):
                    raise ValidationError(f"weight of owner {name!r} must be a positive number")
                weights[validate.owner(name)] = float(weight)
        else:
            weights = {validate.owner(name): 1.0 for name in owners}
        if not weights:
            raise ValidationError("give at least one owner")
        return weights

    def _note_access(self, ids: Iterable[str]) -> None:
        """Count recalls in memory; write them in batches off the hot path."""
        with self._access_lock:
            for mid in ids:
                self._access[mid] = self._access.get(mid, 0) + 1
        self._flush_access()

    def _flush_access(self, *, force: bool = False) -> None:
        with self._access_lock:
            due = len(self._access) >= 256 or time.monotonic() - self._access_flushed > 5.0
            if not self._access or not (force or due):
                return
            pending, self._access = self._access, {}
            self._access_flushed = time.monotonic()
        self.store.record_access(pending, datetime.now(UTC))

    def get(self, memory_id: str) -> Memory:
        """One memory by id."""
        found = self.store.get([memory_id]) if isinstance(memory_id, str) else []
        if not found:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return found[0]

    def list_memories(
        self,
        owner: str,
        *,
        kinds: Sequence[Kind | str] | None = None,
        session_id: str | None = None,
        include_history: bool = False,
        status: Status | str = Status.ACTIVE,
        limit: int = 50,
        offset: int = 0,
    ) -> list[Memory]:
        """An owner's memories, newest observed first, a page at a time."""
        flt = Filter(
            owners=[validate.owner(owner)],
            kinds=[validate.choice(Kind, x, field="kind") for x in kinds] if kinds else None,
            session_id=validate.session_id(session_id),
            statuses=(validate.choice(Status, status, field="status"),),
            current_only=not include_history,
        )
        limit = validate.positive(limit, field="limit", maximum=MAX_K)
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < 2**62:
            raise ValidationError("offset must be an integer from 0 to 2**62 - 1")
        return self.store.list_memories(flt, limit=limit, offset=offset)

    def stats(self, owner: str | None = None) -> StoreStats:
        owner = None if owner is None else validate.owner(owner)
        stats = self.store.stats(owner)
        if self.working is not self.store:
            stats.working_turns = self.working.wm_count(owner)
        return stats

    # -- update and forget -----------------------------------------------------------
    def update(
        self,
        memory_id: str,
        *,
        content: str | _Unset = UNSET,
        metadata: Mapping[str, Any] | _Unset = UNSET,
        confidence: float | _Unset = UNSET,
        query_hints: Sequence[str] | _Unset = UNSET,
        status: Status | str | _Unset = UNSET,
    ) -> Memory:
        """Change a memory in place; new content is re-embedded."""
        memory = self.get(memory_id)
        vector = None
        if not isinstance(content, _Unset):
            memory.content = self._text(content)
            vector = self.embedder.encode_documents([embedding_text(memory)])[0]
        if not isinstance(metadata, _Unset):
            memory.metadata = validate.metadata(metadata, limit=self.settings.max_metadata_bytes)
        if not isinstance(confidence, _Unset):
            memory.confidence = validate.confidence(confidence)
        if not isinstance(query_hints, _Unset):
            if isinstance(query_hints, str):
                raise ValidationError("query_hints must be a list of strings")
            memory.query_hints = [self._text(h, "query hint") for h in query_hints]
        if not isinstance(status, _Unset):
            memory.status = validate.choice(Status, status, field="status")
        memory.updated_at = datetime.now(UTC)
        self.store.write(update=[(memory, vector)])
        return memory

    def forget(
        self,
        memory_id: str | None = None,
        *,
        owner: str | None = None,
        session_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
    ) -> ForgetReceipt:
        """Delete one memory, or an owner's memories (optionally of one session or period).

        With ``memory_id``, ``owner`` (if given) must own it. What was derived only
        from deleted memories goes too, and so does any summary or reflection that
        drew on one of them; the receipt lists it all.
        """
        criteria: dict[str, Any]
        if memory_id is not None:
            if session_id is not None or since or until:
                raise ValidationError("give a memory id, or an owner with filters, not both")
            memory = self.get(memory_id)
            if owner is not None and memory.owner != validate.owner(owner):
                # the same answer as for an unknown id: do not reveal whose it is
                raise NotFoundError(f"no memory with id {memory_id!r} belongs to {owner}")
            owner, ids = memory.owner, [memory.id]
            criteria = {"id": memory_id}
        else:
            if owner is None:
                raise ValidationError("give a memory id or an owner")
            flt = Filter(
                owners=[validate.owner(owner)],
                session_id=validate.session_id(session_id),
                since=validate.timestamp(since, field="since"),
                until=validate.timestamp(until, field="until"),
                statuses=tuple(Status),
                current_only=False,
            )
            ids = [m.id for m in self.store.iterate(flt)]
            criteria = {
                "owner": owner,
                "session_id": session_id,
                "since": flt.since,
                "until": flt.until,
            }
            if since is None and until is None:
                self._clear_working(owner, session_id)
        # a summary or lesson that quotes a forgotten memory goes with it
        derived = self.store.derived_closure(ids, quoting=(Kind.SUMMARY, Kind.REFLECTION))
        at = datetime.now(UTC)
        receipt_id = new_id("r")
        receipt = {
            "id": receipt_id,
            "at": at,
            "owner": owner,
            "criteria": criteria,
            "deleted_ids": ids,
            "derived_ids": derived,
        }
        self.store.delete([*ids, *derived], receipt=receipt)
        return ForgetReceipt(
            id=receipt_id, deleted_ids=ids, derived_ids=derived, at=at, criteria=criteria
        )

    def _clear_working(self, owner: str, session_id: str | None) -> None:
        sessions = [session_id] if session_id else [s for s, _, _ in self.sessions(owner)]
        for sid in sessions:
            self.working.wm_clear(owner, sid)

    # -- export and import -------------------------------------------------------------
    def export(self, owner: str, *, include_history: bool = True) -> Iterator[dict[str, Any]]:
        """Every memory of ``owner`` as a JSON-ready dict, oldest first (no vectors)."""
        flt = Filter(
            owners=[validate.owner(owner)], statuses=tuple(Status), current_only=not include_history
        )
        for memory in self.store.iterate(flt):
            yield memory_to_dict(memory)

    def import_records(self, records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
        """Load exported dicts, re-embedding them; known ids are skipped.

        Every record is checked before anything is written, so a bad line imports nothing.
        """
        memories = []
        for line, record in enumerate(records, start=1):
            try:
                memory = memory_from_dict(record, limit=self.settings.max_content_chars)
            except ValidationError as exc:
                raise ValidationError(f"record {line}: {exc}") from None
            memory.embedding_model = self.embedder.model_id
            memories.append(memory)
        first: dict[str, int] = {}
        for line, memory in enumerate(memories, start=1):
            if memory.id in first:
                raise ValidationError(
                    f"record {line}: repeats id {memory.id!r} of record {first[memory.id]}"
                )
            first[memory.id] = line
        known = {m.id for m in self.store.get([m.id for m in memories])}
        fresh = [m for m in memories if m.id not in known]
        vectors = self.embedder.encode_documents([embedding_text(m) for m in fresh])
        self.store.write(insert=list(zip(fresh, vectors, strict=True)))
        return {"imported": len(fresh), "skipped": len(memories) - len(fresh)}

    # -- working memory --------------------------------------------------------------
    def observe(
        self,
        owner: str,
        session_id: str,
        content: str,
        *,
        role: str = "user",
        speaker: str | None = None,
        tool_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> RetainResult | None:
        """Add a turn to a session's working memory.

        The window moves to long-term memory when it passes the turn or token
        threshold, or at once when the turn states a correction or a tool failure.
        Returns what was retained then, else ``None``.
        """
        owner = validate.owner(owner)
        sid = validate.session_id(session_id)
        if sid is None:
            raise ValidationError("session_id is required for working memory")
        turn = self._turn(
            {
                "role": role,
                "content": content,
                "speaker": speaker,
                "tool_name": tool_name,
                "metadata": dict(metadata or {}),
            },
            0,
            datetime.now(UTC),
        )
        now = datetime.now(UTC)
        self.working.wm_append(
            WorkingTurn(
                seq=0,
                owner=owner,
                session_id=sid,
                role=turn.role,
                content=turn.content,
                tokens=estimate_tokens(turn.content),
                created_at=now,
                expires_at=now + timedelta(seconds=self.settings.wm_ttl_seconds),
                speaker=turn.speaker,
                tool_name=turn.tool_name,
                metadata=turn.metadata,
            )
        )
        window = self.working.wm_window(owner, sid, now)
        full = (
            len(window) >= self.settings.wm_max_turns
            or sum(t.tokens for t in window) >= self.settings.wm_max_tokens
        )
        event = any(
            _EVENT_TAGS & set(e.tags) for e in self.extractor.extract([turn], subject="User")
        )
        return self.consolidate(owner, sid) if full or event else None

    def sessions(self, owner: str) -> list[tuple[str, int, int]]:
        """An owner's open sessions as (session id, turns, estimated tokens), latest first."""
        return self.working.wm_sessions(validate.owner(owner), datetime.now(UTC))

    def window(self, owner: str, session_id: str) -> list[WorkingTurn]:
        """A session's working memory, oldest first."""
        sid = validate.session_id(session_id)
        assert sid is not None
        return self.working.wm_window(validate.owner(owner), sid, datetime.now(UTC))

    def consolidate(self, owner: str, session_id: str) -> RetainResult:
        """Move a session's working memory into long-term memory and clear the window."""
        window = self.window(owner, session_id)
        if not window:
            return RetainResult()
        turns = [
            Turn(
                role=t.role,
                content=t.content,
                speaker=t.speaker,
                observed_at=t.created_at,
                tool_name=t.tool_name,
                metadata=t.metadata,
            )
            for t in window
        ]
        result = self._retain_turns(
            owner, turns, session_id=session_id, now=datetime.now(UTC), metadata={}
        )
        self.working.wm_clear(owner, session_id, up_to_seq=window[-1].seq)
        return result

    def close_session(self, owner: str, session_id: str) -> RetainResult:
        """End a session: consolidate what is left of its window."""
        return self.consolidate(owner, session_id)

    def purge_expired(self) -> int:
        """Drop working-memory turns past their TTL; returns how many."""
        return self.working.wm_purge_expired(datetime.now(UTC))

    # -- summaries and reflections ------------------------------------------------------
    def summarize(self, owner: str, session_id: str) -> Memory:
        """Summarize a session into one ``summary`` memory and return it.

        The session's working memory is consolidated first, so no turn is lost. The
        summary names who took part and when, and lists the key points the extractor
        found and the most telling turns, in at most ``reflect.MAX_SUMMARY_CHARS``
        characters. It derives from the session's turns, so forgetting them forgets
        it. Summarizing again with nothing new returns the stored summary and writes
        nothing; after new turns, a new summary supersedes it.
        """
        owner = validate.owner(owner)
        sid = validate.session_id(session_id)
        if sid is None:
            raise ValidationError("session_id is required to summarize a session")
        self.consolidate(owner, sid)
        turns = Filter(owners=[owner], kinds=[Kind.EPISODE], session_id=sid)
        episodes = list(self.store.iterate(turns))
        if not episodes:
            raise NotFoundError(f"session {sid!r} of {owner} has no turns to summarize")
        stored = Filter(
            owners=[owner], kinds=sorted(EXTRACTABLE_KINDS), session_id=sid, current_only=False
        )
        related = [*self.store.children([e.id for e in episodes]), *self.store.iterate(stored)]
        draft = summarize_session(sid, episodes, related)
        existing = self.store.iterate(Filter(owners=[owner], kinds=[Kind.SUMMARY], session_id=sid))
        return self._reconcile(owner, [draft], existing).current[0]

    def reflect(
        self,
        owner: str,
        *,
        session_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
    ) -> list[Memory]:
        """Distil lasting lessons from an owner's memories into ``reflection`` memories.

        Looks at all of them, one session (its working memory consolidated first), or
        those observed in ``since``..``until``: a tool that failed repeatedly, a
        correction the user made, an attribute whose value changed, a preference
        stated again and again. Each lesson derives from its evidence and has a stable
        ``metadata["key"]``: rerunning on the same evidence writes nothing, new
        evidence updates or supersedes the lesson. Returns the reflections this run
        created or changed.
        """
        owner = validate.owner(owner)
        sid = validate.session_id(session_id)
        start = validate.timestamp(since, field="since")
        end = validate.timestamp(until, field="until")
        if start is not None and end is not None and start > end:
            raise ValidationError(f"since ({start.isoformat()}) is after until ({end.isoformat()})")
        if sid is not None:
            self.consolidate(owner, sid)
        flt = Filter(owners=[owner], session_id=sid, since=start, until=end, current_only=False)
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
        return self._reconcile(owner, drafts, existing).changed

    def _reconcile(
        self, owner: str, drafts: Sequence[Draft], existing: Iterable[Memory]
    ) -> Changes:
        """Write what changed between drafts and the stored memories, in one transaction."""
        changes = reconcile(
            drafts,
            existing,
            owner=owner,
            embedding_model=self.embedder.model_id,
            now=datetime.now(UTC),
        )
        if changes.changed:
            vectors = self.embedder.encode_documents([embedding_text(m) for m in changes.changed])
            inserts, updates = changes.rows(list(vectors))
            self.store.write(insert=inserts, update=updates)
        return changes
