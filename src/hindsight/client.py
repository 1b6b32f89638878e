"""A Python client of the REST API with the library's methods: switch from embedded in one line.

>>> memory = Hindsight()                                         # doctest: +SKIP
>>> memory = Client("http://127.0.0.1:8765", api_key="...")     # doctest: +SKIP

:class:`Client` (sync) and :class:`AsyncClient` take the same arguments as
:class:`hindsight.Hindsight`, return the same types (:class:`~hindsight.Memory`,
:class:`~hindsight.RecallResult`, ...), and raise the same errors, rebuilt from the
server's error bodies. A server that cannot be reached raises :class:`StoreError`.
Needs the ``client`` extra (httpx).

Each operation is written once below, as a function that describes its HTTP request
and how to read the answer; both clients turn those into methods.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import random
import time
import uuid
from collections.abc import (
    AsyncIterator,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, Concatenate, Final, Generic, ParamSpec, TypeVar, Unpack
from urllib.parse import quote

from hindsight import errors, validate, views
from hindsight.engine import UNSET, _Unset
from hindsight.foresight import Item
from hindsight.guard.review import ReviewItem
from hindsight.jobs.kinds import JobQueue
from hindsight.lifecycle import MaintainReport
from hindsight.lifecycle.history import History
from hindsight.models import (
    ForgetReceipt,
    Kind,
    Memory,
    RecallResult,
    RetainResult,
    Source,
    Status,
    Turn,
)
from hindsight.recall.request import Owners, RecallOptions, RecallRequest, request_of
from hindsight.store import AuditEntry, StoreStats, UsageRow, WorkingTurn

if TYPE_CHECKING:
    import httpx

DEFAULT_TIMEOUT: Final = 30.0
DEFAULT_RETRIES: Final = 2
P = ParamSpec("P")
T = TypeVar("T")
_ERRORS: Final[dict[str, type[errors.HindsightError]]] = {
    cls.__name__: cls
    for cls in (
        errors.ValidationError,
        errors.NotFoundError,
        errors.ConflictError,
        errors.EmbeddingMismatchError,
        errors.WriteRefusedError,
        errors.AccessError,
        errors.AuthenticationError,
        errors.PermissionDeniedError,
        errors.StoreError,
        errors.StoreTimeoutError,
        errors.EmbeddingError,
    )
}
_BY_STATUS: Final[dict[int, type[errors.HindsightError]]] = {
    400: errors.ValidationError,
    401: errors.AuthenticationError,
    403: errors.PermissionDeniedError,
    404: errors.NotFoundError,
    409: errors.ConflictError,
    413: errors.ValidationError,
    422: errors.ValidationError,
    503: errors.StoreError,
    504: errors.StoreTimeoutError,
}


# -- the wire: requests described, answers read ---------------------------------------------
@dataclass(frozen=True, slots=True)
class _Call(Generic[T]):
    """One HTTP request, and how to turn its JSON answer into the library's return value."""

    method: str
    path: str
    read: Callable[[Any], T]
    params: dict[str, Any] | None = None
    body: Any = None
    headers: dict[str, str] | None = None

    @property
    def retryable(self) -> bool:
        """Whether sending it again is safe: a read, or a write under an idempotency key."""
        return self.method == "GET" or "Idempotency-Key" in (self.headers or {})

    def content(self) -> bytes | None:
        if self.body is None:
            return None
        return views.dumps(self.body).encode("utf-8")


def _error(status: int, content: bytes) -> errors.HindsightError:
    """The library error an error answer stands for."""
    try:
        detail = json.loads(content)["error"]
        type_, message = str(detail["type"]), str(detail["message"])
    except (ValueError, KeyError, TypeError):
        type_, message = "", f"HTTP {status}: {content[:200].decode('utf-8', 'replace')}"
    cls = _ERRORS.get(type_) or _BY_STATUS.get(status, errors.HindsightError)
    return cls(message)


