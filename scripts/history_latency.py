"""How long ``history(id)`` takes, beside ``get(id)``, as the chain and the owner's
audit log grow (embedded SQLite store, in a temporary directory).

    PYTHONPATH=src python scripts/history_latency.py

Prints one JSON line per case: versions in the chain, other audit entries of the
owner (half of them recalls), and the median and max of 20 calls of each, in ms.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from hindsight import Hindsight, Settings
from hindsight.store import AuditEntry

CITIES = ["Paris", "Berlin", "Rome", "Madrid", "Lisbon", "Vienna", "Prague", "Oslo", "Turin"]


def timed(fn: Callable[[], object], n: int = 20) -> tuple[float, float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2), round(max(times), 2)


def case(versions: int, others: int) -> dict[str, object]:
    with (
        tempfile.TemporaryDirectory() as home,
        Hindsight(Settings(home=Path(home), sqlite_synchronous="OFF")) as hs,
    ):
        ids = []
        for i in range(versions):
            city = f"{CITIES[i % len(CITIES)]}{'' if i < len(CITIES) else i}"
            text = f"I moved to {city}." if i else f"I live in {city}."
            ids.append(hs.retain("user:a", text).created[0])
        now = datetime.now(UTC)
        for batch in range(others // 1000):
            hs.store.append_audit(
                [
                    AuditEntry(
                        at=now,
                        principal="local",
                        owner="user:a",
                        action="retain" if j % 2 else "recall",
                        memory_ids=(f"m_other{batch}x{j}",),
                    )
                    for j in range(1000)
                ]
            )
        chain = hs.history(ids[0])
        assert [v.memory.id for v in chain.versions] == ids
        get_ms = timed(lambda: hs.get(ids[0]))
        history_ms = timed(lambda: hs.history(ids[0]))
        return {
            "versions": versions,
            "other_entries": others,
            "get_ms": get_ms,
            "history_ms": history_ms,
        }


def main() -> None:
    for versions in (3, 50):
        for others in (0, 20_000):
            print(json.dumps(case(versions, others)))


if __name__ == "__main__":
    main()
