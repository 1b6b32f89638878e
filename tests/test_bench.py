"""``hindsight bench scale`` runs end to end on a small store."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hindsight import Hindsight, Settings
from hindsight.bench.scale import QUERIES, owner_of, sentences
from hindsight.cli import cli


def test_generated_text_is_repeatable_and_varied() -> None:
    first = list(sentences(500))
    assert first == list(sentences(500))
    assert len(set(first)) == 500
    assert len({s.split(" (note")[0] for s in first}) > 300


def test_bench_scale_reports_every_figure(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "--home",
            str(tmp_path / "b"),
            "bench",
            "scale",
            "--n",
            "300",
            "--queries",
            "16",
            "--json",
            "--out",
            str(tmp_path / "kept" / "scale.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert json.loads((tmp_path / "kept" / "scale.json").read_text()) == figures
    assert figures["n"] == 300
    for key in (
        "ingest_per_s",
        "embed_only_per_s",
        "recall_p50_ms",
        "recall_p95_ms",
        "keyword_p50_ms",
        "dense_p50_ms",
        "embed_query_p50_ms",
        "first_recall_ms",
        "first_recall_rebuild_ms",
        "peak_rss_mb",
    ):
        assert figures[key] > 0, key
    assert figures["recall_p95_ms"] >= figures["recall_p50_ms"]
    assert len(QUERIES) >= 8


def test_bench_scale_deals_memories_out_to_owners(tmp_path: Path) -> None:
    args = ["--home", str(tmp_path / "b"), "bench", "scale", "--n", "60", "--queries", "6"]
    result = CliRunner().invoke(cli, [*args, "--owners", "3", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert (figures["n"], figures["owners"]) == (60, 3)
    assert figures["recall_p50_ms"] > 0 and figures["dense_p50_ms"] > 0
    with Hindsight(Settings(home=tmp_path / "b")) as hs:
        assert [hs.stats(owner_of(i, 3)).memories for i in range(3)] == [20, 20, 20]
    refused = CliRunner().invoke(cli, [*args, "--owners", "61"])
    assert refused.exit_code == 2 and "owners must be between 1 and n" in refused.output