def _memory(data: Any) -> Memory:
    return views.memory_from(data)


def _memories(key: str) -> Callable[[Any], list[Memory]]:
    return lambda data: [views.memory_from(m) for m in data[key]]


def _recalled(data: Any) -> list[RecallResult]:
    return [views.recall_hit_from(hit) for hit in data["results"]]


def _turns(data: Any) -> list[WorkingTurn]:
    return [views.turn_from(t) for t in data["turns"]]


def _observed(data: Any) -> RetainResult | None:
    return None if data["retained"] is None else views.retained_from(data["retained"])


def _value(x: Any) -> Any:
    return x.value if isinstance(x, Enum) else x


def _iso(x: datetime | str | None) -> str | None:
    return x.isoformat() if isinstance(x, datetime) else x


def _memory_id(memory_id: str) -> str:
    if not isinstance(memory_id, str) or not memory_id:
        raise errors.NotFoundError(f"no memory with id {memory_id!r}")
    return quote(memory_id, safe="")


def _memory_path(memory_id: str) -> str:
    return f"/v1/memories/{_memory_id(memory_id)}"


def _review_path(memory_id: str, decision: str) -> str:
    return f"/v1/review/{_memory_id(memory_id)}/{decision}"


def _session_path(session_id: str, action: str) -> str:
    sid = validate.session_id(session_id)
    if sid is None:
        raise errors.ValidationError("session_id is required for working memory")
    return f"/v1/sessions/{quote(sid, safe='')}/{action}"


