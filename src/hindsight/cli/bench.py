"""``hindsight bench``: benchmarks through the code users run."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hindsight.cli.base import (
    App,
    dumps,
    echo,
    emit_json,
    json_option,
)
from hindsight.cli.group import cli
from hindsight.store import scratch

if TYPE_CHECKING:
    from hindsight.config import Settings


# -- benchmarks ----------------------------------------------------------------------------
@cli.group()
def bench() -> None:
    """Measure speed and recall quality through the code users run.

    Each benchmark writes into a store of its own, removed when it ends: a temporary
    home (unless --home is given), and with HINDSIGHT_DATABASE_URL a new schema of
    that database, so its owners never mix with the data already there.
    """


def _out_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--out",
        type=click.Path(dir_okay=False, writable=True, path_type=Path),
        metavar="FILE",
        help="Also write the JSON report to FILE.",
    )(f)


def _report(data: dict[str, Any], out: Path | None, as_json: bool, lines: list[str]) -> None:
    """Keep the JSON report in ``out`` (if given); print it, or ``lines`` for people."""
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(dumps(data) + "\n", encoding="utf-8")
    if as_json:
        emit_json(data)
    else:
        echo("\n".join(lines))


@contextlib.contextmanager
def _store(
    app: App, prefix: str, work: int, label: str
) -> Iterator[tuple[Settings, Callable[[int], None] | None]]:
    """The benchmark's own store (a temporary home unless --home; a scratch schema on
    PostgreSQL) and a progress bar's step for ``work`` units."""
    with contextlib.ExitStack() as stack:
        home = app.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))
        settings = stack.enter_context(scratch(app.settings(home)))
        bar = stack.enter_context(app.progress(range(work), length=work, label=label))
        yield settings, getattr(bar, "update", None)


def _fields(data: dict[str, Any], width: int) -> list[str]:
    return [f"{key:>{width}}  {value}" for key, value in data.items()]


def _vector_backend(ctx: click.Context, param: click.Parameter, name: str | None) -> str | None:
    """A vector backend's name, checked against those registered (and ``auto``)."""
    from hindsight.store.vectors import vector_backends

    known = ["auto", *vector_backends.names()]
    if name is not None and name not in known:
        raise click.BadParameter(f"unknown vector backend {name!r}; valid: {', '.join(known)}")
    return name


@bench.command("scale")
@click.option(
    "--n",
    "n",
    type=click.IntRange(1, 10_000_000),
    default=100_000,
    show_default=True,
    help="How many memories to build the store with.",
)
@click.option(
    "--queries",
    type=click.IntRange(1, 100_000),
    default=200,
    show_default=True,
    help="How many recalls to time.",
)
@click.option(
    "--owners",
    type=click.IntRange(1, 1_000_000),
    default=1,
    show_default=True,
    help="Deal the memories out to this many owners; recalls go to one after another.",
)
@click.option(
    "--vector-backend",
    metavar="NAME",
    callback=_vector_backend,
    help="Keep and search vectors with this backend (as HINDSIGHT_VECTOR_BACKEND: "
    "auto, local, pgvector, qdrant, qdrant-edge or a plugin's); default: the setting.",
)
@json_option
@_out_option
@click.pass_obj
def bench_scale(
    app: App,
    n: int,
    queries: int,
    owners: int,
    vector_backend: str | None,
    as_json: bool,
    out: Path | None,
) -> None:
    """Ingest N generated memories for one owner (or --owners), then time recalls.

    Runs in a fresh temporary store unless --home is given on the group. The report
    names the vector backend used and what the store takes on disk.
    """
    from hindsight.bench import scale

    with _store(app, "hs-b-", n, "ingesting") as (settings, step):
        if vector_backend is not None:
            settings = settings.model_copy(update={"vector_backend": vector_backend})
        result = scale.run(settings, n, queries=queries, owners=owners, progress=step)
    _report(result.as_dict(), out, as_json, _fields(result.as_dict(), 20))


@bench.command("cache")
@click.option(
    "--n",
    "n",
    type=click.IntRange(1, 10_000_000),
    default=10_000,
    show_default=True,
    help="How many memories to build the store with.",
)
@click.option(
    "--queries",
    type=click.IntRange(1, 100_000),
    default=200,
    show_default=True,
    help="How many distinct recalls to time, uncached, missed and hit.",
)
@json_option
@_out_option
@click.pass_obj
def bench_cache(app: App, n: int, queries: int, as_json: bool, out: Path | None) -> None:
    """Time recalls answered from the recall cache beside the same recalls searched.

    The cache is where the settings put it: Redis with HINDSIGHT_REDIS_URL, else this
    process. Runs in a fresh temporary store unless --home is given on the group.
    """
    from hindsight.bench import cache

    with _store(app, "hs-c-", n, "ingesting") as (settings, step):
        result = cache.run(settings, n, queries=queries, progress=step)
    _report(result.as_dict(), out, as_json, _fields(result.as_dict(), 17))


