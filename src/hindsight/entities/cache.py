"""An owner's entity graph, built from their memories once per change of the owner.

Building reads every current memory of the owner (about 0.1 ms each), so a graph is
kept until the owner's change count (:meth:`~hindsight.store.Store.generations`)
moves, for the few owners used last.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from hindsight.entities.graph import Graph, Said
from hindsight.store.records import Filter

if TYPE_CHECKING:
    from hindsight.store import Store

KEEP: Final = 16  # owners whose graphs stay built


class Graphs:
    """Entity graphs by owner, rebuilt when the owner changes. Thread-safe."""

    def __init__(self, store: Store, keep: int = KEEP) -> None:
        self._store = store
        self._keep = keep
        self._held: OrderedDict[str, tuple[int, Graph]] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, owner: str) -> Graph:
        generation = self._store.generations([owner])[owner]
        with self._lock:
            held = self._held.get(owner)
            if held is not None and held[0] == generation:
                self._held.move_to_end(owner)
                return held[1]
        memories = self._store.iterate(Filter(owners=[owner]))
        graph = Graph(Said(m.id, m.content, m.provenance.speaker, m.observed_at) for m in memories)
        with self._lock:
            self._held[owner] = (generation, graph)
            self._held.move_to_end(owner)
            while len(self._held) > self._keep:
                self._held.popitem(last=False)
        return graph
