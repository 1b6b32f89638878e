"""A Python client of the REST API with the library's methods: switch from embedded in one line.

>>> memory = Hindsight()                                         # doctest: +SKIP
>>> memory = Client("http://127.0.0.1:8765", api_key="...")     # doctest: +SKIP

:class:`Client` (sync) and :class:`AsyncClient` take the same arguments as
:class:`hindsight.Hindsight`, return the same types (:class:`~hindsight.Memory`,
:class:`~hindsight.RecallResult`, ...), and raise the same errors, rebuilt from the
server's error bodies. A server that cannot be reached raises :class:`StoreError`.
Needs the ``client`` extra (httpx).

Each operation is written once, as a function that describes its HTTP request and how to
read the answer (:mod:`.memories`, :mod:`.sessions`, :mod:`.admin`, over the descriptions
of :mod:`.wire`); both clients turn those into methods (:mod:`.faces`), and send them
through :mod:`.transport`.
"""

from __future__ import annotations

from hindsight.client.faces import AsyncClient, Client

__all__ = ["AsyncClient", "Client"]
