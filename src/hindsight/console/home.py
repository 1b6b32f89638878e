"""The console's front: signing in, and the owners overview (counts, charts, and the
REST recall latency)."""

from __future__ import annotations

from typing import Any

from starlette.responses import RedirectResponse, Response

from hindsight.console.call import Call, safe_next
from hindsight.console.markup import (
    Html,
    bars,
    button,
    field,
    form,
    hidden,
    join,
    link,
    table,
    tag,
    url,
)
from hindsight.console.widgets import readable_owners


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
    owners = await readable_owners(call)
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
