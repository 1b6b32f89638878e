"""Request size limit: a body over ``max_request_bytes`` is answered 413 before it is parsed."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hindsight.api.errors import error_body


class RequestTooLarge(HTTPException):
    """Raised while reading a body without Content-Length that outgrows the limit.

    An HTTPException, so FastAPI's body reader passes it on to the error handlers as it is.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than the limit of {limit} bytes")


class BodyLimitMiddleware:
    """Refuses a declared Content-Length over the limit at once; counts undeclared bodies."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None:
            try:
                too_large = int(declared) > self.max_bytes
            except ValueError:
                too_large = False  # the server rejects a malformed Content-Length itself
            if too_large:
                await self._refuse(scope, receive, send)
                return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise RequestTooLarge(self.max_bytes)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except RequestTooLarge:
            if started:  # a mounted app read on after answering: nothing more to say
                raise
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the request body is larger than the limit of {self.max_bytes} bytes"
        response = JSONResponse(error_body("RequestTooLarge", message), status_code=413)
        await response(scope, receive, send)
