"""``hindsight bench entities``: the scenario files, the loader's errors and the figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hindsight.bench import entities
from hindsight.cli import cli
from hindsight.errors import ValidationError

SETS = Path(__file__).resolve().parents[1] / "bench" / "entities"


def _file(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "set.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _scenario(**changes: Any) -> dict[str, Any]:
    scenario = {"id": "s", "speaker": "Alice", "turns": ["My sister Anna lives in Oslo."]}
    return scenario | {"expect": {"same": [["Anna", "anna"]]}} | changes


@pytest.mark.parametrize("name", ["dev.json", "holdout.json"])
def test_the_sets_load(name: str) -> None:
    title, scenarios = entities.load(SETS / name)
    assert title.startswith("entities-") and len(scenarios) >= 12
    for s in scenarios:
        assert s.expect.same and s.expect.apart and s.expect.lookups and s.expect.unknown


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "not a readable JSON file"),
        ({"version": 2, "scenarios": []}, '"version": 1'),
        ({"version": 1, "scenarios": {}}, '"scenarios": [...]'),
        ({"version": 1, "scenarios": [_scenario(speaker="")]}, "scenarios[0].speaker must be"),
        ({"version": 1, "scenarios": [_scenario(turns=[])]}, "scenarios[0].turns must be"),
        (
            {"version": 1, "scenarios": [_scenario(turns=[{"speaker": "Dana"}])]},
            "scenarios[0].turns[0].text must be a non-empty string",
        ),
        (
            {"version": 1, "scenarios": [_scenario(expect={"same": [["Anna"]]})]},
            "scenarios[0].expect.same[0] must be a list of 2 or more names",
        ),
        (
            {"version": 1, "scenarios": [_scenario(expect={"apart": [["A", "B", "C"]]})]},
            "scenarios[0].expect.apart[0] must be a list of 2 names",
        ),
        (
            {"version": 1, "scenarios": [_scenario(expect={"related": [["A", 3]]})]},
            "scenarios[0].expect.related[0][1] must be a non-empty string",
        ),
        (
            {"version": 1, "scenarios": [_scenario(expect={"lookups": [["a", "b"]]})]},
            "scenarios[0].expect.lookups must be an object",
        ),
        (
            {"version": 1, "scenarios": [_scenario(expect={"lookup": {}})]},
            "scenarios[0].expect has unknown keys ['lookup']",
        ),
        (
            {"version": 1, "scenarios": [_scenario(expect={"unknown": "Zebedee"})]},
            "scenarios[0].expect.unknown must be a list",
        ),
        ({"version": 1, "scenarios": [_scenario(), _scenario()]}, "scenarios[1] repeats the id"),
    ],
)
def test_the_loader_names_what_is_wrong(tmp_path: Path, data: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=r"set\.json") as caught:
        entities.load(_file(tmp_path, data))
    assert message in str(caught.value)


def test_the_cli_names_what_is_wrong_in_one_line(tmp_path: Path) -> None:
    path = _file(tmp_path, {"version": 1, "scenarios": [_scenario(expect={"same": "Anna"})]})
    result = CliRunner().invoke(cli, ["bench", "entities", str(path)])
    assert result.exit_code == 2 and "scenarios[0].expect.same must be a list" in result.output
    assert "Traceback" not in result.output


def test_the_benchmark_counts_merges_splits_lookups_relations_and_false_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HINDSIGHT_SQLITE_SYNCHRONOUS", "OFF")
    expect = {
        "same": [["Anna", "ANNA", "Zebedee"]],  # one pair of three on one page
        "apart": [["Anna", "Oslo"], ["Anna", "Zebedee"]],  # Zebedee is never found
        "lookups": {"anna": "Anna", "oslo": "Anna"},
        "related": [["Anna", "Oslo"], ["Anna", "Zebedee"]],
        "unknown": ["Zebedee", "Anna"],
    }
    turns = ["My sister Anna lives in Oslo.", {"speaker": "Dana", "text": "Say hi to Anna!"}]
    scenarios = [_scenario(turns=turns, expect=expect)]
    path = _file(tmp_path, {"name": "tiny", "version": 1, "scenarios": scenarios})

    def run(*args: str) -> str:
        result = CliRunner().invoke(
            cli, ["--home", str(tmp_path / "b"), "-q", "bench", "entities", str(path), *args]
        )
        assert result.exit_code == 0, result.stderr
        return result.stdout

    report = json.loads(run("--json", "--details"))
    assert {k: v for k, v in report.items() if k != "misses"} == {
        "scenarios": 1,
        "scenarios_right": 0,
        "merge_pairs": 3,
        "merged": 1,
        "merge_recall": 0.333,
        "apart_pairs": 2,
        "split": 1,
        "split_accuracy": 0.5,
        "lookups": 2,
        "lookups_right": 1,
        "lookup_accuracy": 0.5,
        "relations": 2,
        "related": 1,
        "relation_recall": 0.5,
        "unknown": 2,
        "false_finds": 1,
        "false_find_rate": 0.5,
    }
    assert report["misses"] == [
        {
            "id": "s",
            "not_merged": [{"Anna": "Anna", "Zebedee": None}, {"ANNA": "Anna", "Zebedee": None}],
            "not_apart": [{"Anna": "Anna", "Zebedee": None}],
            "lookups": [{"asked": "oslo", "want": "Anna", "found": "Oslo"}],
            "not_related": [{"Anna": "Anna", "Zebedee": None}],
            "false_finds": [{"Anna": "Anna"}],
        }
    ]
    table = run()
    assert table.startswith("tiny: 1 scenarios, 0 exactly right\n")
    assert "merge recall       33%  (1 of 3 pairs" in table
    assert "false finds          1  (50% of 2 names never said)" in table
    assert "- s:" not in table  # the misses only with --details
    out = tmp_path / "report.json"
    run("--out", str(out))
    assert json.loads(out.read_text())["related"] == 1
