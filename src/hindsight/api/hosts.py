"""The Host and Origin guard: a trusted (keyless) server answers only requests meant for it.

Without API keys every caller on loopback is trusted, so a web page the user visits
could reach the server through DNS rebinding (its own name resolving to 127.0.0.1) and
read or forget every memory. The guard answers 421 to a request whose ``Host`` is not
one the server is known by, and 403 to a browser request whose ``Origin`` is not: a
page of another site never gets an answer it can read, and no CORS header invites one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from hindsight.api.errors import error_body

__all__ = ["HostGuardMiddleware", "HostPatterns"]


class HostPatterns:
    """``host``, ``host:port`` or ``host:*`` (any port); names compare case-insensitively."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.exact = {p.lower() for p in patterns if not p.endswith(":*")}
        self.any_port = {p[:-2].lower() for p in patterns if p.endswith(":*")}

    def allows(self, host: str) -> bool:
        host = host.strip().lower()
        if host in self.exact:
            return True
        name, sep, port = host.rpartition(":")
        if not sep or not port.isdigit() or name.endswith(":"):
            name = host  # no port (an IPv6 address in brackets has colons inside)
        return name in self.any_port


class HostGuardMiddleware:
    """Answers 421 to an unknown ``Host`` and 403 to an unknown ``Origin``."""

    def __init__(self, app: ASGIApp, *, allowed_hosts: Sequence[str]) -> None:
        self.app = app
        self.hosts = HostPatterns(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not self.hosts.allows(host):
            message = f"this server does not answer for host {host!r}"
            await JSONResponse(error_body("MisdirectedRequest", message), status_code=421)(
                scope, receive, send
            )
            return
        origin = headers.get("origin")
        if origin is not None and not self._same_server(origin):
            message = f"requests from origin {origin!r} are not accepted"
            await JSONResponse(error_body("PermissionDeniedError", message), status_code=403)(
                scope, receive, send
            )
            return
        await self.app(scope, receive, send)

    def _same_server(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and self.hosts.allows(parts.netloc)
