"""An owner's entity graph, built from their memories once per change of the owner.

Building reads every current memory of the owner (LoCoMo's conversations of 400-700
turns: about 80 ms), so a graph is kept, for the few owners used last, until the
owner's change count (:meth:`~hindsight.store.Store.generations`) moves. A page read
waits for a graph of the owner as it is now; recall's entity channel does not: it
takes the graph it has while a newer one is built beside it (what that graph links
and the owner has since forgotten is dropped by the recall's filter; what was written
since is found by the other channels meanwhile).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from hindsight.entities.graph import Graph
from hindsight.entities.pages import Said
from hindsight.store.records import Filter

if TYPE_CHECKING:
    from hindsight.store import Store

KEEP: Final = 16  # owners whose graphs stay built

_log = logging.getLogger("hindsight.entities")


class Graphs:
    """Entity graphs by owner, rebuilt when the owner changes. Thread-safe."""

    def __init__(self, store: Store, keep: int = KEEP) -> None:
        self._store = store
        self._keep = keep
        self._held: OrderedDict[str, tuple[int, Graph]] = OrderedDict()
        self._building: set[str] = set()
        self._lock = threading.Lock()

    def of(self, owner: str, *, current: bool = True) -> Graph:
        """``owner``'s graph: as the owner is now, or (``current=False``) the one held
        while a newer one is built in the background, if one is held."""
        generation = self._store.generations([owner])[owner]
        with self._lock:
            held = self._held.get(owner)
            if held is not None:
                self._held.move_to_end(owner)
                if held[0] == generation:
                    return held[1]
                if not current:
                    if owner not in self._building:
                        self._building.add(owner)
                        threading.Thread(target=self._rebuild, args=(owner,), daemon=True).start()
                    return held[1]
        return self._build(owner, generation)

    def _rebuild(self, owner: str) -> None:
        try:
            self._build(owner, self._store.generations([owner])[owner])
        except Exception:  # a background refresh: the next recall tries again
            _log.exception("entity graph of %s not rebuilt", owner)
        finally:
            with self._lock:
                self._building.discard(owner)

    def _build(self, owner: str, generation: int) -> Graph:
        memories = self._store.iterate(Filter(owners=[owner]))
        graph = Graph(
            Said(m.id, m.content, m.provenance.speaker, m.observed_at, m.metadata.get("entities"))
            for m in memories
        )
        with self._lock:
            held = self._held.get(owner)
            if held is None or held[0] <= generation:
                self._held[owner] = (generation, graph)
                self._held.move_to_end(owner)
            while len(self._held) > self._keep:
                self._held.popitem(last=False)
        return graph
