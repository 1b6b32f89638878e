"""`hindsight bench compare`: a recall change's figures per category, before and after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from hindsight.bench import quality
from hindsight.cli import cli


def _report(overall: float, temporal: float, first: float, dataset: str = "locomo") -> Any:
    return {
        "dataset": dataset,
        "hindsight": {
            "overall": {"n": 10, "frac_recall@10": overall},
            "temporal": {"n": 4, "frac_recall@10": temporal},
        },
        "halves": {"hindsight": {"first": {"n": 5, "frac_recall@10": first}}},
    }


def test_a_loss_beyond_a_hundredth_is_marked_in_any_category_and_half() -> None:
    rows = quality.compare(_report(0.80, 0.90, 0.70), _report(0.805, 0.85, 0.695))
    by = {r["group"]: r for r in rows}
    assert by["overall"]["change"] == 0.005 and not by["overall"]["loss"]
    assert by["temporal"]["change"] == -0.05 and by["temporal"]["loss"]
    assert by["first half"]["change"] == -0.005 and not by["first half"]["loss"]


def test_the_command_prints_the_table_and_strict_fails_on_a_loss(tmp_path: Path) -> None:
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps(_report(0.80, 0.90, 0.70)))
    after.write_text(json.dumps(_report(0.81, 0.85, 0.71)))
    runner = CliRunner()
    shown = runner.invoke(cli, ["bench", "compare", str(before), str(after)])
    assert shown.exit_code == 0, shown.output
    assert "temporal (4)" in shown.output and "loss > 0.01" in shown.output
    strict = runner.invoke(cli, ["bench", "compare", "--strict", str(before), str(after)])
    assert strict.exit_code == 1
    as_json = runner.invoke(cli, ["bench", "compare", "--json", str(before), str(after)])
    assert json.loads(as_json.output)["rows"][1]["loss"] is True


def test_reports_of_two_data_sets_are_refused(tmp_path: Path) -> None:
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps(_report(0.8, 0.9, 0.7)))
    after.write_text(json.dumps(_report(0.8, 0.9, 0.7, dataset="beam")))
    result = CliRunner().invoke(cli, ["bench", "compare", str(before), str(after)])
    assert result.exit_code == 2 and "different data sets" in result.output
    (tmp_path / "junk.json").write_text("[1, 2]")
    junk = CliRunner().invoke(cli, ["bench", "compare", str(before), str(tmp_path / "junk.json")])
    assert junk.exit_code == 2 and "not a recall report" in junk.output
