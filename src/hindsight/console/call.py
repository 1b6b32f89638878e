"""One request to the console: who asks, their CSRF token, the cookies that keep them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final, ParamSpec, TypeVar
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from hindsight import serving
from hindsight.console.markup import page

if TYPE_CHECKING:
    from hindsight.engine import Hindsight

P = ParamSpec("P")
T = TypeVar("T")
KEY_COOKIE: Final = "hindsight_key"
CSRF_COOKIE: Final = "hindsight_csrf"


class Call:
    """One request to the console: who is asking (as an engine that checks their
    access), their CSRF token, and a way to run a library call off the event loop."""

    def __init__(self, request: Request, hs: Hindsight, who: str | None, csrf: str) -> None:
        self.request = request
        self.hs = hs
        self.who = who
        self.csrf = csrf

    async def run(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a blocking library call off the event loop, within the request timeout."""
        return await serving.call(self.hs.settings.request_timeout_seconds, fn, *args, **kwargs)

    def arg(self, name: str) -> str | None:
        value = self.request.query_params.get(name)
        return value.strip() or None if value is not None else None

    async def form(self) -> dict[str, list[str]]:
        data = await self.request.form()
        out: dict[str, list[str]] = {}
        for key, value in data.multi_items():
            if isinstance(value, str):
                out.setdefault(key, []).append(value)
        return out

    def html(
        self,
        title: str,
        body: object,
        *,
        active: str = "",
        notice: str | None = None,
        status: int = 200,
    ) -> HTMLResponse:
        return HTMLResponse(
            page(title, body, who=self.who, csrf=self.csrf, active=active, notice=notice),
            status_code=status,
        )


def keep_cookie(response: Response, request: Request, name: str, value: str | None) -> None:
    """Set a console cookie (None: delete it): HTTP-only, same-site, for ``/ui`` only,
    and ``Secure`` over HTTPS."""
    if value is None:
        response.delete_cookie(name, path="/ui")
        return
    response.set_cookie(
        name,
        value,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/ui",
    )


def sign_in_cookie(response: Response, request: Request, key: str | None) -> None:
    """Keep the key (None: forget it) in the console's cookie."""
    keep_cookie(response, request, KEY_COOKIE, key)


def safe_next(target: str) -> str:
    """Only a console path is a place to go back to after signing in."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path.startswith("/ui"):
        return "/ui/"
    return target
