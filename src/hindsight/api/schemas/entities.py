"""The bodies of the entity routes: an owner's entities listed, and one entity's page."""

from __future__ import annotations

from pydantic import BaseModel, Field

from hindsight import views
from hindsight.entities import Entity

_KIND = Field(
    description="person, place, organization, pet, project, or other (a name of no known kind)."
)


class FactOut(BaseModel):
    content: str = Field(description="What the owner's memory says (their words, as data).")
    memory_id: str = Field(description="The memory it was said in.")


class RelatedOut(BaseModel):
    name: str = Field(description="The related entity's name (its page's name).")
    relation: str = Field(description="How it is related, e.g. lives in, home of, uncle.")


class EntityOut(BaseModel):
    """An entity's page (:mod:`hindsight.entities`)."""

    name: str = Field(description="The fullest name it is called.")
    kind: str = _KIND
    aliases: list[str] = Field(description="Every other name it goes by.")
    facts: list[FactOut] = Field(description="What was said of it, oldest first.")
    related: list[RelatedOut] = Field(description="The entities it is linked with.")

    @classmethod
    def of(cls, e: Entity) -> EntityOut:
        return cls.model_validate(views.entity(e))


class EntitySummaryOut(BaseModel):
    """An entity as listed: ask for its page by any of its names."""

    name: str = Field(description="The fullest name it is called.")
    aliases: list[str] = Field(description="Every other name it goes by.")
    kind: str = _KIND

    @classmethod
    def of(cls, e: Entity) -> EntitySummaryOut:
        return cls.model_validate(views.entity_summary(e))


class EntitiesOut(BaseModel):
    entities: list[EntitySummaryOut] = Field(description="Most spoken of first.")
