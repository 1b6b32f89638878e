"""What an entity page holds (the pages themselves are built by :mod:`.graph`), what a
memory gives the graph, and how a relation reads from its other end."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

__all__ = ["RECIPROCAL", "Entity", "Fact", "Related", "Said", "inverse"]


@dataclass(frozen=True, slots=True)
class Said:
    """What a memory gives the graph: its id, words, speaker and time."""

    memory_id: str
    content: str
    speaker: str | None = None
    at: datetime | None = None
    read: Mapping[str, Any] | None = None  # what an LLM read in it (metadata "entities")


@dataclass(frozen=True, slots=True)
class Fact:
    content: str
    memory_id: str


@dataclass(frozen=True, slots=True)
class Related:
    name: str
    relation: str


@dataclass(frozen=True, slots=True)
class Entity:
    """One page: its name (the fullest it is called), every other name it goes by, its
    kind, what was said of it (oldest first) and what it is linked with."""

    name: str
    kind: str
    aliases: tuple[str, ...]
    facts: tuple[Fact, ...]
    related: tuple[Related, ...]
    roles: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


INVERSE: Final = {
    "lives in": "home of", "lived in": "former home of", "born in": "birthplace of",
    "grew up in": "where grew up", "from": "home of", "coaches": "coached by",
    "coached": "coached by", "works at": "employs", "plays for": "has player",
    "played for": "had player", "manages": "managed by", "managed": "managed by",
    "runs": "run by", "owns": "owned by", "founded": "founded by", "attends": "attended by",
    "attended": "attended by", "member of": "has member", "visited": "visited by",
    "located in": "location of", "works in": "workplace of", "teaches at": "has teacher",
    "studies at": "has student", "leads": "led by", "led": "led by",
    "competed for": "had competitor",
}  # fmt: skip
SYMMETRIC: Final = frozenset({"married", "engaged to", "dating", "friends with"})
RECIPROCAL: Final = {  # "Paco's wife" is whom Paco is the husband of
    "wife": "husband", "husband": "wife", "partner": "partner", "fiancé": "fiancé",
    "girlfriend": "boyfriend", "boyfriend": "girlfriend",
}  # fmt: skip


def inverse(relation: str) -> str:
    if relation in SYMMETRIC:
        return relation
    if relation.endswith(" of"):
        return relation.removesuffix(" of")  # "uncle of" -> the other's "uncle"
    return INVERSE.get(relation, f"{relation} (by)")
