"""The FastAPI app: routes, the one error mapping, limits, metrics, probes, and MCP at ``/mcp``."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import ipaddress
from collections.abc import AsyncIterator
from typing import Final

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hindsight import __version__, jobs, serving
from hindsight.access import KeyRing, loopback_hosts
from hindsight.api import (
    doctor,
    entities,
    errors,
    history,
    memories,
    queue,
    review,
    sessions,
    usage,
)
from hindsight.api.deps import Routes
from hindsight.api.hosts import HostGuardMiddleware
from hindsight.api.limits import BodyLimitMiddleware
from hindsight.api.metrics import CONTENT_TYPE, Metrics, MetricsMiddleware
from hindsight.api.schemas import ErrorBody, HealthOut
from hindsight.config import Settings
from hindsight.console import create_console
from hindsight.engine import Hindsight
from hindsight.errors import StoreError, ValidationError

LOOPBACK_NAMES: Final = frozenset({"localhost", "ip6-localhost"})
# /ready lists one page and the sessions of an owner no one has: cheap queries that touch
# the store and working memory.
_PROBE_OWNER: Final = "system:hindsight-ready"


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` keeps the server on this machine."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def keyring_for(settings: Settings, *, host: str) -> KeyRing | None:
    """The keys a server on ``host`` must check; None (trusted callers) only on loopback.

    Keys are on when ``settings.api_keys_file`` is set, and required beyond loopback.
    """
    if settings.api_keys_file is not None:
        return KeyRing.load(settings.api_keys_file)
    if not is_loopback(host):
        raise ValidationError(
            f"listening on {host} (beyond loopback) requires API keys: set "
            "HINDSIGHT_API_KEYS_FILE to a key file (see the README), or listen on 127.0.0.1"
        )
    return None


def create_app(
    hs: Hindsight,
    *,
    keyring: KeyRing | None = None,
    mcp: bool = True,
) -> FastAPI:
    """The REST API over ``hs``, with MCP over streamable HTTP at ``/mcp`` when ``mcp``.

    Without a ``keyring`` every caller is trusted (a local server on loopback); with
    one, each request needs ``Authorization: Bearer <key>`` and stays within its scope.
    Every route answers only the ``Host`` names in ``HINDSIGHT_ALLOWED_HOSTS``: by
    default, without keys, the loopback names (against DNS rebinding); with keys, any.
    """
    allowed_hosts = hs.settings.allowed_hosts
    if allowed_hosts is None and keyring is None:
        allowed_hosts = loopback_hosts()
    mcp_app, mcp_lifespan = None, None
    if mcp:
        from hindsight import mcpserver  # only the server needs the MCP SDK

        mcp_app, mcp_lifespan = mcpserver.http_app(hs, keyring=keyring, allowed_hosts=allowed_hosts)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if mcp_lifespan is not None:
                await stack.enter_async_context(mcp_lifespan())
            purging = asyncio.create_task(jobs.schedule(hs))
            try:
                yield
            finally:
                purging.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await purging

    app = FastAPI(
        title="hindsight",
        version=__version__,
        summary="Long-term and working memory for LLM agents.",
        lifespan=lifespan,
        docs_url=None,  # served below from the package's files, not a CDN
        redoc_url=None,
    )
    _add_docs(app)
    app.state.hindsight = hs
    app.state.keyring = keyring
    app.state.metrics = Metrics()
    errors.install(app)
    for routes in (
        memories.routes,
        history.routes,
        entities.routes,
        sessions.routes,
        review.routes,
        usage.routes,
        queue.routes,
        doctor.routes,
        probes,
    ):
        routes.add_to(app)
    if mcp_app is not None:
        app.mount("/mcp", mcp_app, name="mcp")
    app.mount("/ui", create_console(hs, keyring=keyring, metrics=app.state.metrics), name="console")
    # The last added runs first: count every request, then refuse oversized bodies.
    app.add_middleware(BodyLimitMiddleware, max_bytes=hs.settings.max_request_bytes)
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    app.add_middleware(HeadAsGet)
    if allowed_hosts is not None:  # first of all: a misdirected request reaches nothing
        app.add_middleware(HostGuardMiddleware, allowed_hosts=allowed_hosts)
    return app


def _add_docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI from files installed with the server, so it works offline."""
    assets = importlib.resources.files("fastapi_offline") / "static"
    app.mount("/docs/assets", StaticFiles(directory=str(assets)), name="docs-assets")

    async def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title="hindsight - API",
            swagger_js_url=f"{root}/docs/assets/swagger-ui-bundle.js",
            swagger_css_url=f"{root}/docs/assets/swagger-ui.css",
            swagger_favicon_url=f"{root}/docs/assets/favicon.png",
        )

    app.add_route("/docs", docs, include_in_schema=False)  # a page, not an operation


class HeadAsGet:
    """HEAD is GET without the body (RFC 9110), on every GET route: a load balancer's or
    monitor's ``HEAD /health`` gets 200, not 405."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


# -- probes: open to every caller; they reveal no owner's data ---------------------------------
probes = Routes("", "probes", errors={})


@probes("GET", "/health")
async def health() -> HealthOut:
    """The process is alive (it does not touch the store)."""
    return HealthOut()


@probes("GET", "/ready", responses={503: {"model": ErrorBody}})
async def ready(request: Request) -> HealthOut:
    """The store and working memory (Redis, when set) answer within the request
    timeout; 503 if not."""
    hs: Hindsight = request.app.state.hindsight
    timeout = hs.settings.request_timeout_seconds
    try:
        await serving.call(timeout, hs.list_memories, _PROBE_OWNER, limit=1)
        await serving.call(timeout, hs.sessions, _PROBE_OWNER)
    except StoreError:
        raise
    except Exception as exc:  # any failure means not ready; say so, as a 503
        raise StoreError(f"the store is not ready: {type(exc).__name__}: {exc}") from exc
    return HealthOut()


@probes(
    "GET",
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE: {"schema": {"type": "string"}}}}},
)
async def metrics(request: Request) -> Response:
    """Prometheus metrics: request counts and latency histograms per operation id."""
    exposition = request.app.state.metrics.exposition()
    return Response(exposition, media_type=CONTENT_TYPE)
