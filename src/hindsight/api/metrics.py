"""Prometheus metrics: request counts and latencies per operation id, served at ``/metrics``.

Each app has its own registry, so several apps in one process (tests) do not clash.
"""

from __future__ import annotations

import time
from typing import Final

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client import generate_latest as _generate_latest
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
CONTENT_TYPE: Final = CONTENT_TYPE_LATEST


class Metrics:
    """The counters and histograms of one app."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "hindsight_http_requests",
            "HTTP requests answered, by operation id and status code.",
            ["operation", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "hindsight_http_request_duration_seconds",
            "Time to answer an HTTP request (a streamed body: until its end), by operation id.",
            ["operation"],
            buckets=BUCKETS,
            registry=self.registry,
        )

    def exposition(self) -> bytes:
        return _generate_latest(self.registry)


def operation_of(route: BaseRoute | None) -> str:
    """The label of a matched route: its operation id, a mount's name, or ``unmatched``."""
    if route is None:
        return "unmatched"
    operation = getattr(route, "operation_id", None) or getattr(route, "name", None)
    return str(operation) if operation else "unmatched"


class MetricsMiddleware:
    """Counts and times every HTTP request under the operation id of the route that took it."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # unless a response starts
        started = time.perf_counter()

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            # the router records the matched route in the (shared) scope
            operation = operation_of(scope.get("route"))
            self.metrics.requests.labels(operation, scope["method"], str(status)).inc()
            self.metrics.latency.labels(operation).observe(time.perf_counter() - started)
