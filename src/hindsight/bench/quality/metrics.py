"""Recall metrics: pure functions of a ranking of turn ids and a question's evidence,
and their means by group."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

KS: Final = (5, 10)
# The order of a group's figures in the JSON and in the table.
METRICS: Final = (
    "frac_recall@5",
    "frac_recall@10",
    "recall_any@5",
    "recall_any@10",
    "recall_all@5",
    "recall_all@10",
    "ndcg@5",
    "ndcg@10",
    "frac_recall@50",
)


def frac_recall(ranked: Sequence[str], evidence: frozenset[str] | set[str], k: int) -> float:
    """The fraction of the evidence found in the top ``k`` (LoCoMo's own metric)."""
    return len(evidence.intersection(ranked[:k])) / len(evidence)


def recall_any(ranked: Sequence[str], evidence: frozenset[str] | set[str], k: int) -> float:
    """1.0 when any evidence turn is in the top ``k``."""
    return 1.0 if evidence.intersection(ranked[:k]) else 0.0


def recall_all(ranked: Sequence[str], evidence: frozenset[str] | set[str], k: int) -> float:
    """1.0 when every evidence turn is in the top ``k``."""
    return 1.0 if evidence.issubset(ranked[:k]) else 0.0


def ndcg(ranked: Sequence[str], evidence: frozenset[str] | set[str], k: int) -> float:
    """NDCG@k with binary relevance; the ideal puts min(|evidence|, k) hits first."""
    seen: set[str] = set()
    dcg = 0.0
    for i, turn in enumerate(ranked[:k]):
        if turn in evidence and turn not in seen:
            seen.add(turn)
            dcg += 1.0 / math.log2(i + 2)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(evidence), k)))
    return dcg / ideal


def score_question(ranked: Sequence[str], evidence: frozenset[str] | set[str]) -> dict[str, float]:
    """Every metric of :data:`METRICS` for one question."""
    out: dict[str, float] = {}
    for k in KS:
        out[f"frac_recall@{k}"] = frac_recall(ranked, evidence, k)
        out[f"recall_any@{k}"] = recall_any(ranked, evidence, k)
        out[f"recall_all@{k}"] = recall_all(ranked, evidence, k)
        out[f"ndcg@{k}"] = ndcg(ranked, evidence, k)
    out["frac_recall@50"] = frac_recall(ranked, evidence, 50)
    return out


def update_ranked_first(ranked: Sequence[str], ordered: Mapping[str, Sequence[str]]) -> bool:
    """Whether the best updated turn ranks above the best original one (or no original shows).

    A turn labelled both (BEAM labels a few so) holds the update: it counts as updated,
    since no ranking could put a turn above itself."""
    position = {turn: i for i, turn in reversed(list(enumerate(ranked)))}
    new = set(ordered.get("updated", ()))
    updated = [position[t] for t in new if t in position]
    original = [position[t] for t in ordered.get("original", ()) if t in position and t not in new]
    return bool(updated) and (not original or min(updated) < min(original))


def aggregate(rows: Iterable[tuple[str, Mapping[str, float]]]) -> dict[str, dict[str, float]]:
    """Means per group and overall, each with its question count ``n``."""
    groups: dict[str, list[Mapping[str, float]]] = defaultdict(list)
    for group, scores in rows:
        groups["overall"].append(scores)
        groups[group].append(scores)
    order = ["overall", *sorted(g for g in groups if g != "overall")]
    return {g: _means(groups[g]) for g in order if groups[g]}


def _means(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {"n": len(rows)}
    for metric in METRICS:
        out[metric] = round(statistics.fmean(r[metric] for r in rows), 4)
    return out


def dedupe(turns: Iterable[str]) -> list[str]:
    """Turn ids without repeats, in the order they first came."""
    return list(dict.fromkeys(turns))
