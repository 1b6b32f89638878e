"""What every handler receives: the engine, the caller, and a timed way to call the library."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, ParamSpec, TypeVar

from fastapi import Depends, FastAPI, Header, Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from fastapi.security import HTTPBearer

from hindsight import serving
from hindsight.access import KeyRing, bearer_token
from hindsight.api.schemas import ErrorBody
from hindsight.engine import Hindsight

P = ParamSpec("P")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
ERRORS: Final[dict[int | str, dict[str, Any]]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 409, 413, 422, 503)
}

# Documents the scheme in OpenAPI; the header itself is read with access.bearer_token,
# as the MCP endpoint reads it.
bearer = HTTPBearer(auto_error=False, description="An API key from HINDSIGHT_API_KEYS_FILE.")


IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="The write is made once under this key (kept a day): the same "
        "request sent again answers as the first did and stores nothing; the key with "
        "another request is a 409. 1 to 128 printable ASCII characters.",
    ),
]


@dataclass(frozen=True, slots=True)
class Ctx:
    """One request's engine, as its caller sees it: the library checks every access."""

    hs: Hindsight

    async def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a blocking library call off the event loop, within the request timeout."""
        return await serving.call(self.hs.settings.request_timeout_seconds, fn, *args, **kwargs)


def _query_names(dependant: Dependant) -> set[str]:
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def _refuse_unknown_query(request: Request) -> None:
    """A misspelt query parameter is an error, as an unknown body field is, not ignored."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    unknown = sorted(set(request.query_params) - _query_names(route.dependant))
    if unknown:
        raise RequestValidationError(
            [{"loc": ("query", name), "msg": "Extra inputs are not permitted"} for name in unknown]
        )


async def _context(request: Request, _: Annotated[object, Depends(bearer)]) -> Ctx:
    _refuse_unknown_query(request)
    hs: Hindsight = request.app.state.hindsight
    keyring: KeyRing | None = request.app.state.keyring
    if keyring is None:
        return Ctx(hs)  # loopback with no keys: the engine's own, trusted, caller
    token = bearer_token(request.headers.get("authorization"))
    return Ctx(hs.as_principal(keyring.authenticate(token)))


Context = Annotated[Ctx, Depends(_context)]


@dataclass
class Routes:
    """Handlers gathered by decorator, each added to an app under its function's name.

    The name is the operation id, the same as the library method it calls, so ids are
    stable; every route documents ``errors`` (by default every error answer).
    """

    prefix: str
    tag: str
    errors: dict[int | str, dict[str, Any]] = field(default_factory=lambda: dict(ERRORS))
    _endpoints: list[tuple[str, str, Callable[..., Any], dict[str, Any]]] = field(
        default_factory=list
    )

    def __call__(self, method: str, path: str, **options: Any) -> Callable[[F], F]:
        def add(handler: F) -> F:
            self._endpoints.append((method, path, handler, options))
            return handler

        return add

    def add_to(self, app: FastAPI) -> None:
        for method, path, handler, given in self._endpoints:
            options = dict(given)  # the same routes are added to every app made
            app.add_api_route(
                self.prefix + path,
                handler,
                methods=[method],
                operation_id=handler.__name__,
                tags=[self.tag],
                responses={**self.errors, **options.pop("responses", {})},
                **options,
            )
