"""Oversight in the console: the review queue (memories the guard held, to approve or
reject) and the audit log (filtered, paged, exported as JSON lines)."""

from __future__ import annotations

import json
from typing import Any, Final

from starlette.responses import Response, StreamingResponse

from hindsight import views
from hindsight.console.call import Call
from hindsight.console.markup import Html, button, field, form, h, join, link, table, tag, url
from hindsight.console.widgets import clip, memory_link, readable_owners, reads_all


# -- review queue -----------------------------------------------------------------------------
async def review(call: Call) -> Response:
    owner = call.arg("owner")
    if owner is None and not reads_all(call):
        names: list[str | None] = list(await readable_owners(call))  # a scoped key: its own owners
    else:
        names = [owner]
    held: list[Any] = []
    for name in names:
        held += await call.run(call.hs.review_queue, name, limit=200)
    rows = [
        [
            Html(
                f'<input type="checkbox" name="id" value="{h(item.memory.id)}" '
                f'aria-label="select {h(item.memory.id)}">'
            ),
            memory_link(item.memory),
            item.memory.owner,
            item.memory.review.reason if item.memory.review else "",
            join([memory_link(c) for c in item.conflicts], Html("<br>")) or "-",
            item.memory.provenance.source.value,
        ]
        for item in held
    ]
    if not rows:
        return call.html(
            "Review queue",
            tag("p", "Nothing is held for review."),
            active="Review",
            notice=call.arg("done"),
        )
    body = form(
        "/ui/review/decide",
        call.csrf,
        tag(
            "fieldset",
            tag("legend", f"{len(rows)} held: choose, then decide"),
            Html(
                '<p><label class="inline"><input type="checkbox" data-select-all="id"> '
                "select all</label></p>"
            ),
            table(["", "held memory", "owner", "why", "conflicts with", "source"], rows),
        ),
        tag(
            "div",
            button("Approve selected", name="decision", value="approve"),
            button("Reject selected", name="decision", value="reject", danger=True),
            class_="actions",
        ),
    )
    return call.html("Review queue", body, active="Review", notice=call.arg("done"))


# -- audit log --------------------------------------------------------------------------------
_AUDIT_FILTERS: Final = ("owner", "principal", "action", "since", "until")


async def _audit_entries(call: Call, limit: int) -> list[Any]:
    args = {k: call.arg(k) for k in _AUDIT_FILTERS}
    before = call.arg("before")
    return await call.run(
        call.hs.audit,
        args.pop("owner"),
        **args,
        limit=limit,
        before_seq=int(before) if before and before.isdigit() else None,
    )


async def audit(call: Call) -> Response:
    args = {k: call.arg(k) for k in _AUDIT_FILTERS}
    filters = form(
        "/ui/audit",
        call.csrf,
        field("Owner", "owner", args["owner"] or ""),
        field("Who (key)", "principal", args["principal"] or ""),
        field("Action", "action", args["action"] or ""),
        field("Since", "since", args["since"] or "", placeholder="2026-01-01T00:00:00Z"),
        field("Until", "until", args["until"] or ""),
        button("Filter"),
        method="get",
        class_="filters",
    )
    entries = await _audit_entries(call, 100)
    rows = [
        [
            e.seq,
            e.at,
            e.principal,
            e.owner or "-",
            e.action,
            join([link(i, url("/ui/memory", id=i)) for i in e.memory_ids[:5]], " ")
            + (f" (+{len(e.memory_ids) - 5})" if len(e.memory_ids) > 5 else ""),
            clip(json.dumps(e.detail, default=str)),
        ]
        for e in entries
    ]
    more = (
        link("Older", url("/ui/audit", **args, before=entries[-1].seq))
        if len(entries) == 100
        else ""
    )
    export = link("Export these as JSON lines", url("/ui/audit.jsonl", **args))
    body = join(
        [
            filters,
            tag("p", export),
            table(["seq", "at", "who", "owner", "action", "memories", "detail"], rows),
            tag("nav", more, class_="pager"),
        ]
    )
    return call.html("Audit log", body, active="Audit")


async def audit_export(call: Call) -> Response:
    entries = await _audit_entries(call, 1_000)
    lines = (views.dumps(views.audit_entry(e)) + "\n" for e in entries)
    return StreamingResponse(
        lines,
        media_type="application/x-ndjson",
        headers={"content-disposition": 'attachment; filename="hindsight-audit.jsonl"'},
    )
