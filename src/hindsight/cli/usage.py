"""``hindsight usage``: what the LLM layer spent, by owner, operation and model."""

from __future__ import annotations

import click

from hindsight import views
from hindsight.cli.base import App, cell, echo, emit_json, json_option
from hindsight.cli.group import cli

_HEADER = (
    "owner",
    "operation",
    "model",
    "calls",
    "failed",
    "retries",
    "dropped",
    "dropped_items",
    "prompt",
    "completion",
    "cost",
)


def _cost(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


@cli.command("usage")
@click.option("--owner", metavar="OWNER", help="Only this owner's (default: every owner).")
@click.option("--since", metavar="ISO", help="Only calls at or after this time.")
@json_option
@click.pass_obj
def usage(app: App, owner: str | None, since: str | None, as_json: bool) -> None:
    """Show LLM calls, failures, retries, dropped answers and items, tokens and cost.

    Costs need prices (HINDSIGHT_LLM_PRICES); without one, cost is '-' (null in JSON).
    """
    rows = app.engine.usage(owner, since=since)
    total = views.usage_total(rows)
    if as_json:
        emit_json({"usage": [views.usage_row(r) for r in rows], "total": total})
        return
    if not rows:
        echo("no LLM calls")
        return
    table = [
        (
            r.owner or "-",
            r.operation,
            r.model or "-",
            r.calls,
            r.failures,
            r.retries,
            r.dropped,
            r.dropped_items,
            r.prompt_tokens,
            r.completion_tokens,
            _cost(r.cost),
        )
        for r in rows
    ]
    table.append(
        (
            "total",
            "",
            "",
            total["calls"],
            total["failures"],
            total["retries"],
            total["dropped"],
            total["dropped_items"],
            total["prompt_tokens"],
            total["completion_tokens"],
            _cost(total["cost"]),
        )
    )
    cells = [[cell(str(v)) for v in row] for row in [_HEADER, *table]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(_HEADER))]
    for row in cells:
        echo("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