@bench.command("rerank")
@click.option(
    "--n",
    "n",
    type=click.IntRange(1, 10_000_000),
    default=10_000,
    show_default=True,
    help="How many memories to build the store with.",
)
@click.option(
    "--queries",
    type=click.IntRange(1, 100_000),
    default=200,
    show_default=True,
    help="How many recalls to time with each reranker.",
)
@json_option
@_out_option
@click.pass_obj
def bench_rerank(app: App, n: int, queries: int, as_json: bool, out: Path | None) -> None:
    """Time the rerank step: no reranker, then http and llm against loopback servers.

    Reports each recall's time and the rerank step's (p50/p95 ms), and the LLM tokens
    per recall; HINDSIGHT_RERANK_CANDIDATES sets how many are reranked. Quality is not
    measured: that needs a real model. Runs in a fresh temporary store unless --home.
    """
    from hindsight.bench import rerank

    with _store(app, "hs-r-", n, "ingesting") as (settings, step):
        result = rerank.run(settings, n, queries=queries, progress=step)
    _report(result.as_dict(), out, as_json, _fields(result.as_dict(), 17))


@bench.command("history")
@click.option(
    "--versions",
    type=click.IntRange(2, 1_000),
    multiple=True,
    default=(3, 50),
    show_default=True,
    help="Versions in a memory's chain (give it again for another case).",
)
@click.option(
    "--entries",
    type=click.IntRange(0, 10_000_000),
    default=20_000,
    show_default=True,
    help="Other audit entries of the owner, for a second case of each chain.",
)
@json_option
@_out_option
@click.pass_obj
def bench_history(
    app: App, versions: tuple[int, ...], entries: int, as_json: bool, out: Path | None
) -> None:
    """Time history(id) beside get(id) as a chain and its owner's audit log grow.

    Runs in a fresh temporary store unless --home is given on the group.
    """
    from hindsight.bench import history

    with _store(app, "hs-h-", 0, "building") as (settings, _):
        result = history.run(settings, versions=versions, entries=entries)
    lines = [
        f"{c['versions']:>4} versions, {c['other_entries']:>7} other entries: history "
        f"{c['history_ms']['median']} ms (max {c['history_ms']['max']}), get "
        f"{c['get_ms']['median']} ms"
        for c in result["cases"]
    ]
    _report(result, out, as_json, lines)


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
    with _store(app, "hs-q-", quality.work(dataset), name) as (settings, step):
        report = quality.run(settings, dataset, progress=step, details=details)
    _report(report.as_dict(), out, as_json, quality.table(report))


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
@_out_option
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
@_out_option
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
@_out_option
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
    with _store(app, "hs-g-", 2 * len(cases), "guard") as (settings, step):
        report = guard.run(settings, cases, details=details, progress=step)
    _report(report, out, as_json, guard.table(report))


@bench.command("foresight")
@json_option
@_out_option
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
    with _store(app, "hs-f-", len(scenarios), "foresight") as (settings, step):
        report = foresight.run(settings, scenarios, details=details, progress=step)
    _report(report, out, as_json, foresight.table(name, report))


@bench.command("load")
@click.option(
    "--url",
    "urls",
    multiple=True,
    required=True,
    metavar="URL",
    help="A running server (hindsight serve); repeat for several, given clients in turn.",
)
@click.option(
    "--clients",
    type=click.IntRange(1, 10_000),
    default=8,
    show_default=True,
    help="Concurrent clients, each sending one request at a time.",
)
@click.option(
    "--seconds",
    type=click.FloatRange(1, None),
    default=30.0,
    show_default=True,
    help="How long to time, after the warm-up.",
)
@click.option(
    "--warmup",
    type=click.FloatRange(0, None),
    default=5.0,
    show_default=True,
    help="Seconds of load before timing starts (not counted).",
)
@click.option(
    "--owners",
    type=click.IntRange(1, 100_000),
    default=20,
    show_default=True,
    help="Owners the requests are spread over (seeded with 20 notes each first).",
)
@click.option(
    "--retain-share",
    type=click.FloatRange(0, 1),
    default=0.2,
    show_default=True,
    help="The share of requests that are retains; the rest are recalls.",
)
@click.option(
    "--api-key-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A file holding the API key to send (its first line), if the servers need one.",
)
@json_option
@_out_option
def bench_load(
    urls: tuple[str, ...],
    clients: int,
    seconds: float,
    warmup: float,
    owners: int,
    retain_share: float,
    api_key_file: Path | None,
    as_json: bool,
    out: Path | None,
) -> None:
    """Drive running servers with concurrent clients; report requests/s and latency.

    A mix of recalls and retains (--retain-share) over --owners owners, written into
    the servers' store under owners named bench:load-<n>. The clients run in this
    process: on a small machine they take CPU from servers on the same host.
    """
    from hindsight.bench import load

    key = None
    if api_key_file is not None:
        key = api_key_file.read_text(encoding="utf-8").strip().splitlines()[0]
    result = load.run(
        list(urls),
        clients=clients,
        seconds=seconds,
        warmup=warmup,
        owners=owners,
        retain_share=retain_share,
        api_key=key,
    )
    _report(result.as_dict(), out, as_json, _fields(result.as_dict(), 16))


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
@_out_option
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
    _report(report.as_dict(), out, as_json, lifecycle.table(report))


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
