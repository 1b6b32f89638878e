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

By concern: the metrics (:mod:`.metrics`), results mapped back to turns (:mod:`.turns`),
the run (:mod:`.harness`) and what it tallies (:mod:`.tally`), the report and its table
(:mod:`.report`), and two reports compared (:mod:`.comparison`).
"""

from __future__ import annotations

from hindsight.bench.quality.comparison import LOSS, compare, compare_table
from hindsight.bench.quality.harness import Search, owner_for, run, work
from hindsight.bench.quality.metrics import (
    KS,
    METRICS,
    aggregate,
    dedupe,
    frac_recall,
    ndcg,
    recall_all,
    recall_any,
    score_question,
    update_ranked_first,
)
from hindsight.bench.quality.report import (
    COLUMNS,
    K_FETCH,
    SYSTEMS,
    WITH_LLM,
    QualityReport,
    table,
)
from hindsight.bench.quality.tally import PER_CONVERSATION
from hindsight.bench.quality.turns import TurnMap

__all__ = [
    "COLUMNS",
    "KS",
    "K_FETCH",
    "LOSS",
    "METRICS",
    "PER_CONVERSATION",
    "SYSTEMS",
    "WITH_LLM",
    "QualityReport",
    "Search",
    "TurnMap",
    "aggregate",
    "compare",
    "compare_table",
    "dedupe",
    "frac_recall",
    "ndcg",
    "owner_for",
    "recall_all",
    "recall_any",
    "run",
    "score_question",
    "table",
    "update_ranked_first",
    "work",
]
