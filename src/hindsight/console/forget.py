"""Forgetting by filter in the console: choose, preview, confirm. The actions module
runs the confirmed forget with :func:`forgetting`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from starlette.responses import Response

from hindsight.console.call import Call
from hindsight.console.markup import button, field, form, hidden, join, select, table, tag
from hindsight.console.widgets import memory_link, owner_picker, readable_owners
from hindsight.errors import HindsightError
from hindsight.models import ForgetReceipt, Memory, Source

FORGET_FILTERS: Final = ("owner", "session_id", "since", "until", "source", "principal")
SOURCES: Final = [s.value for s in Source]


def forgetting(
    call: Call, owner: str, args: dict[str, str | None], *, dry_run: bool
) -> Callable[[], ForgetReceipt]:
    """The forget (or its preview) of ``owner``'s memories that ``args`` choose."""
    return lambda: call.hs.forget(
        owner=owner,
        session_id=args["session_id"],
        since=args["since"],
        until=args["until"],
        source=args["source"],
        principal=args["principal"],
        dry_run=dry_run,
    )


def forget_args(values: dict[str, str | None]) -> dict[str, str | None]:
    return {k: values.get(k) or None for k in FORGET_FILTERS}


async def forget(call: Call) -> Response:
    args = forget_args({k: call.arg(k) for k in FORGET_FILTERS})
    owners = await readable_owners(call)
    filters = form(
        "/ui/forget",
        call.csrf,
        owner_picker(owners, args["owner"]),
        field("Session", "session_id", args["session_id"] or ""),
        field("Since", "since", args["since"] or "", placeholder="2026-01-01T00:00:00Z"),
        field("Until", "until", args["until"] or ""),
        select("Source", "source", SOURCES, args["source"]),
        field("Written by (key)", "principal", args["principal"] or ""),
        button("Preview"),
        method="get",
        class_="filters",
    )
    owner = args.pop("owner")
    if not owner:
        return call.html(
            "Forget",
            join([filters, tag("p", "Choose what to forget, then preview it.")]),
            active="Forget",
        )
    preview = await call.run(forgetting(call, owner, args, dry_run=True))
    shown: list[Memory] = []
    for memory_id in preview.deleted_ids[:20]:
        try:
            shown.append(await call.run(call.hs.get, memory_id))
        except HindsightError:
            continue
    confirm = (
        form(
            "/ui/forget",
            call.csrf,
            hidden("owner", owner),
            *(hidden(k, v) for k, v in args.items() if v),
            button(f"Forget these {preview.count} memories", danger=True),
        )
        if preview.count
        else tag("p", "Nothing matches.")
    )
    body = join(
        [
            filters,
            tag(
                "h2",
                f"Would forget {len(preview.deleted_ids)}, and {len(preview.derived_ids)} "
                "derived from them",
            ),
            table(
                ["content", "kind", "observed"],
                [[memory_link(m), m.kind.value, m.observed_at] for m in shown],
            ),
            confirm,
        ]
    )
    return call.html("Forget", body, active="Forget")
