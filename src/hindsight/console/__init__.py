"""The web console at ``/ui/``: see, search, correct, review and audit memory in a browser.

Pages are rendered here, on the server, from library calls made as the signed-in
caller (the same keys and scopes as the API; on a keyless loopback server, the
engine's own trusted caller), each one library call or a few: a page shows only what the
caller's key may read. Nothing is fetched from elsewhere: the stylesheet and the one
small script ship in the package.

The pages (GET), by concern: signing in and the owners overview (:mod:`.home`),
memories and the recall playground (:mod:`.memories`), working memory
(:mod:`.sessions`), the review queue and the audit log (:mod:`.review`), forgetting by
filter (:mod:`.forget`) and the LLM layer (:mod:`.llm`), with what they share in
:mod:`.widgets`; the changes (POST) are in :mod:`.actions`. How it is kept safe:

- **Signing in.** With keys, the key is entered once (``/ui/login``) and kept in an
  HTTP-only, ``SameSite=Strict`` cookie (``Secure`` over HTTPS), scoped to ``/ui``;
  every request is authenticated by it as the API authenticates a Bearer key.
- **Changes.** Every change is a POST carrying a CSRF token equal to a random
  HTTP-only ``SameSite=Strict`` cookie (double submit), and a POST whose ``Origin``
  is another site's is refused.
- **Headers.** A strict Content Security Policy (no inline script or style, nothing
  from another origin, no framing), ``nosniff``, no referrer, no caching.
- **Text.** Memory text is escaped wherever it is shown (:mod:`.markup`).
- The server's ``Host`` guard against DNS rebinding covers these routes as every other.
"""

from __future__ import annotations

import importlib.resources
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hindsight.console import actions, forget, home, llm, memories, review, sessions
from hindsight.console.call import CSRF_COOKIE, KEY_COOKIE, Call, keep_cookie, safe_next
from hindsight.console.widgets import problem
from hindsight.errors import AccessError, AuthenticationError, HindsightError, NotFoundError

if TYPE_CHECKING:
    from hindsight.access import KeyRing
    from hindsight.api.metrics import Metrics
    from hindsight.engine import Hindsight

CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS: Final = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}

Handler = Callable[[Call], Awaitable[Response]]
GETS: Final[dict[str, Handler]] = {
    "/": home.home,
    "/login": home.login,
    "/memories": memories.memories,
    "/memory": memories.memory,
    "/recall": memories.recall,
    "/sessions": sessions.sessions,
    "/review": review.review,
    "/audit": review.audit,
    "/audit.jsonl": review.audit_export,
    "/forget": forget.forget,
    "/llm": llm.llm,
}
POSTS: Final[dict[str, Handler]] = {
    "/login": actions.sign_in,
    "/logout": actions.sign_out,
    "/memory/edit": actions.edit,
    "/memory/pin": actions.pin,
    "/memory/unpin": actions.unpin,
    "/memory/feedback": actions.feedback,
    "/memory/forget": actions.forget_one,
    "/sessions/consolidate": actions.consolidate,
    "/sessions/close": actions.close,
    "/review/decide": actions.decide,
    "/forget": actions.forget_many,
    "/llm/retry": actions.retry_jobs,
}


class SecurityHeaders:
    """Adds :data:`HEADERS` to every answer of the console."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.decode().lower() for k, _ in headers}
                headers += [
                    (k.encode(), v.encode()) for k, v in HEADERS.items() if k not in present
                ]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with)


def create_console(
    hs: Hindsight, *, keyring: KeyRing | None, metrics: Metrics | None = None
) -> ASGIApp:
    """The console's app, to mount at ``/ui``; ``metrics`` are the server's (for its
    recall latency chart)."""

    def guarded(
        handler: Handler, *, post: bool = False
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            csrf = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
            if post:
                refused = await _refuse_forgery(request)
                if refused is not None:
                    return refused
            caller, who = _caller(request, hs, keyring)
            if caller is None:
                if handler is home.login or handler is actions.sign_in:
                    call = Call(request, hs, None, csrf)
                    return _with_csrf(await handler(call), request, csrf)
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(f"/ui/login?next={safe_next(target)}", status_code=303)
            call = Call(request, caller, who, csrf)
            try:
                response = await handler(call)
            except AuthenticationError:
                return RedirectResponse("/ui/login", status_code=303)
            except (AccessError, NotFoundError) as exc:
                response = call.html("Not found", problem(exc), status=404)
            except HindsightError as exc:
                response = call.html("Not done", problem(exc), status=400)
            return _with_csrf(response, request, csrf)

        return endpoint

    routes: list[BaseRoute] = [
        Route(path, guarded(handler), methods=["GET"]) for path, handler in GETS.items()
    ]
    routes += [
        Route(path, guarded(handler, post=True), methods=["POST"])
        for path, handler in POSTS.items()
    ]
    static = importlib.resources.files("hindsight.console") / "static"
    routes.append(Mount("/static", StaticFiles(directory=str(static)), name="console-static"))
    app = Starlette(routes=routes)
    app.state.keyring = keyring
    app.state.metrics = metrics
    return SecurityHeaders(app)


def _caller(
    request: Request, hs: Hindsight, keyring: KeyRing | None
) -> tuple[Hindsight | None, str | None]:
    """The engine as the signed-in caller sees it, and their name; (None, None) when a
    key is needed and none valid was given."""
    if keyring is None:
        return hs, None  # loopback with no keys: the engine's own, trusted caller
    key = request.cookies.get(KEY_COOKIE)
    if not key:
        return None, None
    try:
        principal = keyring.authenticate(key)
    except AuthenticationError:
        return None, None
    return hs.as_principal(principal), principal.name


async def _refuse_forgery(request: Request) -> Response | None:
    """A POST from another site, or without the CSRF token its cookie holds, is refused."""
    origin = request.headers.get("origin")
    if origin is not None and origin != "null":
        own = f"{request.url.scheme}://{request.url.netloc}"
        if origin.rstrip("/") != own:
            return HTMLResponse("requests from another site are not accepted", status_code=403)
    data = await request.form()
    token = data.get("csrf")
    cookie = request.cookies.get(CSRF_COOKIE)
    if not cookie or not isinstance(token, str) or not secrets.compare_digest(token, cookie):
        return HTMLResponse(
            "the form's security token is missing or stale: reload the page and try again",
            status_code=403,
        )
    return None


def _with_csrf(response: Response, request: Request, csrf: str) -> Response:
    """Set the CSRF cookie if the browser does not hold it yet."""
    if request.cookies.get(CSRF_COOKIE) != csrf:
        keep_cookie(response, request, CSRF_COOKIE, csrf)
    return response


__all__ = ["create_console"]
