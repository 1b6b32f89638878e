"""Memories in the console: the list (browsed or searched), one memory with its
provenance, history and changes, and the recall playground, which shows why each result
came back."""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from hindsight.console.call import Call
from hindsight.console.markup import (
    bars,
    button,
    definitions,
    field,
    form,
    h,
    hidden,
    join,
    link,
    select,
    table,
    tag,
    url,
)
from hindsight.console.widgets import clip, memory_link, owner_picker, readable_owners
from hindsight.errors import HindsightError, ValidationError
from hindsight.models import Kind, Memory, Status

PAGE: Final = 50  # memories a page
KINDS: Final = [k.value for k in Kind]
STATUSES: Final = [s.value for s in Status]


# -- memories --------------------------------------------------------------------------------
async def memories(call: Call) -> Response:
    owners = await readable_owners(call)
    owner = call.arg("owner") or (owners[0] if owners else None)
    query, kind, status = call.arg("q"), call.arg("kind"), call.arg("status") or "active"
    page_no = max(1, int(call.arg("page") or 1)) if (call.arg("page") or "1").isdigit() else 1
    picker = form(
        "/ui/memories",
        call.csrf,
        owner_picker(owners, owner),
        field("Search", "q", query or "", type_="search"),
        select("Kind", "kind", KINDS, kind),
        select("Status", "status", STATUSES, status),
        button("Show"),
        method="get",
        class_="filters",
    )
    if owner is None:
        return call.html(
            "Memories", join([picker, tag("p", "No owner has memories yet.")]), active="Memories"
        )
    kinds = [kind] if kind else None
    if query:
        found = await call.run(call.hs.recall, owner, query, k=PAGE, kinds=kinds)
        shown = [r.memory for r in found]
        more = False
    else:
        shown = await call.run(
            call.hs.list_memories,
            owner,
            kinds=kinds,
            status=status,
            include_history=True,
            limit=PAGE + 1,
            offset=(page_no - 1) * PAGE,
        )
        more, shown = len(shown) > PAGE, shown[:PAGE]
    rows = [
        [
            memory_link(m),
            m.kind.value,
            m.status.value + ("" if m.superseded_by is None else " (superseded)"),
            m.provenance.source.value,
            m.observed_at,
            f"{m.confidence:.2f}",
        ]
        for m in shown
    ]
    pager = []
    if not query and page_no > 1:
        pager.append(
            link(
                "Previous",
                url("/ui/memories", owner=owner, kind=kind, status=status, page=page_no - 1),
            )
        )
    if more:
        pager.append(
            link(
                "Next", url("/ui/memories", owner=owner, kind=kind, status=status, page=page_no + 1)
            )
        )
    caption = f"best {len(rows)} for “{query}”" if query else f"page {page_no}"
    body = join(
        [
            picker,
            table(
                ["content", "kind", "status", "source", "observed", "confidence"],
                rows,
                caption=caption,
            ),
            tag("nav", join(pager, " "), class_="pager", aria_label="Pages"),
        ]
    )
    return call.html(f"Memories of {owner}", body, active="Memories")


async def memory(call: Call) -> Response:
    memory_id = call.arg("id") or ""
    m = await call.run(call.hs.get, memory_id)
    history = await call.run(call.hs.history, memory_id)
    parents = await call.run(_parents, call, m)
    facts = definitions(
        [
            ("owner", link(m.owner, url("/ui/memories", owner=m.owner))),
            ("kind", m.kind.value),
            ("status", m.status.value + (" (pinned)" if m.pinned else "")),
            ("confidence", f"{m.confidence:.2f} (trust {m.trust:.2f})"),
            ("source", m.provenance.source.value),
            ("written by", m.provenance.principal or "-"),
            ("speaker", m.provenance.speaker or "-"),
            ("session", m.provenance.session_id or "-"),
            ("observed", m.observed_at),
            ("learnt", m.created_at),
            ("valid", f"{h(m.valid_from)} to {h(m.valid_to) or 'now'}"),
            ("key", m.attribute or "-"),
            ("query hints", "; ".join(m.query_hints) or "-"),
            ("flags", ", ".join(m.flags) or "-"),
            (
                "review",
                "-"
                if m.review is None
                else f"{m.review.reason} ({m.review.decision or 'pending'})",
            ),
            ("id", tag("code", m.id)),
        ]
    )
    derived = join(
        [
            table(["derived from", "kind"], [[memory_link(p), p.kind.value] for p in parents])
            if parents
            else tag("p", "Not derived from another memory.", class_="muted"),
            table(
                ["derived from it", "kind", "status"],
                [[memory_link(d), d.kind.value, d.status.value] for d in history.derived],
            )
            if history.derived
            else tag("p", "Nothing was derived from it.", class_="muted"),
        ]
    )
    versions = table(
        ["version", "content", "events"],
        [
            [
                tag("code", v.memory.id)
                if v.memory.id == m.id
                else link(v.memory.id, url("/ui/memory", id=v.memory.id)),
                clip(v.memory.content),
                "; ".join(f"{e.at:%Y-%m-%d %H:%M} {e.principal or '-'} {e.what}" for e in v.events),
            ]
            for v in history.versions
        ],
        caption="History, oldest first",
    )
    pin = "/ui/memory/unpin" if m.pinned else "/ui/memory/pin"
    actions = tag(
        "div",
        form(
            "/ui/memory/edit",
            call.csrf,
            hidden("id", m.id),
            tag(
                "label",
                tag("span", "Content"),
                tag("textarea", m.content, name="content", rows="4", id="f-content"),
                for_="f-content",
            ),
            button("Save"),
            class_="stack",
        ),
        form(pin, call.csrf, hidden("id", m.id), button("Unpin" if m.pinned else "Pin")),
        form(
            "/ui/memory/feedback",
            call.csrf,
            hidden("id", m.id),
            button("Useful", name="useful", value="yes"),
            button("Not useful", name="useful", value="no"),
        ),
        form(
            "/ui/memory/forget",
            call.csrf,
            hidden("id", m.id),
            button("Forget this memory", danger=True),
        ),
        class_="actions",
    )
    body = join(
        [
            tag("blockquote", m.content, class_="content"),
            facts,
            derived,
            versions,
            tag("h2", "Change it"),
            actions,
        ]
    )
    return call.html("Memory", body, active="Memories", notice=call.arg("done"))


