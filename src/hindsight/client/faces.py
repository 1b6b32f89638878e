"""The two clients, :class:`Client` and :class:`AsyncClient`: every operation as a method
that sends its described call, with the library method's name, docstring and signature."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from hindsight.client.admin import AdminOps
from hindsight.client.memories import MemoryOps
from hindsight.client.sessions import SessionOps
from hindsight.client.transport import (
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    RETRY_STATUSES,
    Transport,
    answer,
    backoff,
    default_headers,
    load_httpx,
    request,
)
from hindsight.client.wire import _Call, error

if TYPE_CHECKING:
    import httpx

P = ParamSpec("P")
T = TypeVar("T")


class _Ops(MemoryOps, SessionOps, AdminOps):
    """Each operation: the library's signature in, its HTTP request and reader out."""


def _export_params(owner: str, include_history: bool) -> dict[str, Any]:
    return {"owner": owner, "include_history": include_history}


def _adopt(method: Callable[..., Any], build: Callable[..., Any]) -> None:
    """Give ``method`` the name, docstring and signature (with ``self``) of its operation."""
    functools.update_wrapper(method, build, assigned=("__name__", "__doc__"), updated=())
    method.__qualname__ = build.__name__
    signature = inspect.signature(build)
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return_type = signature.return_annotation
    if isinstance(return_type, str) and return_type.startswith("_Call["):
        return_type = return_type[len("_Call[") : -1]
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[this, *signature.parameters.values()], return_annotation=return_type
    )


def _sync(build: Callable[P, _Call[T]]) -> Callable[Concatenate[Client, P], T]:
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._send(build(*args, **kwargs))

    _adopt(method, build)
    return method


def _async(
    build: Callable[P, _Call[T]],
) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._send(build(*args, **kwargs))

    _adopt(method, build)
    return method


