"""Two recall reports of one data set compared, before and after a change: each group
and each half, with a loss beyond :data:`LOSS` marked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hindsight.errors import ValidationError

LOSS: float = 0.01
"""A loss in any group beyond this is fixed or argued before a recall change lands."""


def compare(
    before: Mapping[str, Any], after: Mapping[str, Any], *, metric: str = "frac_recall@10"
) -> list[dict[str, Any]]:
    """Each group of two reports of one data set (``--json`` output), before and after a
    change: the metric, its change, and whether it lost more than :data:`LOSS`; the
    halves of the set last."""
    if before.get("dataset") != after.get("dataset"):
        raise ValidationError(
            f"the reports are of different data sets: {before.get('dataset')!r} and "
            f"{after.get('dataset')!r}"
        )
    old, new = before.get("hindsight", {}), after.get("hindsight", {})
    rows = []
    for group in [*old, *(g for g in new if g not in old)]:
        a = old.get(group, {}).get(metric)
        b = new.get(group, {}).get(metric)
        rows.append(_row(group, a, b, old.get(group, new.get(group, {})).get("n")))
    halves = (
        before.get("halves", {}).get("hindsight", {}),
        after.get("halves", {}).get("hindsight", {}),
    )
    for half in ("first", "second"):
        a, b = (h.get(half, {}).get(metric) for h in halves)
        if a is not None or b is not None:
            rows.append(_row(f"{half} half", a, b, halves[0].get(half, {}).get("n")))
    return rows


def _row(group: str, a: float | None, b: float | None, n: Any) -> dict[str, Any]:
    change = None if a is None or b is None else round(b - a, 4)
    return {
        "group": group,
        "n": n,
        "before": a,
        "after": b,
        "change": change,
        "loss": change is not None and change < -LOSS,
    }


def compare_table(rows: Sequence[Mapping[str, Any]], metric: str) -> list[str]:
    """The rows of :func:`compare` as text; a loss beyond :data:`LOSS` is marked."""

    def cell(x: float | None) -> str:
        return "      -" if x is None else f"{x:>7.4f}"

    lines = [f"{'group (n)':<30} {'before':>7} {'after':>7} {'change':>7}  ({metric})"]
    for r in rows:
        label = f"{r['group']} ({r['n']})" if r["n"] is not None else r["group"]
        change = "      -" if r["change"] is None else f"{r['change']:>+7.4f}"
        mark = f"  loss > {LOSS}" if r["loss"] else ""
        lines.append(f"{label:<30} {cell(r['before'])} {cell(r['after'])} {change}{mark}")
    return lines
