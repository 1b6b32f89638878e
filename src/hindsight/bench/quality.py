"""``hindsight bench locomo|beam``: turn-level recall quality on real benchmarks.

Each conversation goes into its own owner through the normal write path
(``Hindsight.retain``, one call per session: extraction, dedupe and indexing as
users get them). Each question is then asked through the normal read path
(``Hindsight.recall`` with default settings), and, in the same run over the same
store, through two baselines over the verbatim turns: BM25 alone
(``Store.keyword_search``) and dense alone (``Store.vector_search``).

Results are scored at turn level: a verbatim episode is its turn, a derived
memory counts for the turns it was derived from; turn ids are deduplicated
keeping rank order. The metric functions are pure and tested on their own.

With an LLM configured (``HINDSIGHT_LLM_PROVIDER``), the same run measures the LLM
layer too: each conversation's questions are asked first before any LLM work has run
(``hindsight``: the offline figures), then its queued extraction jobs are run to the
end and the questions asked again with query understanding (``hindsight+llm``);
the report's ``llm`` block has the tokens, calls, failures, cost and time it took.
"""

from __future__ import annotations

import math
import re
import resource
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from hindsight.bench.datasets import Conversation, Dataset, Question
from hindsight.config import Settings
from hindsight.engine import Hindsight
from hindsight.errors import ValidationError
from hindsight.models import Kind, Memory
from hindsight.store import Filter, Store

PER_CONVERSATION: Final = ("frac_recall@5", "frac_recall@10")  # reported per conversation
K_FETCH: Final = 50  # results asked for; after mapping to turns, at least 10 distinct remain
KS: Final = (5, 10)
SYSTEMS: Final = ("hindsight", "bm25", "dense")
WITH_LLM: Final = "hindsight+llm"  # the offline system after LLM work, with expansion
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
_OWNER_NAME: Final = re.compile(r"[^A-Za-z0-9._@+-]+")


# -- metrics: pure functions of a ranking of turn ids and the evidence ---------------------
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


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def dedupe(turns: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(turns))


# -- mapping results back to turns -----------------------------------------------------------
class TurnMap:
    """Memory id -> the benchmark turn ids it stands for, cached per conversation."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._turns: dict[str, tuple[str, ...]] = {}

    def learn(self, memory_id: str, turn_id: str) -> bool:
        """Map an episode to its turn; False when the id already stands for another turn."""
        if memory_id in self._turns:
            return False
        self._turns[memory_id] = (turn_id,)
        return True

    def of_memory(self, memory: Memory, depth: int = 0) -> tuple[str, ...]:
        if memory.id in self._turns:
            return self._turns[memory.id]
        turn_id = memory.metadata.get("turn_id")
        if memory.kind is Kind.EPISODE and isinstance(turn_id, str):
            turns: tuple[str, ...] = (turn_id,)
        elif depth < 4:  # a derived memory counts for the turns it came from
            turns = tuple(dedupe(self.of_ids(memory.provenance.derived_from, depth + 1)))
        else:
            turns = ()
        self._turns[memory.id] = turns
        return turns

    def of_ids(self, ids: Sequence[str], depth: int = 0) -> list[str]:
        missing = [i for i in ids if i not in self._turns]
        if missing:
            for memory in self._store.get(missing):
                self.of_memory(memory, depth)
        return [t for i in ids for t in self._turns.get(i, ())]


# -- the run -----------------------------------------------------------------------------------
@dataclass(slots=True)
class QualityReport:
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


def owner_for(dataset: str, conversation_id: str) -> str:
    """``bench:<dataset>-<conversation id>``, the id made safe for an owner name."""
    name = _OWNER_NAME.sub("-", f"{dataset}-{conversation_id}").strip("-._@+")
    return f"bench:{name[:128] or dataset}"


def work(dataset: Dataset) -> int:
    """Units of progress a run reports: one per turn ingested, one per question asked."""
    return dataset.turn_count + len(dataset.questions)


Search = Callable[[str], tuple[list[str], float]]


@dataclass(slots=True)
class _Tally:
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


def _first_recalls(settings: Settings, data: Dataset) -> list[float]:
    """Milliseconds of each conversation's first question in a new engine on the store
    just filled (a server that restarts): every owner's first recall, cold."""
    out = []
    with Hindsight(settings) as hs:
        hs.embedder.encode_query("load the model first")
        for conv in data.conversations:
            if conv.questions:
                owner = owner_for(data.name, conv.id)
                start = time.perf_counter()
                hs.recall(owner, conv.questions[0].text, k=K_FETCH)
                out.append((time.perf_counter() - start) * 1000)
    return out


