"""``hindsight bench lifecycle``: a simulated year of a busy owner, on a simulated clock.

About ``memories`` memories are written over ``weeks`` weeks (a batch a week, through
``import_records``), seeded, so every run writes the same year:

- topics: a project's setting stated once, then changed some weeks later ("Project
  Zephyr uses the Oak build server" -> "... the Birch build server"); the current value
  is restated every few weeks (a reinforcement) and recalled; the old one never again;
- pinned: weakly held memories the user pinned (they must never be archived);
- expiring: memories with an ``expires_at`` one to eight weeks on;
- a session owner's memories, under a 30-day retention (``session:*``);
- filler: notes of every confidence, never used unless a recall returns them.

Every week the topics' questions are asked (recalls: use, when recalls count as use)
and the maintenance pass runs. At the end, each topic's question is asked once more:
recall quality on what is still current is whether the current value comes first
(hit@1), its reciprocal rank (MRR@10), and how often the stale value outranks it. The
same year is run with decay off (``decay_per_week=1.0``) and with decay, a recall
counting as use and not, each in a store of its own; vectors are computed once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from hindsight.bench.scale import sentences
from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.embed import registry as embedders
from hindsight.embed.base import Vectors
from hindsight.engine import Hindsight
from hindsight.lifecycle import Maintenance
from hindsight.models import Status
from hindsight.store import Filter

OWNER = "user:busy"
SESSION = "session:bench-chat"
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
WEEK = timedelta(weeks=1)
_PROJECTS = [
    "Zephyr", "Orion", "Juniper", "Basalt", "Cobalt", "Falcon", "Granite", "Harbor",
    "Indigo", "Kestrel", "Lumen", "Meridian", "Nimbus", "Onyx", "Pioneer", "Quartz",
    "Raven", "Sierra", "Tundra", "Umber", "Vertex", "Willow", "Yarrow", "Zenith",
]  # fmt: skip
_SLOTS = [
    "build server", "database", "deploy region", "code reviewer", "issue tracker",
    "chat channel", "release day", "test runner", "design lead", "cloud account",
]  # fmt: skip
_VALUES = [
    "Oak", "Birch", "Cedar", "Maple", "Aspen", "Elm", "Pine", "Spruce", "Alder", "Hazel",
    "Rowan", "Linden", "Poplar", "Sequoia", "Cypress", "Laurel",
]  # fmt: skip
CONFIGS: dict[str, tuple[float, bool]] = {
    "no_decay": (1.0, True),
    "decay_recall_is_use": (0.98, True),
    "decay_recall_not_use": (0.98, False),
}


class CachedEmbeddings(Embeddings):
    """An embedder that remembers each text's vector: the same year is written three times."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self._seen: dict[str, Vectors] = {}

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        missing = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if missing:
            for text, vector in zip(missing, self.inner.embed_batch(missing), strict=True):
                self._seen[text] = vector
        return np.stack([self._seen[t] for t in texts])


@dataclass(slots=True)
class Topic:
    question: str
    old: str  # the value first stated: stale once changed
    current: str
    old_week: int
    new_week: int
    current_id: str = ""
    old_id: str = ""


@dataclass(slots=True)
class Year:
    """What the simulation writes, week by week (the same for every configuration)."""

    weeks: list[list[dict[str, Any]]]
    topics: list[Topic]
    pinned: int
    expiring: int
    session: int


