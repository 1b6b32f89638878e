"""The operations on long-term memory: write, recall, read (one memory, a page, the owners,
the counts, what lies ahead, the entities named), correct, forget, feedback, history, pin
and restore, and loading exported records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from enum import Enum
from typing import Any, Unpack

from hindsight import errors, views
from hindsight.client.wire import (
    _Call,
    entity_path,
    iso,
    memory_path,
    once,
    read_memories,
    read_memory,
)
from hindsight.engine import UNSET, _Unset
from hindsight.entities import Entity
from hindsight.foresight import Item
from hindsight.lifecycle.history import History
from hindsight.models import (
    ForgetReceipt,
    Kind,
    Memory,
    RecallResult,
    RetainResult,
    Source,
    Status,
    Turn,
)
from hindsight.recall.request import Owners, RecallOptions, RecallRequest, request_of
from hindsight.store import StoreStats


def _recalled(data: Any) -> list[RecallResult]:
    return [views.recall_hit_from(hit) for hit in data["results"]]


def _value(x: Any) -> Any:
    return x.value if isinstance(x, Enum) else x


class MemoryOps:
    """Each operation on long-term memory: the library's signature in, its HTTP request and
    reader out."""

    @staticmethod
    def retain(
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
        request_id: str | None = None,
        expires_at: datetime | str | None = None,
    ) -> _Call[RetainResult]:
        """Remember a message, a conversation, or (with ``kind``) one memory as given.

        The request carries ``request_id`` (by default a new one), so the client may send
        it again after a timeout or a dropped connection without storing it twice."""
        body = {
            "owner": owner,
            "content": content,
            "messages": None if messages is None else list(messages),
            "kind": _value(kind),
            "session_id": session_id,
            "source": _value(source),
            "observed_at": observed_at,
            "confidence": confidence,
            "metadata": metadata,
            **({} if expires_at is None else {"expires_at": expires_at}),
        }
        return _Call(
            "POST", "/v1/memories", views.retained_from, body=body, headers=once(request_id)
        )

    @staticmethod
    def recall(
        owners: Owners | RecallRequest,
        query: str | None = None,
        **options: Unpack[RecallOptions],
    ) -> _Call[list[RecallResult]]:
        """The memories that best answer ``query``, each with why it came back; or those
        of one :class:`~hindsight.recall.request.RecallRequest` given alone."""
        request = request_of(owners, query, options)
        return _Call("POST", "/v1/recall", _recalled, body=request.to_json())

    @staticmethod
    def get(memory_id: str) -> _Call[Memory]:
        """One memory by id."""
        return _Call("GET", memory_path(memory_id), read_memory)

    @staticmethod
    def list_memories(
        owner: str,
        *,
        kinds: Sequence[Kind | str] | None = None,
        session_id: str | None = None,
        include_history: bool = False,
        status: Status | str = Status.ACTIVE,
        limit: int = 50,
        offset: int = 0,
    ) -> _Call[list[Memory]]:
        """An owner's memories, newest observed first, a page at a time."""
        params = {
            "owner": owner,
            "kind": None if kinds is None else [_value(x) for x in kinds],
            "session_id": session_id,
            "include_history": include_history,
            "status": _value(status),
            "limit": limit,
            "offset": offset,
        }
        return _Call("GET", "/v1/memories", read_memories("memories"), params=params)

    @staticmethod
    def foresee(owner: str, now: datetime | str | None = None, days: int = 14) -> _Call[list[Item]]:
        """What lies ahead for ``owner``: open events, commitments, routines and goals due
        from ``now``'s day to ``days`` days ahead, then the undated ones; soonest first."""

        def read(data: Any) -> list[Item]:
            return [views.foresight_item_from(item) for item in data["items"]]

        params = {"owner": owner, "now": iso(now), "days": days}
        return _Call("GET", "/v1/foresight", read, params=params)

    @staticmethod
    def entities(owner: str) -> _Call[list[Entity]]:
        """Every entity ``owner``'s memories name, most spoken of first: each with its name,
        kind and aliases; its facts and links come with :meth:`entity`."""

        def read(data: Any) -> list[Entity]:
            return [views.entity_summary_from(e) for e in data["entities"]]

        return _Call("GET", "/v1/entities", read, params={"owner": owner})

    @staticmethod
    def entity(owner: str, name: str) -> _Call[Entity]:
        """The page of the entity ``owner``'s memories call ``name`` (any of its names,
        case-insensitively, or a role such as "my uncle"); NotFoundError if none."""
        return _Call("GET", entity_path(name), views.entity_from, params={"owner": owner})

    @staticmethod
    def owners() -> _Call[list[str]]:
        """The owners that have memories and that the key may read, sorted."""
        return _Call("GET", "/v1/owners", lambda data: list(data["owners"]))

    @staticmethod
    def stats(owner: str | None = None) -> _Call[StoreStats]:
        """Counts by kind and status, and the store's size and model."""
        return _Call("GET", "/v1/stats", views.stats_from, params={"owner": owner})

    @staticmethod
    def update(
        memory_id: str,
        *,
        content: str | _Unset = UNSET,
        metadata: Mapping[str, Any] | _Unset = UNSET,
        confidence: float | _Unset = UNSET,
        query_hints: Sequence[str] | _Unset = UNSET,
        status: Status | str | _Unset = UNSET,
        expires_at: datetime | str | _Unset | None = UNSET,
    ) -> _Call[Memory]:
        """Change a memory in place; new content is re-embedded. ``expires_at=None``
        clears an expiry."""
        given = {
            "content": content,
            "metadata": metadata,
            "confidence": confidence,
            "query_hints": query_hints,
            "status": status,
            "expires_at": expires_at,
        }
        body = {name: _value(v) for name, v in given.items() if not isinstance(v, _Unset)}
        return _Call("PATCH", memory_path(memory_id), read_memory, body=body)

    @staticmethod
    def feedback(memory_id: str, useful: bool) -> _Call[Memory]:
        """Say whether a memory was of use: useful raises its confidence toward its trust
        and marks it used; not useful lowers it. Returns the memory as changed."""
        if not isinstance(useful, bool):
            raise errors.ValidationError("useful must be true or false")
        return _Call(
            "POST", memory_path(memory_id) + "/feedback", read_memory, body={"useful": useful}
        )

    @staticmethod
    def history(memory_id: str) -> _Call[History]:
        """The versions of a memory, oldest first, each with who changed what and when."""
        return _Call("GET", memory_path(memory_id) + "/history", views.history_from)

    @staticmethod
    def forget(
        memory_id: str | None = None,
        *,
        owner: str | None = None,
        session_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        source: Source | str | None = None,
        principal: str | None = None,
        dry_run: bool = False,
    ) -> _Call[ForgetReceipt]:
        """Delete one memory, or an owner's memories: all, or those of one session, period,
        source or writer (``principal``, an API key's name), as given."""
        if memory_id is not None:
            if session_id is not None or since or until or source or principal:
                raise errors.ValidationError("give a memory id, or an owner with filters, not both")
            params = {"owner": owner, "dry_run": dry_run or None}
            return _Call("DELETE", memory_path(memory_id), views.receipt_from, params=params)
        if owner is None:
            raise errors.ValidationError("give a memory id or an owner")
        body = {
            "owner": owner,
            "session_id": session_id,
            "since": since,
            "until": until,
            "source": _value(source),
            "principal": principal,
            "dry_run": dry_run,
        }
        return _Call("POST", "/v1/forget", views.receipt_from, body=body)

    @staticmethod
    def pin(memory_id: str) -> _Call[Memory]:
        """Pin a memory: it neither decays nor is archived until unpinned."""
        return _Call("POST", memory_path(memory_id) + "/pin", read_memory)

    @staticmethod
    def unpin(memory_id: str) -> _Call[Memory]:
        """Let a pinned memory decay and archive again."""
        return _Call("DELETE", memory_path(memory_id) + "/pin", read_memory)

    @staticmethod
    def restore(memory_id: str) -> _Call[Memory]:
        """Make an archived memory active again (restoring counts as using it)."""
        return _Call("POST", memory_path(memory_id) + "/restore", read_memory)

    @staticmethod
    def import_records(
        records: Iterable[Mapping[str, Any]], *, request_id: str | None = None
    ) -> _Call[dict[str, int]]:
        """Load exported dicts, re-embedding them; ids the owner already holds are skipped
        (sent once, as for :meth:`retain`)."""
        body = {"records": list(records)}
        return _Call("POST", "/v1/import", dict, body=body, headers=once(request_id))
