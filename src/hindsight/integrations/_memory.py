"""The seam the adapters use: a :class:`hindsight.Hindsight` or a sync
:class:`hindsight.Client`, which share the library's method names and signatures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeAlias

from hindsight.engine import MAX_K, Hindsight
from hindsight.models import Kind, Memory, Status

if TYPE_CHECKING:
    from hindsight.client import Client

MemoryApi: TypeAlias = "Hindsight | Client"

PAGE = MAX_K


def checked(memory: Any) -> MemoryApi:
    """``memory`` if it is an engine or a sync client; a TypeError otherwise."""
    if isinstance(memory, Hindsight):
        return memory
    from hindsight.client import Client

    if isinstance(memory, Client):
        return memory
    raise TypeError(
        "memory must be a hindsight.Hindsight or a sync hindsight.Client, "
        f"not {type(memory).__name__}"
    )


def every(
    memory: MemoryApi,
    owner: str,
    *,
    session_id: str | None = None,
    statuses: tuple[Status, ...] = (Status.ACTIVE,),
) -> Iterator[Memory]:
    """Every episode of ``owner`` (of one session, if given) in ``statuses``, a page at a time."""
    for status in statuses:
        offset = 0
        while True:
            page = memory.list_memories(
                owner,
                kinds=[Kind.EPISODE],
                session_id=session_id,
                status=status,
                limit=PAGE,
                offset=offset,
            )
            yield from page
            if len(page) < PAGE:
                break
            offset += PAGE