# -- the operations, with the library's signatures ---------------------------------------------
class _Ops:
    """Each operation: the library's signature in, its HTTP request and reader out."""

    @staticmethod
    def retain(
        owner: str,
        content: str | None = None,
        *,
        messages: Sequence[Turn | Mapping[str, Any]] | None = None,
        kind: Kind | str | None = None,
        session_id: str | None = None,
        source: Source | str = Source.USER,
        observed_at: datetime | str | None = None,
        confidence: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        request_id: str | None = None,
        expires_at: datetime | str | None = None,
    ) -> _Call[RetainResult]:
        """Remember a message, a conversation, or (with ``kind``) one memory as given.

        The request carries ``request_id`` (by default a new one), so the client may send
        it again after a timeout or a dropped connection without storing it twice."""
        body = {
            "owner": owner,
            "content": content,
            "messages": None if messages is None else list(messages),
            "kind": _value(kind),
            "session_id": session_id,
            "source": _value(source),
            "observed_at": observed_at,
            "confidence": confidence,
            "metadata": metadata,
            **({} if expires_at is None else {"expires_at": expires_at}),
        }
        return _Call(
            "POST", "/v1/memories", views.retained_from, body=body, headers=_once(request_id)
        )

    @staticmethod
    def recall(
        owners: Owners | RecallRequest,
        query: str | None = None,
        **options: Unpack[RecallOptions],
    ) -> _Call[list[RecallResult]]:
        """The memories that best answer ``query``, each with why it came back; or those
        of one :class:`~hindsight.recall.request.RecallRequest` given alone."""
        request = request_of(owners, query, options)
        return _Call("POST", "/v1/recall", _recalled, body=request.to_json())

    @staticmethod
    def get(memory_id: str) -> _Call[Memory]:
        """One memory by id."""
        return _Call("GET", _memory_path(memory_id), _memory)

    @staticmethod
    def list_memories(
        owner: str,
        *,
        kinds: Sequence[Kind | str] | None = None,
        session_id: str | None = None,
        include_history: bool = False,
        status: Status | str = Status.ACTIVE,
        limit: int = 50,
        offset: int = 0,
    ) -> _Call[list[Memory]]:
        """An owner's memories, newest observed first, a page at a time."""
        params = {
            "owner": owner,
            "kind": None if kinds is None else [_value(x) for x in kinds],
            "session_id": session_id,
            "include_history": include_history,
            "status": _value(status),
            "limit": limit,
            "offset": offset,
        }
        return _Call("GET", "/v1/memories", _memories("memories"), params=params)

    @staticmethod
    def foresee(owner: str, now: datetime | str | None = None, days: int = 14) -> _Call[list[Item]]:
        """What lies ahead for ``owner``: open events, commitments, routines and goals due
        from ``now``'s day to ``days`` days ahead, then the undated ones; soonest first."""

        def read(data: Any) -> list[Item]:
            return [views.foresight_item_from(item) for item in data["items"]]

        params = {"owner": owner, "now": _iso(now), "days": days}
        return _Call("GET", "/v1/foresight", read, params=params)

    @staticmethod
    def owners() -> _Call[list[str]]:
        """The owners that have memories and that the key may read, sorted."""
        return _Call("GET", "/v1/owners", lambda data: list(data["owners"]))

    @staticmethod
    def stats(owner: str | None = None) -> _Call[StoreStats]:
        """Counts by kind and status, and the store's size and model."""
        return _Call("GET", "/v1/stats", views.stats_from, params={"owner": owner})

    @staticmethod
    def update(
        memory_id: str,
        *,
        content: str | _Unset = UNSET,
        metadata: Mapping[str, Any] | _Unset = UNSET,
        confidence: float | _Unset = UNSET,
        query_hints: Sequence[str] | _Unset = UNSET,
        status: Status | str | _Unset = UNSET,
        expires_at: datetime | str | _Unset | None = UNSET,
    ) -> _Call[Memory]:
        """Change a memory in place; new content is re-embedded. ``expires_at=None``
        clears an expiry."""
        given = {
            "content": content,
            "metadata": metadata,
            "confidence": confidence,
            "query_hints": query_hints,
            "status": status,
            "expires_at": expires_at,
        }
        body = {name: _value(v) for name, v in given.items() if not isinstance(v, _Unset)}
        return _Call("PATCH", _memory_path(memory_id), _memory, body=body)

    @staticmethod
    def feedback(memory_id: str, useful: bool) -> _Call[Memory]:
        """Say whether a memory was of use: useful raises its confidence toward its trust
        and marks it used; not useful lowers it. Returns the memory as changed."""
        if not isinstance(useful, bool):
            raise errors.ValidationError("useful must be true or false")
        return _Call(
            "POST", _memory_path(memory_id) + "/feedback", _memory, body={"useful": useful}
        )

    @staticmethod
    def history(memory_id: str) -> _Call[History]:
        """The versions of a memory, oldest first, each with who changed what and when."""
        return _Call("GET", _memory_path(memory_id) + "/history", views.history_from)

    @staticmethod
    def forget(
        memory_id: str | None = None,
        *,
        owner: str | None = None,
        session_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        source: Source | str | None = None,
        principal: str | None = None,
        dry_run: bool = False,
    ) -> _Call[ForgetReceipt]:
        """Delete one memory, or an owner's memories: all, or those of one session, period,
        source or writer (``principal``, an API key's name), as given."""
        if memory_id is not None:
            if session_id is not None or since or until or source or principal:
                raise errors.ValidationError("give a memory id, or an owner with filters, not both")
            params = {"owner": owner, "dry_run": dry_run or None}
            return _Call("DELETE", _memory_path(memory_id), views.receipt_from, params=params)
        if owner is None:
            raise errors.ValidationError("give a memory id or an owner")
        body = {
            "owner": owner,
            "session_id": session_id,
            "since": since,
            "until": until,
            "source": _value(source),
            "principal": principal,
            "dry_run": dry_run,
        }
        return _Call("POST", "/v1/forget", views.receipt_from, body=body)

    @staticmethod
    def pin(memory_id: str) -> _Call[Memory]:
        """Pin a memory: it neither decays nor is archived until unpinned."""
        return _Call("POST", _memory_path(memory_id) + "/pin", _memory)

    @staticmethod
    def unpin(memory_id: str) -> _Call[Memory]:
        """Let a pinned memory decay and archive again."""
        return _Call("DELETE", _memory_path(memory_id) + "/pin", _memory)

    @staticmethod
    def restore(memory_id: str) -> _Call[Memory]:
        """Make an archived memory active again (restoring counts as using it)."""
        return _Call("POST", _memory_path(memory_id) + "/restore", _memory)

    @staticmethod
    def maintain(as_of: datetime | str | None = None) -> _Call[MaintainReport]:
        """Run the maintenance pass over every owner, as at ``as_of`` (default: the
        server's now); needs a key that writes every owner."""
        return _Call(
            "POST", "/v1/maintain", lambda data: MaintainReport(**data), body={"as_of": as_of}
        )

    @staticmethod
    def review_queue(
        owner: str | None = None, *, limit: int = 50, offset: int = 0
    ) -> _Call[list[ReviewItem]]:
        """What the guard held (quarantined or pending review), newest first, each with
        the memories it conflicts with: of ``owner``, or of every owner."""

        def read(data: Any) -> list[ReviewItem]:
            return [views.review_item_from(item) for item in data["items"]]

        params = {"owner": owner, "limit": limit, "offset": offset}
        return _Call("GET", "/v1/review", read, params=params)

    @staticmethod
    def approve(memory_id: str) -> _Call[list[Memory]]:
        """Make a held memory active as if it had passed the guard (with what was held
        with it); returns them, the memory first."""
        return _Call("POST", _review_path(memory_id, "approve"), _memories("memories"))

    @staticmethod
    def reject(
        memory_id: str, *, forget: bool | None = None
    ) -> _Call[list[Memory] | ForgetReceipt]:
        """Turn down a held memory (with what was held with it): kept as ``rejected``
        history, or forgotten (with its receipt) when ``forget`` (by default the
        server's ``on_reject``) says so."""

        def read(data: Any) -> list[Memory] | ForgetReceipt:
            if "memories" in data:
                return [views.memory_from(m) for m in data["memories"]]
            return views.receipt_from(data)

        return _Call("POST", _review_path(memory_id, "reject"), read, body={"forget": forget})

    @staticmethod
    def audit(
        owner: str | None = None,
        *,
        principal: str | None = None,
        action: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> _Call[list[AuditEntry]]:
        """Audit entries, newest first, filtered by owner, who, what and when (needs an
        audit key); ``before_seq`` pages back."""

        def read(data: Any) -> list[AuditEntry]:
            return [views.audit_entry_from(e) for e in data["entries"]]

        params = {
            "owner": owner,
            "principal": principal,
            "action": action,
            "since": _iso(since),
            "until": _iso(until),
            "limit": limit,
            "before_seq": before_seq,
        }
        return _Call("GET", "/v1/audit", read, params=params)

    @staticmethod
    def usage(
        owner: str | None = None, *, since: datetime | str | None = None
    ) -> _Call[list[UsageRow]]:
        """LLM use (calls, failures, retries, dropped answers, tokens, cost) by owner,
        operation and model, at or after ``since``: of ``owner``, or of every owner."""

        def read(data: Any) -> list[UsageRow]:
            return [views.usage_row_from(r) for r in data["usage"]]

        return _Call("GET", "/v1/usage", read, params={"owner": owner, "since": _iso(since)})

    @staticmethod
    def jobs(
        owner: str | None = None, *, states: Sequence[str] | None = None, limit: int = 50
    ) -> _Call[JobQueue]:
        """The background job queue: counts by state and the latest jobs, newest first;
        of ``owner``, or of every owner."""
        params = {"owner": owner, "state": list(states) if states else None, "limit": limit}
        return _Call("GET", "/v1/jobs", views.job_queue_from, params=params)

    @staticmethod
    def verify_audit() -> _Call[dict[str, Any]]:
        """Check the audit log's hash chain: ``{"entries": n, "intact": bool,
        "broken_at": seq or None}`` (needs an audit key that reads every owner)."""
        return _Call("GET", "/v1/audit/verify", dict)

    @staticmethod
    def doctor(*, check_endpoints: bool = True) -> _Call[dict[str, Any]]:
        """What the server is configured with and whether each endpoint answers (see
        :mod:`hindsight.doctor`); never a key. Needs a key that reads every owner."""
        return _Call("GET", "/v1/doctor", dict, params={"check_endpoints": check_endpoints})

    @staticmethod
    def import_records(
        records: Iterable[Mapping[str, Any]], *, request_id: str | None = None
    ) -> _Call[dict[str, int]]:
        """Load exported dicts, re-embedding them; ids the owner already holds are skipped
        (sent once, as for :meth:`retain`)."""
        body = {"records": list(records)}
        return _Call("POST", "/v1/import", dict, body=body, headers=_once(request_id))

    @staticmethod
    def observe(
        owner: str,
        session_id: str,
        content: str,
        *,
        role: str = "user",
        speaker: str | None = None,
        tool_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        request_id: str | None = None,
    ) -> _Call[RetainResult | None]:
        """Add a turn to a session's working memory; returns what was retained, if it moved
        (kept once under ``request_id``, by default a new one, as for :meth:`retain`)."""
        body = {
            "owner": owner,
            "content": content,
            "role": role,
            "speaker": speaker,
            "tool_name": tool_name,
            "metadata": metadata,
        }
        path = _session_path(session_id, "turns")
        return _Call("POST", path, _observed, body=body, headers=_once(request_id))

    @staticmethod
    def sessions(owner: str) -> _Call[list[tuple[str, int, int]]]:
        """An owner's open sessions as (session id, turns, estimated tokens), latest first."""

        def read(data: Any) -> list[tuple[str, int, int]]:
            return [(s["session_id"], s["turns"], s["tokens"]) for s in data["sessions"]]

        return _Call("GET", "/v1/sessions", read, params={"owner": owner})

    @staticmethod
    def window(owner: str, session_id: str) -> _Call[list[WorkingTurn]]:
        """A session's working memory, oldest first."""
        return _Call("GET", _session_path(session_id, "turns"), _turns, params={"owner": owner})

    @staticmethod
    def consolidate(owner: str, session_id: str) -> _Call[RetainResult]:
        """Move a session's working memory into long-term memory and clear the window."""
        return _Call(
            "POST",
            _session_path(session_id, "consolidate"),
            views.retained_from,
            body={"owner": owner},
        )

    @staticmethod
    def close_session(owner: str, session_id: str) -> _Call[RetainResult]:
        """End a session: consolidate what is left of its window."""
        return _Call(
            "POST", _session_path(session_id, "close"), views.retained_from, body={"owner": owner}
        )

    @staticmethod
    def summarize(owner: str, session_id: str) -> _Call[Memory]:
        """Summarize a session into one long-term memory, and return it."""
        return _Call("POST", _session_path(session_id, "summarize"), _memory, body={"owner": owner})

    @staticmethod
    def reflect(
        owner: str,
        *,
        session_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
    ) -> _Call[list[Memory]]:
        """Reflect on an owner's memories (one session, or a period); returns what was written."""
        body = {"owner": owner, "session_id": session_id, "since": since, "until": until}
        return _Call("POST", "/v1/reflect", _memories("memories"), body=body)


def _export_params(owner: str, include_history: bool) -> dict[str, Any]:
    return {"owner": owner, "include_history": include_history}


# -- the two clients ------------------------------------------------------------------------------
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


def _httpx() -> Any:
    try:
        import httpx
    except ImportError:
        raise errors.MissingExtraError("client", "httpx") from None
    return httpx


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"accept": "application/json", "content-type": "application/json"}
    if api_key is not None:
        headers["authorization"] = f"Bearer {api_key}"
    return headers