class Client(Transport):
    """The REST API of a hindsight server, with the methods of :class:`hindsight.Hindsight`.

    ``api_key`` is sent as ``Authorization: Bearer <key>``; ``transport`` (an
    ``httpx.BaseTransport``) may route requests elsewhere, e.g. in-process for tests.
    A read, or a write under an idempotency key (retain, observe and import always
    carry one), is sent again up to ``retries`` times after a dropped connection or a
    502/503/504.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        hx = load_httpx()
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self._http: httpx.Client = hx.Client(
            base_url=self.base_url,
            headers=default_headers(api_key),
            timeout=timeout,
            transport=transport,
        )

    def _send(self, call: _Call[T]) -> T:
        hx = load_httpx()
        tries = 1 + (self.retries if call.retryable else 0)
        for attempt in range(tries):
            if attempt:
                time.sleep(backoff(attempt - 1))
            last = attempt + 1 == tries
            try:
                response = self._http.send(request(self._http, call))
            except hx.TransportError as exc:
                if last:
                    raise self._unreachable(exc) from None
                continue
            if last or response.status_code not in RETRY_STATUSES:
                return answer(call, response)
        raise AssertionError("unreachable: the last try answers or raises")

    retain = _sync(_Ops.retain)
    recall = _sync(_Ops.recall)
    get = _sync(_Ops.get)
    list_memories = _sync(_Ops.list_memories)
    stats = _sync(_Ops.stats)
    update = _sync(_Ops.update)
    forget = _sync(_Ops.forget)
    feedback = _sync(_Ops.feedback)
    history = _sync(_Ops.history)
    import_records = _sync(_Ops.import_records)
    observe = _sync(_Ops.observe)
    sessions = _sync(_Ops.sessions)
    window = _sync(_Ops.window)
    consolidate = _sync(_Ops.consolidate)
    close_session = _sync(_Ops.close_session)
    summarize = _sync(_Ops.summarize)
    reflect = _sync(_Ops.reflect)
    review_queue = _sync(_Ops.review_queue)
    pin = _sync(_Ops.pin)
    unpin = _sync(_Ops.unpin)
    restore = _sync(_Ops.restore)
    maintain = _sync(_Ops.maintain)
    approve = _sync(_Ops.approve)
    reject = _sync(_Ops.reject)
    audit = _sync(_Ops.audit)
    verify_audit = _sync(_Ops.verify_audit)
    doctor = _sync(_Ops.doctor)
    usage = _sync(_Ops.usage)
    owners = _sync(_Ops.owners)
    jobs = _sync(_Ops.jobs)
    foresee = _sync(_Ops.foresee)
    entities = _sync(_Ops.entities)
    entity = _sync(_Ops.entity)

    def export(self, owner: str, *, include_history: bool = True) -> Iterator[dict[str, Any]]:
        """Every memory of ``owner`` as a JSON-ready dict, oldest first, streamed."""
        hx = load_httpx()
        params = _export_params(owner, include_history)
        try:
            with self._http.stream("GET", "/v1/export", params=params) as response:
                if response.status_code >= 400:
                    raise error(response.status_code, response.read())
                for line in response.iter_lines():
                    if line.strip():
                        yield json.loads(line)
        except hx.TransportError as exc:
            raise self._unreachable(exc) from None

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(Transport):
    """:class:`Client` for asyncio: the same methods, awaited."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        hx = load_httpx()
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self._http: httpx.AsyncClient = hx.AsyncClient(
            base_url=self.base_url,
            headers=default_headers(api_key),
            timeout=timeout,
            transport=transport,
        )

    async def _send(self, call: _Call[T]) -> T:
        hx = load_httpx()
        tries = 1 + (self.retries if call.retryable else 0)
        for attempt in range(tries):
            if attempt:
                await asyncio.sleep(backoff(attempt - 1))
            last = attempt + 1 == tries
            try:
                response = await self._http.send(request(self._http, call))
            except hx.TransportError as exc:
                if last:
                    raise self._unreachable(exc) from None
                continue
            if last or response.status_code not in RETRY_STATUSES:
                return answer(call, response)
        raise AssertionError("unreachable: the last try answers or raises")

    retain = _async(_Ops.retain)
    recall = _async(_Ops.recall)
    get = _async(_Ops.get)
    list_memories = _async(_Ops.list_memories)
    stats = _async(_Ops.stats)
    update = _async(_Ops.update)
    forget = _async(_Ops.forget)
    feedback = _async(_Ops.feedback)
    history = _async(_Ops.history)
    import_records = _async(_Ops.import_records)
    observe = _async(_Ops.observe)
    sessions = _async(_Ops.sessions)
    window = _async(_Ops.window)
    consolidate = _async(_Ops.consolidate)
    close_session = _async(_Ops.close_session)
    summarize = _async(_Ops.summarize)
    reflect = _async(_Ops.reflect)
    review_queue = _async(_Ops.review_queue)
    pin = _async(_Ops.pin)
    unpin = _async(_Ops.unpin)
    restore = _async(_Ops.restore)
    maintain = _async(_Ops.maintain)
    approve = _async(_Ops.approve)
    reject = _async(_Ops.reject)
    audit = _async(_Ops.audit)
    verify_audit = _async(_Ops.verify_audit)
    doctor = _async(_Ops.doctor)
    usage = _async(_Ops.usage)
    owners = _async(_Ops.owners)
    jobs = _async(_Ops.jobs)
    foresee = _async(_Ops.foresee)
    entities = _async(_Ops.entities)
    entity = _async(_Ops.entity)

    async def export(
        self, owner: str, *, include_history: bool = True
    ) -> AsyncIterator[dict[str, Any]]:
        """Every memory of ``owner`` as a JSON-ready dict, oldest first, streamed."""
        hx = load_httpx()
        params = _export_params(owner, include_history)
        try:
            async with self._http.stream("GET", "/v1/export", params=params) as response:
                if response.status_code >= 400:
                    raise error(response.status_code, await response.aread())
                async for line in response.aiter_lines():
                    if line.strip():
                        yield json.loads(line)
        except hx.TransportError as exc:
            raise self._unreachable(exc) from None

    async def close(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
