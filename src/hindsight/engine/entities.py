"""The engine's entity pages (see :mod:`hindsight.entities`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from hindsight.errors import NotFoundError, ValidationError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hindsight.config import Settings
    from hindsight.entities import Entity
    from hindsight.entities.cache import Graphs


class _Engine(Protocol):
    """What the entity reads use of the engine."""

    settings: Settings
    _graphs: Graphs

    def _readable(self, owner: object) -> str: ...
    def _audit_read(
        self, action: str, read: Mapping[str, tuple[str, ...]], detail: dict[str, Any]
    ) -> None: ...


class Entities:
    """Entity pages: who and what an owner's memories name."""

    def entities(self: _Engine, owner: str) -> list[Entity]:
        """Every entity ``owner``'s memories name (people, places, organisations, pets,
        projects, and names of no known kind), most spoken of first."""
        owner = self._readable(owner)
        found = sorted(
            self._graphs.of(owner).entities, key=lambda e: (-len(e.facts), e.name.casefold())
        )
        if self.settings.audit_recalls:  # every page's facts: the owner's words, read
            ids = tuple(dict.fromkeys(f.memory_id for e in found for f in e.facts))
            self._audit_read("entities", {owner: ids}, {"entities": len(found)})
        return found

    def entity(self: _Engine, owner: str, name: str) -> Entity:
        """The page of the entity ``owner``'s memories call ``name`` (any of its names,
        case-insensitively, or a role such as "my uncle"; an exact name before a
        similar spelling). :class:`~hindsight.errors.NotFoundError` if none."""
        owner = self._readable(owner)
        if not isinstance(name, str) or not name.strip():
            raise ValidationError("name must be a non-empty string")
        found = self._graphs.of(owner).find(name)
        if found is None:
            raise NotFoundError(f"no entity called {name!r} for owner {owner!r}")
        if self.settings.audit_recalls:  # its facts are the owner's words, as a recall's are
            ids = tuple(f.memory_id for f in found.facts)
            self._audit_read("entity", {owner: ids}, {"name": found.name})
        return found
