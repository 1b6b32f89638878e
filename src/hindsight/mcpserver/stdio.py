"""Serving over stdin and stdout, as a local client (a desktop app) runs the server.

When the client closes stdin, every request already read is answered before the server
ends (a client may send a call and close at once: the SDK cancelled it, answered
"Connection closed", and a write was lost). The streams the SDK reads and writes are
wrapped to count the requests in flight; the read stream ends once they are answered,
or after ``_DRAIN_SECONDS``.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse
from mcp_types import RequestId as JSONRPCId

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

# when stdin closes, the longest the server waits for the requests it read to be answered
_DRAIN_SECONDS: Final = 60.0


async def serve(server: Server[Any]) -> None:
    """Serve stdin and stdout with ``server`` (the SDK's low-level server) until the client
    closes stdin, then answer every request already read."""
    async with stdio_server() as (read, write):
        pending = _Pending()
        await server.run(
            _Reads(read, pending),
            _Writes(write, pending),
            server.create_initialization_options(),
        )


class _Pending:
    """The ids of requests read and not yet answered."""

    def __init__(self) -> None:
        self.ids: set[JSONRPCId] = set()
        self._answered = anyio.Event()

    def answered(self, request_id: JSONRPCId | None) -> None:
        self.ids.discard(request_id)
        self._answered.set()

    async def drained(self) -> None:
        with anyio.move_on_after(_DRAIN_SECONDS):
            while self.ids:
                self._answered = anyio.Event()
                await self._answered.wait()


class _Reads:
    """The server's read stream: notes each request, and ends only once all are answered."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    @property
    def last_context(self) -> contextvars.Context | None:  # the SDK reads it if present
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except anyio.EndOfStream:
            await self._pending.drained()
            raise
        if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCRequest):
            self._pending.ids.add(item.message.id)
        return item

    def __aiter__(self) -> _Reads:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Reads:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Writes:
    """The server's write stream: marks each request answered once its answer is sent."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self._pending.answered(item.message.id)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Writes:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
