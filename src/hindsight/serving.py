"""What the REST and MCP servers share: running a library call off the event loop, in
time, and saying what went wrong without saying how the server is built."""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import anyio
import anyio.to_thread

from hindsight.errors import HindsightError, StoreError, StoreTimeoutError

P = ParamSpec("P")
T = TypeVar("T")
_log = logging.getLogger("hindsight.server")


def public_message(exc: HindsightError) -> str:
    """What a caller is told of ``exc``. A store failure's own words (socket paths,
    database messages) go to the server's log under an incident id, and the caller gets
    that id; every other error says what was wrong, as the library does."""
    if not isinstance(exc, StoreError) or isinstance(exc, StoreTimeoutError):
        return str(exc)
    incident = uuid.uuid4().hex[:12]
    _log.warning("store unavailable (incident %s): %s", incident, exc)
    return f"the store is unavailable; try again shortly (incident {incident} in the server log)"


async def call(timeout: float, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking library call in a worker thread; StoreTimeoutError after ``timeout`` s.

    The caller gets its answer (or the error) in time; a call that overruns finishes
    in its thread, and, as each write is one transaction, lands whole or not at all.
    """
    with anyio.move_on_after(timeout) as scope:
        return await anyio.to_thread.run_sync(
            functools.partial(fn, *args, **kwargs), abandon_on_cancel=True
        )
    assert scope.cancelled_caught
    raise StoreTimeoutError(
        f"the store did not answer within {timeout:g} s; a write goes on and lands whole "
        "(or not at all, if it fails): send it again with the same request_id "
        "(Idempotency-Key) to get its result without storing it twice"
    )
