"""A crewAI memory storage kept in hindsight: ``HindsightStorage(memory=..., owner=...)``.

It is a ``crewai.memory.storage.backend.StorageBackend``: ``crewai.Memory(storage=...)``
keeps its records in one owner's hindsight memory. Each ``MemoryRecord`` is one ``episode``
memory of that owner, written by the agent: its text is the record's content, its time the
record's ``created_at``, and its metadata holds the rest of the record exactly (scope,
categories, metadata, importance, times, source, privacy) with the record's embedding as
base64 of little-endian float32 (float16 past 2,048 dimensions, to stay well inside
hindsight's metadata limit: a 3,072-dimension embedding then takes 8 KiB).

crewAI searches by embedding alone (``search`` gets no text): the owner's records are ranked
by the cosine of their saved embeddings to the query's, each scored by that cosine clipped
to [0, 1]. Times are naive UTC, as crewAI's scoring expects (an aware time is converted).
A record the guard holds for review is kept, listed and counted, but not searched until a
reviewer approves it. ``reset`` and ``delete`` remove this storage's records only: the
owner's other memories and other owners' stay.

crewAI pins ``mcp<2``, which hindsight's ``server`` extra cannot share, so crewAI is no
extra: install it beside the core package, ``pip install . 'crewai>=1,<2'``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from crewai.memory.storage.backend import EmbeddingDimensionMismatchError
from crewai.memory.types import MemoryRecord, ScopeInfo
from pydantic_core import PydanticSerializationError

from hindsight import validate
from hindsight.integrations._memory import MemoryApi, checked, every
from hindsight.models import HELD, Kind, Memory, Source, Status

__all__ = ["HindsightStorage"]

MARK = "crewai"  # the metadata key that holds a record, exactly, and its embedding
KEPT = (Status.ACTIVE, Status.ARCHIVED, *HELD)  # what is listed, counted and deleted
SEARCHED = (Status.ACTIVE,)  # what is searched: what hindsight itself recalls
FLOAT32_DIMS = 2_048  # beyond this an embedding is kept as float16

Vector = npt.NDArray[np.float64]


def session_of(record_id: str) -> str:
    """The session id that indexes one record: a digest of its id."""
    return f"crewai.{hashlib.sha256(record_id.encode()).hexdigest()[:40]}"


def scope_path(scope: str | None) -> str:
    """A scope in one form: ``/a/b`` (``/`` for the root and for ``None``)."""
    if scope is not None and not isinstance(scope, str):
        raise TypeError(f"a scope is a path such as '/crew/sales', not {type(scope).__name__}")
    return "/" + "/".join(p for p in (scope or "").split("/") if p)


def within(scope: str, prefix: str) -> bool:
    """Whether the (normalised) ``scope`` is ``prefix`` or lies under it."""
    return prefix == "/" or scope == prefix or scope.startswith(prefix + "/")


def naive_utc(when: datetime) -> datetime:
    """``when`` as a naive UTC time (crewAI's form); a naive time is taken as UTC."""
    if not isinstance(when, datetime):
        raise TypeError(f"expected a datetime, not {type(when).__name__}")
    return when if when.tzinfo is None else when.astimezone(UTC).replace(tzinfo=None)


def pack(embedding: Sequence[float]) -> dict[str, str]:
    """An embedding as stored: base64 of little-endian float32, float16 past
    :data:`FLOAT32_DIMS` (float32 if a value is too large for float16)."""
    values = as_vector(embedding, "embedding", empty=True)
    dtype = "<f4"
    if values.size > FLOAT32_DIMS:
        with np.errstate(over="ignore"):
            half = values.astype("<f2")
        if np.isfinite(half).all():
            dtype = "<f2"
    data = base64.b64encode(values.astype(dtype).tobytes()).decode("ascii")
    return {"dtype": dtype, "data": data}


def unpack(packed: Any) -> Vector | None:
    """A stored embedding as float64, or ``None`` if the record had none."""
    if not isinstance(packed, Mapping):
        return None
    raw = base64.b64decode(packed["data"])
    return np.frombuffer(raw, dtype=np.dtype(packed["dtype"])).astype(np.float64)


def as_vector(values: Any, name: str, *, empty: bool = False) -> Vector:
    """``values`` as a one-dimensional array of finite floats; a ValueError otherwise."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a list of floats, not {type(values).__name__}")
    try:
        vector = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of floats") from None
    if vector.ndim != 1:
        raise ValueError(f"{name} must be a flat list of floats")
    if not vector.size and not empty:
        raise ValueError(f"{name} is empty")
    if not np.isfinite(vector).all():
        raise ValueError(f"{name} holds a NaN or an infinity")
    return vector


def checked_record(record: Any) -> MemoryRecord:
    """``record`` with its times as naive UTC; a TypeError for anything but a record."""
    if not isinstance(record, MemoryRecord):
        raise TypeError(f"expected a crewai MemoryRecord, not {type(record).__name__}")
    times = {"created_at": record.created_at, "last_accessed": record.last_accessed}
    aware = {k: naive_utc(v) for k, v in times.items() if v.tzinfo is not None}
    return record.model_copy(update=aware) if aware else record


def stored(record: MemoryRecord) -> tuple[str, dict[str, Any]]:
    """The text and metadata one record is kept as; a ValueError for a record that JSON
    cannot hold."""
    try:
        fields = record.model_dump(mode="json", exclude={"content", "embedding"})
    except PydanticSerializationError as exc:
        raise ValueError(f"record {record.id!r} holds a value JSON cannot keep: {exc}") from None
    mark: dict[str, Any] = {
        "record": fields,
        "embedding": None if record.embedding is None else pack(record.embedding),
    }
    if record.content != record.content.strip():
        mark["content"] = record.content  # hindsight keeps text stripped: keep it exactly
    return record.content, {MARK: mark}


def restored(memory: Memory) -> MemoryRecord:
    """The record a memory keeps."""
    mark = memory.metadata[MARK]
    vector = unpack(mark.get("embedding"))
    return MemoryRecord.model_validate(
        {
            **mark["record"],
            "content": mark.get("content", memory.content),
            "embedding": None if vector is None else vector.tolist(),
        }
    )


def matches(
    fields: Mapping[str, Any],
    prefix: str,
    categories: Sequence[str] | None,
    metadata_filter: Mapping[str, Any] | None,
) -> bool:
    """Whether a kept record lies in the scope, has one of the categories (if given) and
    the metadata values (if given)."""
    if not within(scope_path(fields["scope"]), prefix):
        return False
    if categories and not set(categories) & set(fields["categories"]):
        return False
    kept = fields["metadata"]
    return not metadata_filter or all(kept.get(k) == v for k, v in metadata_filter.items())


def created(fields: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(fields["created_at"])


class HindsightStorage:
    """crewAI's ``StorageBackend`` over a :class:`hindsight.Hindsight` or a sync
    :class:`hindsight.Client`: the records of ``owner``'s crewAI memory."""

    def __init__(self, *, memory: Any, owner: str) -> None:
        self.memory: MemoryApi = checked(memory)
        self.owner = validate.owner(owner)

    # -- what is kept --------------------------------------------------------------
    def _kept(self, statuses: tuple[Status, ...] = KEPT) -> Iterator[Memory]:
        for m in every(self.memory, self.owner, statuses=statuses):
            if isinstance(m.metadata.get(MARK), Mapping):
                yield m

    def _find(self, record_id: str) -> Memory | None:
        if not isinstance(record_id, str):
            raise TypeError(f"a record id is a string, not {type(record_id).__name__}")
        for m in every(self.memory, self.owner, session_id=session_of(record_id), statuses=KEPT):
            mark = m.metadata.get(MARK)
            if isinstance(mark, Mapping) and mark["record"]["id"] == record_id:
                return m
        return None

    def _in_scope(self, scope_prefix: str | None) -> list[Memory]:
        prefix = scope_path(scope_prefix)
        return [m for m in self._kept() if matches(m.metadata[MARK]["record"], prefix, None, None)]

    def _put(self, record: MemoryRecord, text: str, metadata: dict[str, Any]) -> None:
        found = self._find(record.id)
        if found is None:
            self.memory.retain(
                self.owner,
                text,
                kind=Kind.EPISODE,
                session_id=session_of(record.id),
                source=Source.AGENT,
                observed_at=record.created_at,
                metadata=metadata,
            )
        elif text.strip() != found.content:
            self.memory.update(found.id, content=text, metadata=metadata)
        else:
            self.memory.update(found.id, metadata=metadata)

    # -- the protocol --------------------------------------------------------------
    def save(self, records: list[MemoryRecord]) -> None:
        """Keep ``records``; a record whose id is kept already replaces it."""
        batch = [checked_record(r) for r in records]
        dims = list(dict.fromkeys(len(r.embedding) for r in batch if r.embedding))
        if len(dims) > 1:
            raise EmbeddingDimensionMismatchError(dims[0], dims[1])
        kept = [(r, *stored(r)) for r in batch]  # every record checked before any is written
        for record, text, metadata in kept:
            self._put(record, text, metadata)

    def update(self, record: MemoryRecord) -> None:
        """Replace the record with the same id (keep it if there is none)."""
        fresh = checked_record(record)
        self._put(fresh, *stored(fresh))

    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """The records nearest ``query_embedding`` by cosine, best first, each with its
        score in [0, 1] (the cosine, clipped), at least ``min_score``."""
        query = as_vector(query_embedding, "query_embedding")
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            raise ValueError("query_embedding is all zeros: it points nowhere")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"limit must be a whole number of records, not {limit!r}")
        prefix = scope_path(scope_prefix)
        scored: list[tuple[float, Memory]] = []
        for m in self._kept(SEARCHED):
            mark = m.metadata[MARK]
            if not matches(mark["record"], prefix, categories, metadata_filter):
                continue
            vector = unpack(mark.get("embedding"))
            if vector is None or not vector.size:
                continue
            if vector.size != query.size:
                raise EmbeddingDimensionMismatchError(vector.size, query.size)
            length = float(np.linalg.norm(vector))
            if length == 0.0:
                continue
            cosine = float(vector @ query) / (length * norm)
            if min(1.0, max(0.0, cosine)) >= min_score:
                scored.append((cosine, m))
        scored.sort(key=lambda pair: pair[0], reverse=True)  # opposite ranks below orthogonal
        return [(restored(m), min(1.0, max(0.0, c))) for c, m in scored[:limit]]

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """Forget the records that meet every criterion given (all of the scope's, with
        none); how many were forgotten. An empty ``record_ids`` names no record."""
        prefix = scope_path(scope_prefix)
        cutoff = None if older_than is None else naive_utc(older_than)
        if record_ids is not None:
            if isinstance(record_ids, str):
                raise TypeError("record_ids is a list of record ids, not one string")
            found = [self._find(i) for i in dict.fromkeys(record_ids)]
            candidates = [m for m in found if m is not None]
        else:
            candidates = list(self._kept())
        doomed = [
            m
            for m in candidates
            if matches(m.metadata[MARK]["record"], prefix, categories, metadata_filter)
            and (cutoff is None or created(m.metadata[MARK]["record"]) < cutoff)
        ]
        for m in doomed:
            self.memory.forget(m.id, owner=self.owner)
        return len(doomed)

    def get_record(self, record_id: str) -> MemoryRecord | None:
        """The record with this id, or ``None``."""
        found = self._find(record_id)
        return None if found is None else restored(found)

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[MemoryRecord]:
        """The scope's records (and its subscopes'), newest ``created_at`` first."""
        kept = sorted(
            self._in_scope(scope_prefix),
            key=lambda m: created(m.metadata[MARK]["record"]),
            reverse=True,
        )
        return [restored(m) for m in kept[offset : offset + limit]]

    def get_scope_info(self, scope: str) -> ScopeInfo:
        """How many records a scope holds (its subscopes' too), their categories, their
        oldest and newest times, and the scope's children."""
        path = scope_path(scope)
        fields = [m.metadata[MARK]["record"] for m in self._in_scope(path)]
        times = [created(f) for f in fields]
        return ScopeInfo(
            path=path,
            record_count=len(fields),
            categories=sorted({c for f in fields for c in f["categories"]}),
            oldest_record=min(times, default=None),
            newest_record=max(times, default=None),
            child_scopes=self._children(path, fields),
        )

    def list_scopes(self, parent: str = "/") -> list[str]:
        """The immediate child scopes of ``parent`` that hold records."""
        path = scope_path(parent)
        return self._children(path, [m.metadata[MARK]["record"] for m in self._in_scope(path)])

    @staticmethod
    def _children(path: str, fields: list[Mapping[str, Any]]) -> list[str]:
        base = "" if path == "/" else path
        depth = base.count("/") + 1
        scopes = (scope_path(f["scope"]) for f in fields)
        return sorted({"/".join(s.split("/")[: depth + 1]) for s in scopes if s != path})

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        """How many of the scope's records carry each category."""
        counts: dict[str, int] = {}
        for m in self._in_scope(scope_prefix):
            for c in m.metadata[MARK]["record"]["categories"]:
                counts[c] = counts.get(c, 0) + 1
        return counts

    def count(self, scope_prefix: str | None = None) -> int:
        """How many records the scope (and its subscopes) holds."""
        return len(self._in_scope(scope_prefix))

    def reset(self, scope_prefix: str | None = None) -> None:
        """Forget the scope's records (all of this storage's, with none)."""
        self.delete(scope_prefix=scope_prefix)

    # -- async: the same, in a worker thread ---------------------------------------
    async def asave(self, records: list[MemoryRecord]) -> None:
        await asyncio.to_thread(self.save, records)

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        return await asyncio.to_thread(
            self.search,
            query_embedding,
            scope_prefix=scope_prefix,
            categories=categories,
            metadata_filter=metadata_filter,
            limit=limit,
            min_score=min_score,
        )

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        return await asyncio.to_thread(
            self.delete,
            scope_prefix=scope_prefix,
            categories=categories,
            record_ids=record_ids,
            older_than=older_than,
            metadata_filter=metadata_filter,
        )