def run(
    settings: Settings,
    dataset: Dataset,
    *,
    systems: Sequence[str] = SYSTEMS,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    details: bool = False,
) -> QualityReport:
    """Ingest each conversation into its own owner, ask every question, score the rankings
    (with ``details``, also report each question's rankings)."""
    unknown = set(systems) - set(SYSTEMS)
    if unknown or not systems:
        raise ValidationError(f"systems must be among {', '.join(SYSTEMS)}")
    data = dataset.head(limit)
    tally = _Tally(details={} if details else None)
    base = datetime.now(UTC).replace(microsecond=0)
    llm = settings.llm_configured and "hindsight" in systems
    # no worker thread: the offline figures are taken before any LLM work has run
    settings = settings.model_copy(update={"llm_worker": False})
    usage: dict[str, Any] | None = None
    with Hindsight(settings) as hs:
        started = datetime.now(UTC)
        for conv in data.conversations:
            owner = owner_for(data.name, conv.id)
            if hs.stats(owner).memories:  # a store given with --home may hold an earlier run
                hs.forget(owner=owner)
                tally.notes["run"]["conversations of an earlier run forgotten first"] += 1
            turns = TurnMap(hs.store)
            _ingest(hs, owner, conv, turns, tally, base=base, progress=progress)
            searches = _searches(hs, owner, turns, systems)
            for question in conv.questions:
                _ask(question, searches, tally)
                if progress:
                    progress(1)
            if llm:
                _with_llm(hs, owner, conv, turns, tally)
        if llm:
            usage = _usage(hs, started, tally)
    if "hindsight" in systems:
        tally.first = _first_recalls(settings, data)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    measured = [*systems, WITH_LLM] if llm else list(systems)
    report = _report(data, measured, tally, peak_rss_mb=rss)
    report.llm = usage
    if tally.details is not None:
        report.details = list(tally.details.values())
    return report


def _with_llm(hs: Hindsight, owner: str, conv: Conversation, turns: TurnMap, tally: _Tally) -> None:
    """Run the conversation's LLM jobs to the end, then ask its questions with query
    understanding (the ``hindsight+llm`` system)."""
    start = time.perf_counter()
    hs.wait_jobs()
    tally.llm_s += time.perf_counter() - start

    def expanded(q: str) -> tuple[list[str], float]:
        start = time.perf_counter()
        results = hs.recall(owner, q, k=K_FETCH, expand=True)
        ms = (time.perf_counter() - start) * 1000
        return [t for r in results for t in turns.of_memory(r.memory)], ms

    for question in conv.questions:
        _ask(question, {WITH_LLM: expanded}, tally)


def _usage(hs: Hindsight, since: datetime, tally: _Tally) -> dict[str, Any]:
    """What the LLM layer took in this run, by operation and in all."""
    rows = [r for r in hs.usage(since=since) if r.owner.startswith("bench:")]
    by_operation: dict[str, dict[str, Any]] = {}
    for r in rows:
        into = by_operation.setdefault(r.operation, Counter())
        into.update(
            calls=r.calls,
            failures=r.failures,
            dropped=r.dropped,
            prompt_tokens=r.prompt_tokens,
            completion_tokens=r.completion_tokens,
        )
    costs = [r.cost for r in rows if r.cost is not None]
    jobs = hs.jobs().counts
    return {
        "provider": hs.settings.llm_provider,
        "model": hs.settings.llm_model,
        "by_operation": {op: dict(c) for op, c in sorted(by_operation.items())},
        "prompt_tokens": sum(r.prompt_tokens for r in rows),
        "completion_tokens": sum(r.completion_tokens for r in rows),
        "calls": sum(r.calls for r in rows),
        "cost": round(sum(costs), 6) if costs else None,
        "jobs": jobs,
        "jobs_s": round(tally.llm_s, 2),
    }


