"""The recall-quality benchmarks: ``bench locomo`` and ``beam`` (turn-level recall on
public data sets), ``guard`` (memory poisoning), ``foresight`` (what lies ahead),
``entities`` (who is who on the entity pages), ``lifecycle`` (a simulated year of decay
and maintenance), and ``compare`` (two reports, before and after a change)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hindsight.cli.base import App, echo, emit_json, json_option
from hindsight.cli.bench import bench, bench_store, emit_report, out_option
from hindsight.store import scratch

if TYPE_CHECKING:
    from hindsight.config import Settings


def _quality_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options the recall-quality benchmarks share."""
    options = (
        click.option(
            "--limit",
            type=click.IntRange(1, None),
            metavar="N",
            help="Only the first N conversations.",
        ),
        click.option(
            "--one-owner",
            is_flag=True,
            help="Retain every conversation into one owner and ask each question over all "
            "of them: a long history, the other conversations its distractors.",
        ),
        click.option(
            "--details",
            is_flag=True,
            help="Also report, per question, each system's top ten turns and the rank of "
            "each evidence turn (in the JSON report).",
        ),
    )
    for option in reversed(options):
        f = option(f)
    return f


def _bench_quality(
    app: App,
    name: str,
    path: Path,
    *,
    limit: int | None,
    as_json: bool,
    out: Path | None,
    per_sentence: bool = False,
    typed: bool = False,
    one_owner: bool = False,
    details: bool = False,
) -> None:
    """Load a benchmark, run it in a store (temporary unless --home), print the report."""
    from hindsight.bench import datasets, quality

    dataset = datasets.LOADERS[name](path, limit=limit)
    if per_sentence:
        dataset = datasets.per_sentence(dataset)
    if typed:
        dataset = datasets.chat_typed(dataset)
    if one_owner:
        dataset = datasets.one_owner(dataset)
    with bench_store(app, "hs-q-", quality.work(dataset), name) as (settings, step):
        report = quality.run(settings, dataset, progress=step, details=details)
    emit_report(report.as_dict(), out, as_json, quality.table(report))


@bench.command("locomo")
@_quality_options
@click.option(
    "--per-sentence",
    is_flag=True,
    help="Send each turn as one message per sentence, in a row, as people type in chats "
    "(evidence: every message of its turns).",
)
@click.option(
    "--typed",
    is_flag=True,
    help="Type each turn as people do on a phone: shorthand (u, bday), stretched words "
    "(sooo), dropped capitals and apostrophes, and typos; the questions stay as written.",
)
@json_option
@out_option
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_obj
def bench_locomo(
    app: App,
    limit: int | None,
    one_owner: bool,
    details: bool,
    per_sentence: bool,
    typed: bool,
    as_json: bool,
    out: Path | None,
    path: Path,
) -> None:
    """Turn-level recall on LoCoMo (PATH is its locomo10.json, or any file in its layout),
    against BM25 and dense.

    Each conversation is retained into its own owner through the normal write
    path, then every question is recalled with default settings; BM25-only and
    dense-only searches over the same turns run in the same store. Runs in a
    fresh temporary store unless --home is given on the group.
    """
    _bench_quality(
        app,
        "locomo",
        path,
        limit=limit,
        as_json=as_json,
        out=out,
        per_sentence=per_sentence,
        typed=typed,
        one_owner=one_owner,
        details=details,
    )


@bench.command("beam")
@_quality_options
@json_option
@out_option
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.pass_obj
def bench_beam(
    app: App,
    limit: int | None,
    one_owner: bool,
    details: bool,
    as_json: bool,
    out: Path | None,
    path: Path,
) -> None:
    """Turn-level recall on BEAM (PATH holds <n>/chat.json folders), against BM25 and dense.

    Each conversation is retained into its own owner (a batch is a session),
    then every probing question with source messages is recalled with default
    settings. Also reports how often a knowledge update ranks above the
    information it replaced. Runs in a fresh temporary store unless --home is
    given on the group.
    """
    _bench_quality(
        app,
        "beam",
        path,
        limit=limit,
        as_json=as_json,
        out=out,
        one_owner=one_owner,
        details=details,
    )


@bench.command("guard")
@json_option
@out_option
@click.option("--details", is_flag=True, help="Also report every probe's top 5.")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_obj
def bench_guard(app: App, as_json: bool, out: Path | None, details: bool, path: Path) -> None:
    """Memory poisoning: PATH's cases retained with the guard on and off, then probed.

    Reports, per family and overall, attack success (probes with a rejected text in the
    top 5), benign kept (probes with every expected text in the top 5), false flags
    (benign writes held or flagged) and leaks (results of another owner). Runs in a
    fresh temporary store unless --home is given on the group.
    """
    from hindsight.bench import guard

    _, cases = guard.load(path)
    with bench_store(app, "hs-g-", 2 * len(cases), "guard") as (settings, step):
        report = guard.run(settings, cases, details=details, progress=step)
    emit_report(report, out, as_json, guard.table(report))


