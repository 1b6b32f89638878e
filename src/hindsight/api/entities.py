"""Entity routes: the people, places, organisations, pets and projects an owner's memories
name, listed, and one entity's page by any of its names.

As every route, each handler calls one library method as the caller, who must be allowed
to read the owner.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path

from hindsight.api.deps import Context, Routes
from hindsight.api.schemas import EntitiesOut, EntityOut, EntitySummaryOut, OwnerQuery

routes = Routes("/v1", "entities")

# a path, so that a name with a slash in it ("AC/DC", sent as AC%2FDC) is still a name
EntityName = Annotated[
    str,
    Path(description="Any name the entity goes by, in any case, or a role such as 'my uncle'."),
]


@routes("GET", "/entities")
async def entities(ctx: Context, owner: OwnerQuery) -> EntitiesOut:
    """Every entity an owner's memories name, most spoken of first, each with its kind
    and the other names it goes by."""
    found = await ctx.call(ctx.hs.entities, owner)
    return EntitiesOut(entities=[EntitySummaryOut.of(e) for e in found])


@routes("GET", "/entities/{name:path}")
async def entity(ctx: Context, name: EntityName, owner: OwnerQuery) -> EntityOut:
    """The page of the entity an owner's memories call ``name``: its names and kind, what
    was said of it (oldest first, with each memory's id) and what it is linked with.
    404 if none is called so."""
    return EntityOut.of(await ctx.call(ctx.hs.entity, owner, name))
