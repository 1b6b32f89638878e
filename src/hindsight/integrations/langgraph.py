"""A LangGraph store kept in hindsight: ``HindsightStore(memory=...)``.

A namespace's first two labels name the owner (``("user", "alice", "prefs")`` is kept
by ``user:alice``); deeper labels are a sub-namespace kept with each item. An item is
one ``episode`` memory whose metadata holds its namespace, key and exact value, and
whose content is the value's text (its string fields), so that ``search(query=...)``
ranks items by hindsight's recall. Each (namespace, key) is one memory: putting it
again updates it in place (``created_at`` is kept), putting ``None`` forgets it.

Needs the ``langgraph`` extra: ``pip install '.[langgraph]'``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from hindsight.engine import MAX_K
from hindsight.errors import ValidationError
from hindsight.integrations._memory import MemoryApi, checked, every
from hindsight.models import Kind, Memory
from hindsight.validate import OWNER_RE

__all__ = ["HindsightStore"]

MARK = "langgraph"  # the metadata key that holds an item's namespace, key and value
MAX_TEXT = 8_000  # how much of a value's text is embedded and searched


def owner_of(namespace: Sequence[str]) -> str:
    """The owner a namespace's first two labels name; a ValueError for fewer labels."""
    if len(namespace) < 2:
        raise ValueError(
            f"namespace {tuple(namespace)!r} needs at least two labels, which name its "
            "owner: ('user', 'alice', ...) is kept by user:alice"
        )
    owner = f"{namespace[0]}:{namespace[1]}"
    if not OWNER_RE.fullmatch(owner):
        raise ValueError(
            f"namespace {tuple(namespace)!r} does not name a valid owner: {owner!r} "
            "(a lower-case first label, a second of letters, digits and ._@+-)"
        )
    return owner


def session_of(namespace: Sequence[str], key: str) -> str:
    """The session id that indexes one item: a digest of its namespace and key."""
    digest = hashlib.sha256(json.dumps([list(namespace), key]).encode()).hexdigest()
    return f"langgraph.{digest[:40]}"


def text_of(value: Mapping[str, Any], fields: Sequence[str] | None = None) -> str:
    """What of a value is searched: its string fields (of ``fields``, if given), else its JSON."""
    chosen: Any = value if fields is None else [value.get(f) for f in fields]
    words = [w for s in _strings(chosen) if _visible(w := s.replace("\x00", "").strip())]
    text = "\n".join(words) or json.dumps(value, sort_keys=True)  # ASCII: always visible
    return text[:MAX_TEXT]


def _visible(text: str) -> bool:
    """Whether ``text`` shows something (hindsight refuses content of only blanks)."""
    return any(c.isprintable() and not c.isspace() for c in text)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _matches(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    return not flt or all(k in value and value[k] == v for k, v in flt.items())


def _path_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p in ("*", n) for p, n in zip(path, part, strict=True)) if path else True


class HindsightStore(BaseStore):
    """A ``langgraph.store.base.BaseStore`` over a :class:`hindsight.Hindsight` or a sync
    :class:`hindsight.Client`."""

    def __init__(self, *, memory: Any) -> None:
        self.memory: MemoryApi = checked(memory)

    # -- the two entry points ------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            found = self._find(tuple(op.namespace), op.key)
            return None if found is None else Item(**_fields(found))
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise TypeError(f"unknown store operation {type(op).__name__}")

    # -- the operations --------------------------------------------------------------
    def _find(self, namespace: tuple[str, ...], key: str) -> Memory | None:
        owner = owner_of(namespace)
        for m in every(self.memory, owner, session_id=session_of(namespace, key)):
            mark = m.metadata.get(MARK)
            if mark and tuple(mark["namespace"]) == namespace and mark["key"] == key:
                return m
        return None

    def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        owner = owner_of(namespace)
        found = self._find(namespace, op.key)
        if op.value is None:
            if found is not None:
                self.memory.forget(found.id, owner=owner)
            return
        value = dict(op.value)
        fields = None if op.index is None or op.index is False else list(op.index)
        metadata = {MARK: {"namespace": list(namespace), "key": op.key, "value": value}}
        text = text_of(value, fields)
        if found is not None:
            self.memory.update(found.id, content=text, metadata=metadata)
            return
        self.memory.retain(
            owner,
            text,
            kind=Kind.EPISODE,
            session_id=session_of(namespace, op.key),
            metadata=metadata,
        )

    def _owners(self, prefix: tuple[str, ...]) -> list[str]:
        if len(prefix) >= 2:
            return [owner_of(prefix)]
        if not prefix:
            return self.memory.owners()
        return [o for o in self.memory.owners() if o.split(":", 1)[0] == prefix[0]]

    def _items(self, owners: Sequence[str]) -> Iterator[Memory]:
        for owner in owners:
            for m in every(self.memory, owner):
                if MARK in m.metadata:
                    yield m

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        owners = self._owners(prefix)
        if not owners:
            return []

        def wanted(m: Memory) -> bool:
            mark = m.metadata.get(MARK)
            return bool(
                mark
                and tuple(mark["namespace"][: len(prefix)]) == prefix
                and _matches(mark["value"], op.filter)
            )

        scored: list[tuple[Memory, float | None]]
        if op.query:
            k = min(MAX_K, (op.offset + op.limit) * 5 + 50)
            hits = self.memory.recall(owners, op.query, k=k, kinds=[Kind.EPISODE])
            scored = [(r.memory, r.score) for r in hits if wanted(r.memory)]
        else:
            found = sorted(
                (m for m in self._items(owners) if wanted(m)),
                key=lambda m: m.updated_at,
                reverse=True,
            )
            scored = [(m, None) for m in found]
        page = scored[op.offset : op.offset + op.limit]
        return [SearchItem(**_fields(m), score=score) for m, score in page]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        names: set[tuple[str, ...]] = set()
        for m in self._items(self.memory.owners()):
            namespace = tuple(m.metadata[MARK]["namespace"])
            if all(_path_matches(namespace, c) for c in op.match_conditions or ()):
                names.add(namespace if op.max_depth is None else namespace[: op.max_depth])
        return sorted(names)[op.offset : op.offset + op.limit]


def _fields(m: Memory) -> dict[str, Any]:
    mark = m.metadata.get(MARK)
    if not isinstance(mark, Mapping):
        raise ValidationError(f"memory {m.id} holds no store item")
    return {
        "namespace": tuple(mark["namespace"]),
        "key": mark["key"],
        "value": mark["value"],
        "created_at": m.created_at,
        "updated_at": m.updated_at,
    }