def _parents(call: Call, m: Memory) -> list[Memory]:
    if not m.provenance.derived_from:
        return []
    out = []
    for pid in m.provenance.derived_from[:20]:
        try:
            out.append(call.hs.get(pid))
        except HindsightError:
            continue  # forgotten, or not the caller's to see
    return out


# -- recall playground ------------------------------------------------------------------------
def _weights(text: str | None) -> dict[str, float]:
    """Other owners to search and their weights: "shared:team=0.5, user:bob" (1 when
    none is given)."""
    out: dict[str, float] = {}
    for part in (text or "").split(","):
        name, _, weight = part.strip().partition("=")
        if not name:
            continue
        try:
            out[name.strip()] = float(weight) if weight.strip() else 1.0
        except ValueError:
            raise ValidationError(f"the weight of {name.strip()!r} is not a number") from None
    return out


async def recall(call: Call) -> Response:
    owners = await readable_owners(call)
    owner = call.arg("owner") or (owners[0] if owners else None)
    query = call.arg("q")
    k = call.arg("k") or "10"
    picker = form(
        "/ui/recall",
        call.csrf,
        owner_picker(owners, owner),
        field("Query", "q", query or "", type_="search"),
        field("k", "k", k, type_="number", min="1", max="100"),
        field("Also search", "also", call.arg("also") or "", placeholder="shared:team=0.5"),
        select("Expand (LLM)", "expand", ["yes"], call.arg("expand")),
        button("Recall"),
        method="get",
        class_="filters",
    )
    if not (owner and query):
        return call.html("Recall", picker, active="Recall")
    found = await call.run(
        call.hs.recall,
        {owner: 1.0, **_weights(call.arg("also"))},
        query,
        k=int(k) if k.isdigit() else 10,
        expand=True if call.arg("expand") == "yes" else None,
    )
    cards = []
    several = bool(call.arg("also"))
    for i, r in enumerate(found, start=1):
        e = r.explanation
        channels = table(
            ["channel", "rank", "score"],
            [[n, c.rank, f"{c.score:.4f}"] for n, c in e.channels.items()],
        )
        boosts = ", ".join(f"{n} x{v:.3f}" for n, v in e.boosts.items())
        cards.append(
            tag(
                "article",
                tag("h2", f"{i}. ", memory_link(r.memory)),
                tag(
                    "p",
                    f"{r.memory.kind.value}, from {r.memory.provenance.source.value}, "
                    f"observed {r.memory.observed_at:%Y-%m-%d}"
                    + (f", of {r.memory.owner}" if several else ""),
                    class_="muted",
                ),
                channels,
                tag(
                    "p",
                    f"fused {e.fused:.4f}; boosts: {boosts or 'none'}; owner weight "
                    f"{e.owner_weight:g}; final {e.final:.4f}",
                ),
                bars(
                    "why: each channel's score",
                    {n: round(c.score, 4) for n, c in e.channels.items()},
                ),
                class_="result",
            )
        )
    empty = tag("p", "Nothing relevant is known.") if not found else ""
    return call.html("Recall", join([picker, empty, *cards]), active="Recall")
