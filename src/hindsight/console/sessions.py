"""Working memory in the console: each live session's window, to move to long-term
memory or close."""

from __future__ import annotations

from starlette.responses import Response

from hindsight.console.call import Call
from hindsight.console.markup import button, form, hidden, join, table, tag
from hindsight.console.widgets import clip, owner_form, readable_owners


async def sessions(call: Call) -> Response:
    owners = await readable_owners(call)
    owner = call.arg("owner") or (owners[0] if owners else None)
    picker = owner_form(call, "/ui/sessions", owners, owner)
    if owner is None:
        return call.html("Sessions", picker, active="Sessions")
    live = await call.run(call.hs.sessions, owner)
    blocks = []
    for sid, turns, tokens in live:
        window = await call.run(call.hs.window, owner, sid)
        blocks.append(
            tag(
                "section",
                tag("h2", f"Session {sid}: {turns} turn(s), about {tokens} tokens"),
                table(
                    ["role", "content", "at"],
                    [[t.role, clip(t.content), t.created_at] for t in window],
                ),
                tag(
                    "div",
                    form(
                        "/ui/sessions/consolidate",
                        call.csrf,
                        hidden("owner", owner),
                        hidden("sid", sid),
                        button("Move to long-term memory"),
                    ),
                    form(
                        "/ui/sessions/close",
                        call.csrf,
                        hidden("owner", owner),
                        hidden("sid", sid),
                        button("Close the session"),
                    ),
                    class_="actions",
                ),
            )
        )
    body = join([picker, *(blocks or [tag("p", "No live session.")])])
    return call.html(f"Sessions of {owner}", body, active="Sessions", notice=call.arg("done"))