def _once(request_id: str | None) -> dict[str, str]:
    return {"Idempotency-Key": request_id or uuid.uuid4().hex}


def _request(http: Any, call: _Call[Any]) -> Any:
    params = {k: v for k, v in (call.params or {}).items() if v is not None}
    return http.build_request(
        call.method, call.path, params=params, content=call.content(), headers=call.headers
    )


RETRY_STATUSES: Final = frozenset({502, 503, 504})


def _answer(call: _Call[T], response: Any) -> T:
    """What the call returns, or the library error its answer stands for."""
    if response.status_code >= 400:
        raise _error(response.status_code, response.content)
    return call.read(response.json())


def _backoff(attempt: int) -> float:
    """Seconds before the next try: 0.25, 0.5, 1, ... with jitter, at most 4."""
    return float(min(4.0, 0.25 * 2**attempt) * random.uniform(0.5, 1.0))


class _Transport:
    """What both clients share: the base URL, the error mapping for transport failures."""

    base_url: str
    timeout: float

    def _unreachable(self, exc: Exception) -> errors.HindsightError:
        hx = _httpx()
        if isinstance(exc, hx.TimeoutException):
            return errors.StoreTimeoutError(
                f"the hindsight server at {self.base_url} did not answer within {self.timeout:g} s"
            )
        return errors.StoreError(f"cannot reach the hindsight server at {self.base_url}: {exc}")


