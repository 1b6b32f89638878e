"""The LLM layer in the console: its job queue (retrying the failed) and what it used,
in tokens and cost."""

from __future__ import annotations

import json

from starlette.responses import Response

from hindsight.console.call import Call
from hindsight.console.markup import bars, button, form, hidden, join, table, tag
from hindsight.console.widgets import clip, owner_form, readable_owners, reads_all


async def llm(call: Call) -> Response:
    owners = await readable_owners(call)
    everyone = reads_all(call)
    owner = call.arg("owner") or (None if everyone else (owners[0] if owners else None))
    picker = owner_form(call, "/ui/llm", owners, owner)
    if owner is None and not everyone:
        return call.html("LLM work", join([picker, tag("p", "No owner yet.")]), active="LLM")
    queue = await call.run(call.hs.jobs, owner, limit=50)
    usage = await call.run(call.hs.usage, owner)
    jobs = table(
        ["job", "state", "operation", "owner", "tries", "created", "outcome"],
        [
            [
                tag("code", j.id),
                j.state,
                j.operation,
                j.owner,
                j.attempts,
                j.created_at,
                clip(j.error or json.dumps(j.result or {}, default=str)),
            ]
            for j in queue.jobs
        ],
        caption="The latest jobs, newest first",
    )
    spent = table(
        [
            "owner",
            "operation",
            "model",
            "calls",
            "failed",
            "dropped",
            "dropped items",
            "prompt",
            "completion",
            "cost",
        ],
        [
            [
                r.owner,
                r.operation,
                r.model or "-",
                r.calls,
                r.failures,
                r.dropped,
                r.dropped_items,
                r.prompt_tokens,
                r.completion_tokens,
                "-" if r.cost is None else f"${r.cost:.4f}",
            ]
            for r in usage
        ],
        caption="Tokens and cost, since the first call",
    )
    retry = (
        form(
            "/ui/llm/retry",
            call.csrf,
            hidden("owner", owner or ""),
            button(f"Queue the {queue.counts['failed']} failed job(s) again"),
        )
        if queue.counts["failed"]
        else ""
    )
    body = join(
        [
            picker,
            bars("Jobs by state", {k: float(v) for k, v in queue.counts.items()}),
            retry,
            jobs,
            spent,
        ]
    )
    return call.html("LLM work", body, active="LLM", notice=call.arg("done"))
