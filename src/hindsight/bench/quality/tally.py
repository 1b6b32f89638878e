"""What a run tallies as it asks, and the report made of it: means by group, by
conversation and by half, and the speed figures."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hindsight.bench.datasets import Dataset
from hindsight.bench.quality.metrics import aggregate
from hindsight.bench.quality.report import QualityReport

PER_CONVERSATION: Final = ("frac_recall@5", "frac_recall@10")  # reported per conversation


@dataclass(slots=True)
class Tally:
    """What a run collects as it asks: per system, each question's scores, latencies and
    notes; what was skipped or repaired; the time ingest and LLM work took."""

    rows: dict[str, list[tuple[str, dict[str, float]]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    updates: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    by_conversation: dict[str, list[tuple[str, dict[str, float]]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    notes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    repaired: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    first: list[float] = field(default_factory=list)  # ms: each owner's first recall
    details: dict[int, dict[str, Any]] | None = None  # id(question) -> what was ranked
    ingest_s: float = 0.0
    turns: int = 0
    llm_s: float = 0.0  # running the LLM jobs


def summarise(
    data: Dataset, systems: Sequence[str], tally: Tally, *, peak_rss_mb: float
) -> QualityReport:
    """The report of a run over ``data``: ``systems``' figures from ``tally``."""
    speed = {
        "ingest_per_s": round(tally.turns / tally.ingest_s, 1) if tally.ingest_s else 0.0,
        "ingest_s": round(tally.ingest_s, 2),
    }
    for system in systems:
        prefix = "recall" if system == "hindsight" else system
        lat = tally.latency.get(system, [])
        speed[f"{prefix}_p50_ms"] = round(statistics.median(lat), 2) if lat else 0.0
        speed[f"{prefix}_p95_ms"] = round(_pct(lat, 0.95), 2)
    if tally.first:
        speed["first_recall_p50_ms"] = round(statistics.median(tally.first), 2)
        speed["first_recall_max_ms"] = round(max(tally.first), 2)
    speed["peak_rss_mb"] = round(peak_rss_mb, 1)
    knowledge_update = None
    if tally.updates:
        knowledge_update = {
            "n": max(len(v) for v in tally.updates.values()),
            **{s: round(statistics.fmean(v), 4) for s, v in tally.updates.items() if v},
        }
    return QualityReport(
        dataset=data.name,
        conversations=len(data.conversations),
        questions=len(data.questions),
        turns=data.turn_count,
        scores={s: aggregate(tally.rows[s]) for s in systems},
        speed=speed,
        skipped=dict((data.skipped + tally.skipped).most_common()),
        repaired=dict((data.repaired + tally.repaired).most_common()),
        notes={s: dict(c) for s, c in tally.notes.items()},
        knowledge_update=knowledge_update,
        per_conversation={s: _by_conversation(tally.by_conversation[s]) for s in systems},
        halves={s: _halves(tally.by_conversation[s]) for s in systems},
    )


def _by_conversation(
    rows: Iterable[tuple[str, Mapping[str, float]]],
) -> dict[str, dict[str, float]]:
    groups: dict[str, list[Mapping[str, float]]] = defaultdict(list)
    for conversation, scores in rows:
        groups[conversation].append(scores)
    return {
        conversation: {
            "n": len(found),
            **{m: round(statistics.fmean(r[m] for r in found), 4) for m in PER_CONVERSATION},
        }
        for conversation, found in groups.items()
    }


def _halves(rows: Sequence[tuple[str, Mapping[str, float]]]) -> dict[str, dict[str, Any]]:
    """Fraction-recall@10 over each half of the conversations, in the order they came:
    the first ceil(n/2) and the rest (LoCoMo 1-5 / 6-10, BEAM 1-5 / 6-10)."""
    order = list(dict.fromkeys(c for c, _ in rows))
    first = set(order[: (len(order) + 1) // 2])
    out: dict[str, dict[str, Any]] = {}
    for name, chosen in (("first", first), ("second", set(order) - first)):
        found = [r["frac_recall@10"] for c, r in rows if c in chosen]
        out[name] = {
            "conversations": [c for c in order if c in chosen],
            "n": len(found),
            "frac_recall@10": round(statistics.fmean(found), 4) if found else 0.0,
        }
    return out


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0
