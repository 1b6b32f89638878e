"""``hindsight bench``: benchmarks through the code users run."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hindsight.cli.base import (
    App,
    dumps,
    emit_json,
    json_option,
)
from hindsight.cli.commands import cli
from hindsight.store import scratch


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


def _keep(data: dict[str, Any], out: Path | None) -> None:
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(dumps(data) + "\n", encoding="utf-8")


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
@json_option
@_out_option
@click.pass_obj
def bench_scale(
    app: App, n: int, queries: int, owners: int, as_json: bool, out: Path | None
) -> None:
    """Ingest N generated memories for one owner (or --owners), then time recalls.

    Runs in a fresh temporary store unless --home is given on the group.
    """
    from hindsight.bench import scale

    with contextlib.ExitStack() as stack:
        home = app.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hs-b-")))
        settings = stack.enter_context(scratch(app.settings(home)))
        bar = stack.enter_context(app.progress(range(n), length=n, label="ingesting"))
        step = getattr(bar, "update", None)
        result = scale.run(settings, n, queries=queries, owners=owners, progress=step)
    _keep(result.as_dict(), out)
    if as_json:
        emit_json(result.as_dict())
        return
    for key, value in result.as_dict().items():
        click.echo(f"{key:>20}  {value}")


def _limit_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--limit",
        type=click.IntRange(1, None),
        metavar="N",
        help="Only the first N conversations.",
    )(f)


def _bench_quality(
    app: App, name: str, path: Path, *, limit: int | None, as_json: bool, out: Path | None
) -> None:
    """Load a benchmark, run it in a store (temporary unless --home), print the report."""
    from hindsight.bench import datasets, quality

    dataset = datasets.LOADERS[name](path, limit=limit)
    with contextlib.ExitStack() as stack:
        home = app.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hs-q-")))
        settings = stack.enter_context(scratch(app.settings(home)))
        total = quality.work(dataset)
        bar = stack.enter_context(app.progress(range(total), length=total, label=name))
        report = quality.run(settings, dataset, progress=getattr(bar, "update", None))
    data = report.as_dict()
    _keep(data, out)
    if as_json:
        emit_json(data)
    else:
        click.echo("\n".join(quality.table(report)))


@bench.command("locomo")
@_limit_option
@json_option
@_out_option
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_obj
def bench_locomo(app: App, limit: int | None, as_json: bool, out: Path | None, path: Path) -> None:
    """Turn-level recall on LoCoMo (PATH is its locomo10.json), against BM25 and dense.

    Each conversation is retained into its own owner through the normal write
    path, then every question is recalled with default settings; BM25-only and
    dense-only searches over the same turns run in the same store. Runs in a
    fresh temporary store unless --home is given on the group.
    """
    _bench_quality(app, "locomo", path, limit=limit, as_json=as_json, out=out)


@bench.command("beam")
@_limit_option
@json_option
@_out_option
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.pass_obj
def bench_beam(app: App, limit: int | None, as_json: bool, out: Path | None, path: Path) -> None:
    """Turn-level recall on BEAM (PATH holds <n>/chat.json folders), against BM25 and dense.

    Each conversation is retained into its own owner (a batch is a session),
    then every probing question with source messages is recalled with default
    settings. Also reports how often a knowledge update ranks above the
    information it replaced. Runs in a fresh temporary store unless --home is
    given on the group.
    """
    _bench_quality(app, "beam", path, limit=limit, as_json=as_json, out=out)


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
    with contextlib.ExitStack() as stack:
        home = app.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hs-g-")))
        settings = stack.enter_context(scratch(app.settings(home)))
        bar = stack.enter_context(
            app.progress(range(2 * len(cases)), length=2 * len(cases), label="guard")
        )
        report = guard.run(settings, cases, details=details, progress=getattr(bar, "update", None))
    _keep(report, out)
    if as_json:
        emit_json(report)
    else:
        click.echo("\n".join(guard.table(report)))


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
    data = result.as_dict()
    _keep(data, out)
    if as_json:
        emit_json(data)
        return
    for key_, value in data.items():
        click.echo(f"{key_:>16}  {value}")
