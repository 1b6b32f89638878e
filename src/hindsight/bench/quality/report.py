"""A recall-quality report: the systems it compares, its figures, and the table people
read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

K_FETCH: Final = 50  # results asked for; after mapping to turns, at least 10 distinct remain
SYSTEMS: Final = ("hindsight", "bm25", "dense")
WITH_LLM: Final = "hindsight+llm"  # the offline system after LLM work, with expansion


@dataclass(slots=True)
class QualityReport:
    """The figures of one run: per system, group and metric, with speed and what was
    skipped or repaired; :meth:`as_dict` is the JSON report."""

    dataset: str
    conversations: int
    questions: int
    turns: int
    scores: dict[str, dict[str, dict[str, float]]]  # system -> group -> metric -> value
    speed: dict[str, float]
    skipped: dict[str, int]
    repaired: dict[str, int]
    notes: dict[str, dict[str, int]] = field(default_factory=dict)  # system -> note -> count
    knowledge_update: dict[str, Any] | None = None
    # with an LLM: its use (calls, failures, dropped answers, tokens, cost) and work
    llm: dict[str, Any] | None = None
    # system -> conversation id -> {"n", "frac_recall@5", "frac_recall@10"}: a lever that
    # helps one conversation and hurts nine shows here, not in the mean
    per_conversation: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    # system -> "first" / "second" -> {"conversations", "n", "frac_recall@10"}: the two
    # halves of the set in its own order, one to tune a dial on and one to check it on
    halves: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    # asked for: per question, each system's top ten turns and every evidence turn's rank
    details: list[dict[str, Any]] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "dataset": self.dataset,
            "conversations": self.conversations,
            "questions": self.questions,
            "turns": self.turns,
            "k_fetch": K_FETCH,
        }
        out.update(self.scores)
        out["speed"] = self.speed
        out["skipped"] = self.skipped
        out["repaired"] = self.repaired
        out["notes"] = self.notes
        if self.knowledge_update is not None:
            out["knowledge_update_order"] = self.knowledge_update
        out["per_conversation"] = self.per_conversation
        out["halves"] = self.halves
        if self.details is not None:
            out["details"] = self.details
        if self.llm is not None:
            out["llm"] = self.llm
        return out


COLUMNS: Final = (
    ("frac@5", "frac_recall@5"),
    ("frac@10", "frac_recall@10"),
    ("any@10", "recall_any@10"),
    ("all@10", "recall_all@10"),
    ("ndcg@10", "ndcg@10"),
)


def table(report: QualityReport) -> list[str]:
    """The figures as text: one row per group, five columns per system, then speed."""
    systems = list(report.scores)
    groups = list(report.scores[systems[0]]) if systems else []
    labels = {g: f"{g} ({int(report.scores[systems[0]][g]['n'])})" for g in groups}
    width = max([len(x) for x in labels.values()] + [len("group (n)")])
    block = 8 * len(COLUMNS)
    sep = " |"
    lines = [
        f"{report.dataset}: {report.conversations} conversations, {report.turns} turns, "
        f"{report.questions} questions; turn-level recall",
        " " * width + "".join(f"{sep}{s:^{block}}" for s in systems),
        f"{'group (n)':<{width}}"
        + "".join(sep + "".join(f"{c:>8}" for c, _ in COLUMNS) for _ in systems),
    ]
    for group in groups:
        cells = "".join(
            sep + "".join(f"{report.scores[s][group][key]:>8.3f}" for _, key in COLUMNS)
            for s in systems
        )
        lines.append(f"{labels[group]:<{width}}{cells}")
    sp = report.speed
    lines.append(
        f"speed: ingest {sp['ingest_per_s']:.0f} turns/s (embedding included); "
        f"recall p50 {sp.get('recall_p50_ms', 0.0):.1f} ms, "
        f"p95 {sp.get('recall_p95_ms', 0.0):.1f} ms; "
        f"first recall of an owner in a new engine p50 {sp.get('first_recall_p50_ms', 0.0):.1f} "
        f"ms, max {sp.get('first_recall_max_ms', 0.0):.1f} ms; "
        f"peak RSS {sp['peak_rss_mb']:.0f} MB"
    )
    if report.knowledge_update:
        ku = report.knowledge_update
        figures = ", ".join(f"{s} {ku[s]:.2f}" for s in systems if s in ku)
        lines.append(
            f"knowledge updates ranked above the original ({ku['n']} questions): {figures}"
        )
    if report.llm is not None:
        u = report.llm
        cost = "unpriced" if u["cost"] is None else f"${u['cost']:.4f}"
        lines.append(
            f"llm ({u['provider']}, {u['model']}): {u['calls']} calls, "
            f"{u['prompt_tokens']} prompt + {u['completion_tokens']} completion tokens, "
            f"{cost}; jobs {u['jobs']['done']} done, {u['jobs']['failed']} failed in "
            f"{u['jobs_s']:.1f} s; recall with expansion p50 "
            f"{report.speed.get(WITH_LLM + '_p50_ms', 0.0):.1f} ms"
        )
    for system, halves in report.halves.items():
        first, second = halves["first"], halves["second"]
        lines.append(
            f"f@10 by half, {system}: first {len(first['conversations'])} conversations "
            f"{first['frac_recall@10']:.3f}, the other {len(second['conversations'])} "
            f"{second['frac_recall@10']:.3f}"
        )
    for system, found in report.per_conversation.items():
        cells = ", ".join(f"{c} {v['frac_recall@10']:.3f}" for c, v in found.items())
        lines.append(f"f@10 by conversation, {system}: {cells}")
    if report.skipped:
        lines.append("skipped: " + "; ".join(f"{r}: {n}" for r, n in report.skipped.items()))
    return [line.rstrip() for line in lines]
