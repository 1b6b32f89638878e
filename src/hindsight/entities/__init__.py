"""Entities: the people, places, organisations, pets and projects an owner's memories
name, one page each with its aliases, facts and relations (:mod:`.graph`), read from
the words without a model (:mod:`.mentions`), exported as linked Markdown
(:mod:`.wiki`) and followed by recall's entity channel.
"""

from hindsight.entities.graph import Graph
from hindsight.entities.pages import Entity, Fact, Related, Said

__all__ = ["Entity", "Fact", "Graph", "Related", "Said"]