def _ingest(
    hs: Hindsight,
    owner: str,
    conv: Conversation,
    turns: TurnMap,
    tally: _Tally,
    *,
    base: datetime,
    progress: Callable[[int], None] | None,
) -> None:
    limit = hs.settings.max_content_chars
    for session in conv.sessions:
        messages = []
        for i, turn in enumerate(session.turns):
            text = turn.text.strip()
            if len(text) > limit:
                tally.repaired["turn cut to max_content_chars (the store's input limit)"] += 1
                text = text[:limit]
            if turn.time is None:
                tally.repaired["turn without a time (observed at ingest time)"] += 1
            # A second apart: turns keep their order, and two identical turns of one
            # session stay two turns (the write path merges a turn retained twice).
            when = (turn.time or base) + timedelta(seconds=i)
            messages.append(
                {
                    "role": turn.role,
                    "content": text,
                    "speaker": turn.speaker,
                    "observed_at": when,
                    "metadata": {"turn_id": turn.turn_id},
                }
            )
        start = time.perf_counter()
        result = hs.retain(owner, messages=messages, session_id=session.id)
        tally.ingest_s += time.perf_counter() - start
        tally.turns += len(messages)
        for memory_id, turn in zip(result.episodes, session.turns, strict=True):
            if not turns.learn(memory_id, turn.turn_id):
                tally.skipped["turn merged into an identical turn by the write path"] += 1
        if progress:
            progress(len(messages))


def _searches(
    hs: Hindsight, owner: str, turns: TurnMap, systems: Sequence[str]
) -> dict[str, Search]:
    """Per system, a search giving turn ids and the milliseconds the search itself took."""
    episodes = Filter(owners=[owner], kinds=[Kind.EPISODE])

    def hindsight(q: str) -> tuple[list[str], float]:
        start = time.perf_counter()
        results = hs.recall(owner, q, k=K_FETCH)
        ms = (time.perf_counter() - start) * 1000
        return [t for r in results for t in turns.of_memory(r.memory)], ms

    def bm25(q: str) -> tuple[list[str], float]:
        start = time.perf_counter()
        hits = hs.store.keyword_search(episodes, q, K_FETCH)
        ms = (time.perf_counter() - start) * 1000
        return turns.of_ids([mid for mid, _ in hits]), ms

    def dense(q: str) -> tuple[list[str], float]:
        start = time.perf_counter()  # the query's embedding included, as in recall
        hits = hs.store.vector_search(episodes, hs.embedder.encode_query(q), K_FETCH)
        ms = (time.perf_counter() - start) * 1000
        return turns.of_ids([mid for mid, _ in hits]), ms

    every: dict[str, Search] = {"hindsight": hindsight, "bm25": bm25, "dense": dense}
    return {name: every[name] for name in systems}


def _ask(question: Question, searches: Mapping[str, Search], tally: _Tally) -> None:
    for system, search in searches.items():
        found, ms = search(question.text)
        tally.latency[system].append(ms)
        ranked = dedupe(found)
        if len(ranked) < max(KS):
            tally.notes[system]["questions with fewer than 10 distinct turns retrieved"] += 1
        scores = score_question(ranked, question.evidence)
        tally.rows[system].append((question.group, scores))
        tally.by_conversation[system].append((question.conversation_id, scores))
        if question.ordered is not None and question.ordered.get("updated"):
            tally.updates[system].append(update_ranked_first(ranked, question.ordered))
        if tally.details is not None:
            _detail(tally.details, question, system, ranked)


def _detail(
    details: dict[int, dict[str, Any]], question: Question, system: str, ranked: list[str]
) -> None:
    """What ``system`` ranked for ``question``: its top ten turns, and where each evidence
    turn came (1-based among the distinct turns fetched; None: not fetched)."""
    entry = details.setdefault(
        id(question),
        {
            "conversation": question.conversation_id,
            "group": question.group,
            "question": question.text,
            "evidence": sorted(question.evidence),
        },
    )
    rank = {turn: i for i, turn in enumerate(ranked, start=1)}
    entry[system] = {
        "top": ranked[: max(KS)],
        "ranks": {turn: rank.get(turn) for turn in entry["evidence"]},
    }


def _report(
    data: Dataset, systems: Sequence[str], tally: _Tally, *, peak_rss_mb: float
) -> QualityReport:
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


# -- for people ------------------------------------------------------------------------------
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
