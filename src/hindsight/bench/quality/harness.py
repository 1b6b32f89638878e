"""The run: each conversation retained into its own owner, every question asked of
hindsight and of the BM25 and dense baselines, each ranking scored and tallied.

With an LLM configured, each conversation's questions are asked again once its LLM
jobs have run (the ``hindsight+llm`` system), and what the LLM layer took is reported.
"""

from __future__ import annotations

import re
import resource
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from hindsight.bench.datasets import Conversation, Dataset, Question
from hindsight.bench.quality.metrics import KS, dedupe, score_question, update_ranked_first
from hindsight.bench.quality.report import K_FETCH, SYSTEMS, WITH_LLM, QualityReport
from hindsight.bench.quality.tally import Tally, summarise
from hindsight.bench.quality.turns import TurnMap
from hindsight.config import Settings
from hindsight.engine import Hindsight
from hindsight.errors import ValidationError
from hindsight.models import Kind
from hindsight.store import Filter

_OWNER_NAME: Final = re.compile(r"[^A-Za-z0-9._@+-]+")


def owner_for(dataset: str, conversation_id: str) -> str:
    """``bench:<dataset>-<conversation id>``, the id made safe for an owner name."""
    name = _OWNER_NAME.sub("-", f"{dataset}-{conversation_id}").strip("-._@+")
    return f"bench:{name[:128] or dataset}"


def work(dataset: Dataset) -> int:
    """Units of progress a run reports: one per turn ingested, one per question asked."""
    return dataset.turn_count + len(dataset.questions)


Search = Callable[[str], tuple[list[str], float]]


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
    tally = Tally(details={} if details else None)
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
    report = summarise(data, measured, tally, peak_rss_mb=rss)
    report.llm = usage
    if tally.details is not None:
        report.details = list(tally.details.values())
    return report


def _with_llm(hs: Hindsight, owner: str, conv: Conversation, turns: TurnMap, tally: Tally) -> None:
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


def _usage(hs: Hindsight, since: datetime, tally: Tally) -> dict[str, Any]:
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
    tally: Tally,
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


def _ask(question: Question, searches: Mapping[str, Search], tally: Tally) -> None:
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