def plan_year(memories: int, weeks: int, seed: int) -> Year:
    """The seeded year: every memory as an import record, by week."""
    rng = random.Random(seed)
    by_week: list[list[dict[str, Any]]] = [[] for _ in range(weeks)]
    topics: list[Topic] = []
    n_topics = max(8, memories // 100)
    for i in range(n_topics):
        project = _PROJECTS[i % len(_PROJECTS)]
        slot = _SLOTS[(i // len(_PROJECTS)) % len(_SLOTS)]
        lap = i // (len(_PROJECTS) * len(_SLOTS))  # past 240 topics, names repeat: number them
        project = f"{project}-{lap}" if lap else project
        old, new = rng.sample(_VALUES, 2)
        a = rng.randrange(0, max(1, weeks // 2))
        b = min(weeks - 2, a + rng.randrange(4, max(5, weeks // 2)))
        topics.append(
            Topic(
                question=f"which {slot} does project {project} use now?",
                old=f"Project {project} uses {old} as its {slot}.",
                current=f"Project {project} uses {new} as its {slot}.",
                old_week=a,
                new_week=max(a + 1, b),
            )
        )
    for i, t in enumerate(topics):
        t.old_id, t.current_id = f"t_old_{i:05d}", f"t_new_{i:05d}"
        by_week[t.old_week].append(_record(t.old_id, OWNER, t.old, rng.uniform(0.6, 0.8)))
        by_week[t.new_week].append(_record(t.current_id, OWNER, t.current, rng.uniform(0.6, 0.8)))
    n_pinned, n_expiring, n_session = memories // 200, memories // 40, memories // 20
    n_filler = memories - 2 * n_topics - n_pinned - n_expiring - n_session
    notes = sentences(max(0, n_filler) + n_pinned + n_expiring + n_session, seed=seed)
    for i in range(n_pinned):
        rec = _record(f"p_{i:05d}", OWNER, next(notes), rng.uniform(0.3, 0.5))
        by_week[rng.randrange(weeks)].append(rec | {"pinned": True})
    for i in range(n_expiring):
        week = rng.randrange(weeks)
        until = START + week * WEEK + timedelta(days=rng.randint(7, 56))
        rec = _record(f"e_{i:05d}", OWNER, next(notes), rng.uniform(0.5, 1.0))
        by_week[week].append(rec | {"expires_at": until.isoformat()})
    for i in range(n_session):
        rec = _record(f"s_{i:05d}", SESSION, next(notes), rng.uniform(0.5, 1.0))
        by_week[rng.randrange(weeks)].append(rec)
    for i in range(max(0, n_filler)):
        rec = _record(f"f_{i:06d}", OWNER, next(notes), rng.uniform(0.3, 1.0))
        by_week[rng.randrange(weeks)].append(rec)
    for w, batch in enumerate(by_week):  # learnt in the week it was written
        for j, rec in enumerate(batch):
            at = (START + w * WEEK + timedelta(seconds=j)).isoformat()
            rec["observed_at"] = rec["created_at"] = rec["updated_at"] = at
    return Year(by_week, topics, n_pinned, n_expiring, n_session)


def _record(mid: str, owner: str, content: str, confidence: float) -> dict[str, Any]:
    return {
        "id": mid,
        "owner": owner,
        "kind": "fact",
        "content": content,
        "confidence": confidence,
        "provenance": {"source": "user"},  # the user's own words, as retained
    }


@dataclass(slots=True)
class YearResult:
    """One configuration's year."""

    decay_per_week: float
    decay_counts_recall: bool
    hit_at_1: float = 0.0  # the current value first
    mrr_at_10: float = 0.0
    stale_first: float = 0.0  # the stale value ranked above the current one
    archived: int = 0  # at the year's end
    stale_left_unarchived: int = 0  # what the pass should have archived and did not
    pinned_archived: int = 0
    current_archived: int = 0  # current values archived (must be 0: they are in use)
    expired: int = 0
    forgotten_by_retention: int = 0
    expired_still_stored: int = 0
    restored: int = 0  # archived memories restored at the end (all of them)
    restore_failures: int = 0
    pass_total_s: float = 0.0
    pass_max_s: float = 0.0
    memories_written: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


def run_year(
    settings: Settings, year: Year, embedder: Embeddings, *, recalls_per_week: int = 20
) -> YearResult:
    """The year in one store with ``settings`` (its decay settings set by the caller)."""
    out = YearResult(settings.decay_per_week, settings.decay_counts_recall)
    started = time.perf_counter()
    clock = _Clock(START)
    rng = random.Random(len(year.topics))
    with Hindsight(settings, embedder=embedder, clock=clock) as hs:
        for w, batch in enumerate(year.weeks):
            clock.now = START + w * WEEK + timedelta(hours=1)
            hs.import_records(batch)
            out.memories_written += len(batch)
            clock.now += timedelta(days=2)
            live = [t for t in year.topics if t.new_week <= w]
            for t in live:  # the current value restated every six weeks (staggered)
                if (w - t.new_week) % 6 == 5:
                    hs.retain(OWNER, t.current, kind="fact", confidence=0.7)
            clock.now += timedelta(days=2)
            for t in rng.sample(live, min(recalls_per_week, len(live))):
                hs.recall(OWNER, t.question, k=10)
            clock.now += timedelta(days=2)
            tick = time.perf_counter()
            report = hs.maintain()
            spent = time.perf_counter() - tick
            out.pass_total_s += spent
            out.pass_max_s = max(out.pass_max_s, spent)
            out.expired += report.expired
            out.forgotten_by_retention += report.forgotten
        last_pass = clock.now
        clock.now = START + len(year.weeks) * WEEK
        _score(hs, year, out)
        _check(hs, settings, last_pass, out)  # as the last pass saw the store
        _restore_all(hs, out)
    out.seconds = time.perf_counter() - started
    return out


class _Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _score(hs: Hindsight, year: Year, out: YearResult) -> None:
    hits = reciprocal = stale = 0.0
    for t in year.topics:
        ranked = [r.memory.id for r in hs.recall(OWNER, t.question, k=10)]
        if ranked[:1] == [t.current_id]:
            hits += 1
        if t.current_id in ranked:
            reciprocal += 1 / (ranked.index(t.current_id) + 1)
        here = ranked.index(t.current_id) if t.current_id in ranked else len(ranked)
        if t.old_id in ranked[:here]:
            stale += 1
    n = len(year.topics)
    out.hit_at_1, out.mrr_at_10, out.stale_first = hits / n, reciprocal / n, stale / n


def _check(hs: Hindsight, settings: Settings, now: datetime, out: YearResult) -> None:
    everything = Filter(owners=[OWNER, SESSION], statuses=tuple(Status), current_only=False)
    rows = list(hs.store.iterate(everything))
    archived = [m for m in rows if m.status is Status.ARCHIVED]
    out.archived = len(archived)
    out.pinned_archived = sum(1 for m in archived if m.pinned)
    out.current_archived = sum(1 for m in archived if m.id.startswith("t_new_"))
    rules = Maintenance.of(settings, hs.store)
    out.stale_left_unarchived = sum(1 for m in rows if rules.is_stale(m, now))
    out.expired_still_stored = sum(1 for m in rows if m.expires_at and m.expires_at <= now)


def _restore_all(hs: Hindsight, out: YearResult) -> None:
    archived = Filter(owners=[OWNER], statuses=(Status.ARCHIVED,), current_only=False)
    for memory in list(hs.store.iterate(archived)):
        if hs.restore(memory.id).status is Status.ACTIVE:
            out.restored += 1
        else:
            out.restore_failures += 1


@dataclass(slots=True)
class LifecycleReport:
    memories: int
    weeks: int
    seed: int
    topics: int
    pinned: int
    expiring: int
    session_memories: int
    runs: dict[str, YearResult] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        head = {k: v for k, v in asdict(self).items() if k != "runs"}
        return head | {"runs": {name: r.as_dict() for name, r in self.runs.items()}}


def run(
    settings_for: Callable[[str], Settings],
    *,
    memories: int = 20_000,
    weeks: int = 52,
    seed: int = 7,
    configs: Sequence[str] = tuple(CONFIGS),
    embedder: Embeddings | None = None,
    progress: Callable[[int], None] | None = None,
) -> LifecycleReport:
    """Run the year under each configuration, each in the store ``settings_for(name)`` gives."""
    year = plan_year(memories, weeks, seed)
    base = settings_for("embedder")
    cached = CachedEmbeddings(embedder or embedders.create(base.embedding_provider, base))
    report = LifecycleReport(
        memories=sum(len(b) for b in year.weeks),
        weeks=weeks,
        seed=seed,
        topics=len(year.topics),
        pinned=year.pinned,
        expiring=year.expiring,
        session_memories=year.session,
    )
    for name in configs:
        per_week, counts_recall = CONFIGS[name]
        settings = settings_for(name).model_copy(
            update={
                "decay_per_week": per_week,
                "decay_counts_recall": counts_recall,
                "retention": {"session:*": 30},
            }
        )
        report.runs[name] = run_year(settings, year, cached)
        if progress is not None:
            progress(1)
    return report


def table(report: LifecycleReport) -> list[str]:
    """The report for people: one column per configuration."""
    names = list(report.runs)
    rows = [f"{'':>24}  " + "  ".join(f"{n:>22}" for n in names)]
    for key in YearResult.__slots__:
        values = [report.runs[n].as_dict()[key] for n in names]
        rows.append(f"{key:>24}  " + "  ".join(f"{v!s:>22}" for v in values))
    return [
        f"{report.memories} memories over {report.weeks} weeks (seed {report.seed}): "
        f"{report.topics} topics, {report.pinned} pinned, {report.expiring} expiring, "
        f"{report.session_memories} of a session owner under 30-day retention",
        *rows,
    ]
