"""A session's turns as runs: the messages one speaker sent in a row
(:data:`~hindsight.store.records.RUN_GAP`) count as one turn.

A turn's keyword context quotes the turns of the runs around it
(:mod:`hindsight.store.sql.texts`); recall reads a run's mates as one statement
(:mod:`hindsight.store.sql.episodes`). Rows here are turns of a session in order, whose
third to fifth fields are speaker, source and observed at.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from itertools import accumulate, pairwise
from typing import Any

from hindsight.store.records import RUN_GAP

# Messages of a run that a turn's keyword context takes at most, per turn of context: a
# monologue of a hundred messages is not one turn's context.
_RUN_ROWS = 3
_GAP = RUN_GAP.total_seconds()


def same_run(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two turns next to each other in a session, rows whose third to fifth
    fields are speaker, source and observed at, are messages of one run."""
    return tuple(a[2:4]) == tuple(b[2:4]) and abs(b[4] - a[4]) <= _GAP


class Turns:
    """A session's turns in order, to find a turn's neighbours. Each row is (row key,
    text, speaker, source, observed at); the messages of a run count as one turn."""

    def __init__(self, rows: list[tuple[int, str, str | None, str, float]]) -> None:
        self.rows = rows
        self.keys = [row[0] for row in rows]
        new_runs = (int(not same_run(a, b)) for a, b in pairwise(rows))
        self.runs = list(accumulate(new_runs, initial=0))  # the run each row is in, in order

    def around(self, key: int, n: int) -> list[tuple[int, str]]:
        """The turns of up to ``n`` runs before ``key``'s and of its own (nearest first),
        then of its own and up to ``n`` after, each side at most ``_RUN_ROWS * n`` turns."""
        i = bisect.bisect_left(self.keys, key)
        if i == len(self.keys) or self.keys[i] != key:
            return []
        first = bisect.bisect_left(self.runs, self.runs[i] - n)
        last = bisect.bisect_right(self.runs, self.runs[i] + n)
        cap = _RUN_ROWS * n
        before = self.rows[max(first, i - cap) : i]
        after = self.rows[i + 1 : min(last, i + 1 + cap)]
        return [(row[0], row[1]) for row in [*reversed(before), *after]]


def run_side(
    rows: Sequence[tuple[int, int, str | None, str, float]], at: int, step: int, reach: int
) -> tuple[list[int], bool]:
    """The keys of the turns that continue ``rows[at]``'s run on one side (``step`` -1 or
    1), at most ``reach``; and whether the rows ran out before the run did."""
    out: list[int] = []
    i = at
    while len(out) < reach:
        if not 0 <= i + step < len(rows):
            return out, True
        if not same_run(rows[i], rows[i + step]):
            break
        i += step
        out.append(rows[i][1])
    return out, False