class Client(_Transport):
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
        hx = _httpx()
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self._http: httpx.Client = hx.Client(
            base_url=self.base_url,
            headers=_headers(api_key),
            timeout=timeout,
            transport=transport,
        )

    def _send(self, call: _Call[T]) -> T:
        hx = _httpx()
        tries = 1 + (self.retries if call.retryable else 0)
        for attempt in range(tries):
            if attempt:
                time.sleep(_backoff(attempt - 1))
            last = attempt + 1 == tries
            try:
                response = self._http.send(_request(self._http, call))
            except hx.TransportError as exc:
                if last:
                    raise self._unreachable(exc) from None
                continue
            if last or response.status_code not in RETRY_STATUSES:
                return _answer(call, response)
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

    def export(self, owner: str, *, include_history: bool = True) -> Iterator[dict[str, Any]]:
        """Every memory of ``owner`` as a JSON-ready dict, oldest first, streamed."""
        hx = _httpx()
        params = _export_params(owner, include_history)
        try:
            with self._http.stream("GET", "/v1/export", params=params) as response:
                if response.status_code >= 400:
                    raise _error(response.status_code, response.read())
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


class AsyncClient(_Transport):
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
        hx = _httpx()
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self._http: httpx.AsyncClient = hx.AsyncClient(
            base_url=self.base_url,
            headers=_headers(api_key),
            timeout=timeout,
            transport=transport,
        )

    async def _send(self, call: _Call[T]) -> T:
        hx = _httpx()
        tries = 1 + (self.retries if call.retryable else 0)
        for attempt in range(tries):
            if attempt:
                await asyncio.sleep(_backoff(attempt - 1))
            last = attempt + 1 == tries
            try:
                response = await self._http.send(_request(self._http, call))
            except hx.TransportError as exc:
                if last:
                    raise self._unreachable(exc) from None
                continue
            if last or response.status_code not in RETRY_STATUSES:
                return _answer(call, response)
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

    async def export(
        self, owner: str, *, include_history: bool = True
    ) -> AsyncIterator[dict[str, Any]]:
        """Every memory of ``owner`` as a JSON-ready dict, oldest first, streamed."""
        hx = _httpx()
        params = _export_params(owner, include_history)
        try:
            async with self._http.stream("GET", "/v1/export", params=params) as response:
                if response.status_code >= 400:
                    raise _error(response.status_code, await response.aread())
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


__all__ = ["AsyncClient", "Client"]
