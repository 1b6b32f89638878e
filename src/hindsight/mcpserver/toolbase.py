"""What every group of tools shares: the engine, the caller of the current request, the
library call off the event loop, and the answers two groups give alike (what a write
stored, a deletion's receipt)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from hindsight import serving, views
from hindsight.access import Principal
from hindsight.engine import Hindsight
from hindsight.models import ForgetReceipt, RetainResult

P = ParamSpec("P")
T = TypeVar("T")


class ToolGroup:
    """Tools bound to one engine and one way of knowing the caller.

    Each async method a group lists in :meth:`tools` is a tool: its docstring is the
    tool's description and its annotated parameters are the argument schema. The blocking
    work (access checks that read the store, the library call, shaping the answer) runs in
    a worker thread through :func:`hindsight.serving.call`.
    """

    def __init__(self, hs: Hindsight, principal: Callable[[], Principal]) -> None:
        self._hs = hs
        self._principal = principal

    def tools(self) -> list[Callable[..., Any]]:
        """The tool methods, in the order a client lists them."""
        raise NotImplementedError

    def _caller(self) -> Hindsight:
        """The engine as the current request's caller sees it (read in the request's task)."""
        return self._hs.as_principal(self._principal())

    async def _call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await serving.call(self._hs.settings.request_timeout_seconds, fn, *args, **kwargs)

    def _retained(self, hs: Hindsight, result: RetainResult) -> dict[str, Any]:
        extracted = [hs.get(mid) for mid in result.created]
        first = [*result.episodes, *result.created, *result.updated]
        return {
            "id": first[0] if first else None,
            **views.retained(result),
            "extracted": [
                {"id": m.id, "kind": m.kind.value, "content": m.content, "status": m.status.value}
                for m in extracted
            ],
        }


def receipt(receipt: ForgetReceipt) -> dict[str, Any]:
    """A deletion's receipt, as memory_delete and a rejecting review answer it."""
    return {
        "ok": True,
        "receipt_id": receipt.id,
        "deleted_ids": receipt.deleted_ids,
        "derived_ids": receipt.derived_ids,
        "restored_ids": receipt.restored_ids,
    }
