"""Serving over streamable HTTP, as ``hindsight serve`` mounts the server at ``/mcp``.

Stateless JSON: each request stands alone. With a :class:`~hindsight.access.KeyRing`,
every request needs an API key, and the key's principal is the caller the tools see;
without one, every caller is trusted and only loopback hosts are accepted.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Final

from mcp.server.transport_security import TransportSecuritySettings

from hindsight.access import KeyRing, Principal, bearer_token, loopback_hosts
from hindsight.engine import Hindsight
from hindsight.errors import AuthenticationError
from hindsight.mcpserver.server import create_server

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

_CALLER: Final[contextvars.ContextVar[Principal | None]] = contextvars.ContextVar(
    "hindsight_mcp_caller", default=None
)


def _authenticated_caller() -> Principal:
    caller = _CALLER.get()
    if caller is None:  # the auth layer always sets it; fail closed if it ever does not
        raise AuthenticationError("an API key is required: send 'Authorization: Bearer <key>'")
    return caller


class _RequireKey:
    """ASGI middleware: every HTTP request needs a valid API key; its principal is the caller."""

    def __init__(self, app: ASGIApp, keyring: KeyRing) -> None:
        self._app = app
        self._keyring = keyring

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        header = next((v for k, v in scope["headers"] if k == b"authorization"), None)
        try:
            caller = self._keyring.authenticate(
                bearer_token(None if header is None else header.decode("latin-1"))
            )
        except AuthenticationError as exc:
            await _unauthorized(str(exc), send)
            return
        token = _CALLER.set(caller)
        try:
            await self._app(scope, receive, send)
        finally:
            _CALLER.reset(token)


async def _unauthorized(message: str, send: Send) -> None:
    # the same error body as the REST API's
    body = json.dumps({"error": {"type": "AuthenticationError", "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="hindsight"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(
    hs: Hindsight,
    *,
    keyring: KeyRing | None,
    allowed_hosts: Sequence[str] | None = None,
) -> tuple[ASGIApp, Callable[[], AbstractAsyncContextManager[None]]]:
    """An ASGI app serving MCP over streamable HTTP at its own root, and its lifespan.

    Mount the app (e.g. at ``/mcp``) and run the lifespan in the parent's. With a
    ``keyring`` every request needs ``Authorization: Bearer <key>`` (else 401) and
    the key's scopes bound what the tools may read and write. Without one, every
    caller is trusted, so only loopback ``Host`` headers are accepted (a guard against
    DNS rebinding) unless ``allowed_hosts`` (``host`` or ``host:port``, ``host:*`` for
    any port) says otherwise; with a keyring the Host is checked only if given.
    """
    if allowed_hosts is None and keyring is None:
        allowed_hosts = loopback_hosts()
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=allowed_hosts is not None,
        allowed_hosts=list(allowed_hosts or ()),
        allowed_origins=[
            f"{scheme}://{h}" for h in allowed_hosts or () for scheme in ("http", "https")
        ],
    )
    server = create_server(hs, principal=None if keyring is None else _authenticated_caller)
    # Stateless JSON: each request stands alone, so the app works behind any proxy or worker.
    server.streamable_http_app(
        streamable_http_path="/",
        stateless_http=True,
        json_response=True,
        max_request_body_size=hs.settings.max_request_bytes,
        transport_security=security,
    )
    manager = server.session_manager
    app: ASGIApp = manager.handle_request
    if keyring is not None:
        app = _RequireKey(app, keyring)
    return app, manager.run
