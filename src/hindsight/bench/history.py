"""``hindsight bench history``: what reading a memory's versions (``history(id)``) costs,
beside ``get(id)`` of the same memory, as its chain and its owner's audit log grow.

For each case one owner states a value and changes it ``versions - 1`` times ("I live
in Paris." -> "I moved to Berlin." -> ...); ``entries`` audit entries of that owner that
name none of the versions (half of them recalls) are added; then each call is timed
``calls`` times. One store for every case, each case an owner of its own.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from hindsight.config import Settings
from hindsight.engine import Hindsight
from hindsight.store import AuditEntry

CITIES: Final = ("Paris", "Berlin", "Rome", "Madrid", "Lisbon", "Vienna", "Prague", "Oslo")


def _timed(fn: Callable[[], object], calls: int) -> dict[str, float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return {"median": round(statistics.median(times), 2), "max": round(max(times), 2)}


def _case(hs: Hindsight, versions: int, entries: int, calls: int) -> dict[str, Any]:
    owner = f"bench:history-{versions}-{entries}"
    ids = []
    for i in range(versions):
        city = f"{CITIES[i % len(CITIES)]}{'' if i < len(CITIES) else i}"
        text = f"I moved to {city}." if i else f"I live in {city}."
        ids.append(hs.retain(owner, text).created[0])
    now = datetime.now(UTC)
    for start in range(0, entries, 1_000):
        hs.store.append_audit(
            [
                AuditEntry(
                    at=now,
                    principal="local",
                    owner=owner,
                    action="retain" if j % 2 else "recall",
                    memory_ids=(f"m_other{start}x{j}",),
                )
                for j in range(min(1_000, entries - start))
            ]
        )
    chain = hs.history(ids[0])
    found = [v.memory.id for v in chain.versions]
    return {
        "versions": versions,
        "other_entries": entries,
        "chain_complete": found == ids,
        "get_ms": _timed(lambda: hs.get(ids[0]), calls),
        "history_ms": _timed(lambda: hs.history(ids[0]), calls),
    }


def run(
    settings: Settings,
    *,
    versions: Sequence[int] = (3, 50),
    entries: int = 20_000,
    calls: int = 20,
) -> dict[str, Any]:
    """Every case of ``versions`` x (no other entries, ``entries`` of them)."""
    with Hindsight(settings) as hs:
        cases = [_case(hs, v, e, calls) for v in versions for e in dict.fromkeys((0, entries))]
    return {"calls": calls, "cases": cases}