@bench.command("foresight")
@json_option
@out_option
@click.option("--details", is_flag=True, help="Also list each scenario's misses.")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_obj
def bench_foresight(app: App, as_json: bool, out: Path | None, details: bool, path: Path) -> None:
    """Foresight: PATH's dated turns retained, then what lies ahead compared with the
    expected items.

    Reports the hit rate (expected items listed), due accuracy (of those, listed on the
    expected day), kind accuracy, and false items (listed, not expected). Runs in a fresh
    temporary store unless --home is given on the group.
    """
    from hindsight.bench import foresight

    name, scenarios = foresight.load(path)
    with bench_store(app, "hs-f-", len(scenarios), "foresight") as (settings, step):
        report = foresight.run(settings, scenarios, details=details, progress=step)
    emit_report(report, out, as_json, foresight.table(name, report))


@bench.command("entities")
@json_option
@out_option
@click.option("--details", is_flag=True, help="Also list each scenario's misses.")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_obj
def bench_entities(app: App, as_json: bool, out: Path | None, details: bool, path: Path) -> None:
    """Entities: PATH's turns retained, then who is who on the entity pages compared with
    the expected.

    Reports merge recall (names of one entity found on one page), split accuracy
    (names of different entities on pages of their own), lookup accuracy (a name or role
    finds the expected page), relation recall (expected pairs linked) and false finds
    (names never said, found). Runs in a fresh temporary store unless --home is given on
    the group.
    """
    from hindsight.bench import entities

    name, scenarios = entities.load(path)
    with bench_store(app, "hs-e-", len(scenarios), "entities") as (settings, step):
        report = entities.run(settings, scenarios, details=details, progress=step)
    emit_report(report, out, as_json, entities.table(name, report))


@bench.command("lifecycle")
@click.option(
    "--memories",
    type=click.IntRange(200, 1_000_000),
    default=20_000,
    show_default=True,
    help="How many memories the year writes.",
)
@click.option(
    "--weeks",
    type=click.IntRange(4, 520),
    default=52,
    show_default=True,
    help="How many weeks the year lasts (one maintenance pass a week).",
)
@click.option("--seed", type=int, default=7, show_default=True, help="The year's seed.")
@json_option
@out_option
@click.pass_obj
def bench_lifecycle(
    app: App, memories: int, weeks: int, seed: int, as_json: bool, out: Path | None
) -> None:
    """Simulate a busy owner's year on a simulated clock: decay, pins, archive, expiry
    and retention, the weekly maintenance pass; recall quality on what is still current
    with decay off and on (a recall counting as use, and not).

    Each configuration runs in a store of its own (temporary unless --home is given).
    """
    from hindsight.bench import lifecycle

    with contextlib.ExitStack() as stack:
        root = app.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hs-l-")))
        count = len(lifecycle.CONFIGS)
        bar = stack.enter_context(app.progress(range(count), length=count, label="years"))

        def settings_for(name: str) -> Settings:
            return stack.enter_context(scratch(app.settings(root / name)))

        report = lifecycle.run(
            settings_for,
            memories=memories,
            weeks=weeks,
            seed=seed,
            progress=getattr(bar, "update", None),
        )
    emit_report(report.as_dict(), out, as_json, lifecycle.table(report))


@bench.command("compare")
@click.option(
    "--metric",
    default="frac_recall@10",
    show_default=True,
    help="The figure to compare (a key of each group in the reports).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Exit with code 1 when a group lost more than 0.01.",
)
@json_option
@click.argument("before", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("after", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def bench_compare(before: Path, after: Path, metric: str, strict: bool, as_json: bool) -> None:
    """Compare two recall reports of one data set (`bench locomo|beam --json --out F`),
    before and after a change: each category and each half, with losses beyond 0.01
    marked. A recall change lands with this table for every set (BENCHMARKS.md)."""
    import json

    from hindsight.bench import quality
    from hindsight.errors import ValidationError

    def read(path: Path) -> dict[str, Any]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValidationError(f"{path}: not a readable JSON report: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("hindsight"), dict):
            raise ValidationError(f"{path}: not a recall report (`bench locomo|beam --json`)")
        return data

    rows = quality.compare(read(before), read(after), metric=metric)
    if as_json:
        emit_json({"metric": metric, "rows": rows})
    else:
        for line in quality.compare_table(rows, metric):
            echo(line)
    if strict and any(r["loss"] for r in rows):
        raise SystemExit(1)
