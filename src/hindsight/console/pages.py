"""The console's pages (GET) and actions (POST), each one library call or a few, made
as the signed-in caller: a page shows only what the caller's key may read."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from starlette.responses import RedirectResponse, Response, StreamingResponse

from hindsight import views
from hindsight.console.call import Call, safe_next
from hindsight.console.markup import (
    Html,
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
from hindsight.errors import HindsightError, ValidationError
from hindsight.models import ForgetReceipt, Kind, Memory, Source, Status

PAGE: Final = 50  # memories a page
KINDS: Final = [k.value for k in Kind]
STATUSES: Final = [s.value for s in Status]
SOURCES: Final = [s.value for s in Source]
_CLIP: Final = 160


def problem(exc: HindsightError) -> Html:
    return tag("p", str(exc), class_="error", role="alert")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _CLIP else text[: _CLIP - 1] + "\u2026"


def _memory_link(m: Memory) -> Html:
    return link(_clip(m.content), url("/ui/memory", id=m.id))


async def _owners(call: Call) -> list[str]:
    return await call.run(call.hs.owners)


def _owner_picker(owners: Sequence[str], chosen: str | None) -> Html:
    return select("Owner", "owner", list(owners), chosen)


def _owner_form(call: Call, path: str, owners: Sequence[str], chosen: str | None) -> Html:
    """A form that shows ``path`` for one of ``owners``."""
    return form(
        path,
        call.csrf,
        _owner_picker(owners, chosen),
        button("Show"),
        method="get",
        class_="filters",
    )


def _reads_all(call: Call) -> bool:
    """Whether the caller's key reads every owner (else it is asked about its own)."""
    return "*" in (*call.hs.principal.read, *call.hs.principal.write)


# -- signing in ---------------------------------------------------------------------------
async def login(call: Call) -> Response:
    if call.request.app.state.keyring is None:
        return RedirectResponse("/ui/", status_code=303)  # a keyless loopback server
    nxt = safe_next(call.arg("next") or "/ui/")
    body = form(
        "/ui/login",
        call.csrf,
        hidden("next", nxt),
        field("API key", "key", type_="password", required="required"),
        button("Sign in"),
        class_="stack",
    )
    intro = tag(
        "p",
        "Enter an API key from the server's key file. It is kept in a cookie "
        "this browser sends to this console only.",
    )
    return call.html("Sign in", join([intro, body]))


# -- owners and stats ------------------------------------------------------------------------
async def home(call: Call) -> Response:
    owners = await _owners(call)
    rows = []
    charts: list[Html] = []
    for owner in owners[:200]:
        stats = await call.run(call.hs.stats, owner)
        rows.append(
            [
                link(owner, url("/ui/memories", owner=owner)),
                stats.memories,
                ", ".join(f"{k} {v}" for k, v in sorted(stats.by_kind.items())),
                ", ".join(f"{k} {v}" for k, v in sorted(stats.by_status.items())),
                f"{stats.size_bytes / 1024:.1f} KiB",
            ]
        )
        if len(charts) < 8:
            charts.append(bars(f"{owner}: memories by kind", dict(sorted(stats.by_kind.items()))))
            monthly = {m: sum(kinds.values()) for m, kinds in list(stats.by_month.items())[-12:]}
            charts.append(bars(f"{owner}: learnt per month (latest 12)", monthly))
            active = {
                m: float(statuses.get("active", 0))
                for m, statuses in list(stats.by_month_status.items())[-12:]
            }
            charts.append(bars(f"{owner}: of those, active now", active))
    metrics = getattr(call.request.app.state, "metrics", None)
    latency = _recall_latency(metrics) if metrics is not None else {}
    body = join(
        [
            table(
                ["owner", "memories", "by kind", "by status", "size"],
                rows,
                caption=f"{len(owners)} owner(s) you may read",
            ),
            tag("div", join(charts), class_="charts"),
            bars("REST recall latency since the server started (requests per bucket)", latency),
        ]
    )
    return call.html("Owners", body, active="Owners")


def _recall_latency(metrics: Any) -> dict[str, float]:
    """The recall route's latency histogram, as counts per bucket."""
    counts: dict[str, float] = {}
    previous = 0.0
    for family in metrics.registry.collect():
        for sample in family.samples:
            if not sample.name.endswith("_bucket") or sample.labels.get("operation") != "recall":
                continue
            bound = sample.labels["le"]
            label = "> 30 s" if bound == "+Inf" else f"<= {float(bound) * 1000:g} ms"
            counts[label] = sample.value - previous
            previous = sample.value
    return counts if any(counts.values()) else {}


# -- memories --------------------------------------------------------------------------------
async def memories(call: Call) -> Response:
    owners = await _owners(call)
    owner = call.arg("owner") or (owners[0] if owners else None)
    query, kind, status = call.arg("q"), call.arg("kind"), call.arg("status") or "active"
    page_no = max(1, int(call.arg("page") or 1)) if (call.arg("page") or "1").isdigit() else 1
    picker = form(
        "/ui/memories",
        call.csrf,
        _owner_picker(owners, owner),
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
            _memory_link(m),
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
            table(["derived from", "kind"], [[_memory_link(p), p.kind.value] for p in parents])
            if parents
            else tag("p", "Not derived from another memory.", class_="muted"),
            table(
                ["derived from it", "kind", "status"],
                [[_memory_link(d), d.kind.value, d.status.value] for d in history.derived],
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
                _clip(v.memory.content),
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
    owners = await _owners(call)
    owner = call.arg("owner") or (owners[0] if owners else None)
    query = call.arg("q")
    k = call.arg("k") or "10"
    picker = form(
        "/ui/recall",
        call.csrf,
        _owner_picker(owners, owner),
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
                tag("h2", f"{i}. ", _memory_link(r.memory)),
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


# -- sessions ---------------------------------------------------------------------------------
async def sessions(call: Call) -> Response:
    owners = await _owners(call)
    owner = call.arg("owner") or (owners[0] if owners else None)
    picker = _owner_form(call, "/ui/sessions", owners, owner)
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
                    [[t.role, _clip(t.content), t.created_at] for t in window],
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


# -- review queue -----------------------------------------------------------------------------
async def review(call: Call) -> Response:
    owner = call.arg("owner")
    if owner is None and not _reads_all(call):
        names: list[str | None] = list(await _owners(call))  # a scoped key: its own owners
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
            _memory_link(item.memory),
            item.memory.owner,
            item.memory.review.reason if item.memory.review else "",
            join([_memory_link(c) for c in item.conflicts], Html("<br>")) or "-",
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
            _clip(json.dumps(e.detail, default=str)),
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


# -- forgetting by filter ---------------------------------------------------------------------
FORGET_FILTERS: Final = ("owner", "session_id", "since", "until", "source", "principal")


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
    owners = await _owners(call)
    filters = form(
        "/ui/forget",
        call.csrf,
        _owner_picker(owners, args["owner"]),
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
                [[_memory_link(m), m.kind.value, m.observed_at] for m in shown],
            ),
            confirm,
        ]
    )
    return call.html("Forget", body, active="Forget")


# -- the LLM layer: its job queue and what it used ----------------------------------------------
async def llm(call: Call) -> Response:
    owners = await _owners(call)
    everyone = _reads_all(call)
    owner = call.arg("owner") or (None if everyone else (owners[0] if owners else None))
    picker = _owner_form(call, "/ui/llm", owners, owner)
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
                _clip(j.error or json.dumps(j.result or {}, default=str)),
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
