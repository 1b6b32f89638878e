"""The benchmarks of speed, scale and load: ``bench scale``, ``cache``, ``rerank``,
``history`` and ``load``, each timing the code users run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hindsight.cli.base import App, json_option
from hindsight.cli.bench import bench, bench_store, emit_report, fields, out_option

_Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def _n_option(*, default: int) -> _Decorator:
    """--n: how many memories the benchmark's store is built with."""
    return click.option(
        "--n",
        "n",
        type=click.IntRange(1, 10_000_000),
        default=default,
        show_default=True,
        help="How many memories to build the store with.",
    )


def _queries_option(help_text: str) -> _Decorator:
    """--queries: how many recalls to time, ``help_text`` saying which."""
    return click.option(
        "--queries",
        type=click.IntRange(1, 100_000),
        default=200,
        show_default=True,
        help=help_text,
    )


def _vector_backend(ctx: click.Context, param: click.Parameter, name: str | None) -> str | None:
    """A vector backend's name, checked against those registered (and ``auto``)."""
    from hindsight.store.vectors import vector_backends

    known = ["auto", *vector_backends.names()]
    if name is not None and name not in known:
        raise click.BadParameter(f"unknown vector backend {name!r}; valid: {', '.join(known)}")
    return name


@bench.command("scale")
@_n_option(default=100_000)
@_queries_option("How many recalls to time.")
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
@out_option
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

    with bench_store(app, "hs-b-", n, "ingesting") as (settings, step):
        if vector_backend is not None:
            settings = settings.model_copy(update={"vector_backend": vector_backend})
        result = scale.run(settings, n, queries=queries, owners=owners, progress=step)
    emit_report(result.as_dict(), out, as_json, fields(result.as_dict(), 20))


@bench.command("cache")
@_n_option(default=10_000)
@_queries_option("How many distinct recalls to time, uncached, missed and hit.")
@json_option
@out_option
@click.pass_obj
def bench_cache(app: App, n: int, queries: int, as_json: bool, out: Path | None) -> None:
    """Time recalls answered from the recall cache beside the same recalls searched.

    The cache is where the settings put it: Redis with HINDSIGHT_REDIS_URL, else this
    process. Runs in a fresh temporary store unless --home is given on the group.
    """
    from hindsight.bench import cache

    with bench_store(app, "hs-c-", n, "ingesting") as (settings, step):
        result = cache.run(settings, n, queries=queries, progress=step)
    emit_report(result.as_dict(), out, as_json, fields(result.as_dict(), 17))


@bench.command("rerank")
@_n_option(default=10_000)
@_queries_option("How many recalls to time with each reranker.")
@json_option
@out_option
@click.pass_obj
def bench_rerank(app: App, n: int, queries: int, as_json: bool, out: Path | None) -> None:
    """Time the rerank step: no reranker, then http and llm against loopback servers.

    Reports each recall's time and the rerank step's (p50/p95 ms), and the LLM tokens
    per recall; HINDSIGHT_RERANK_CANDIDATES sets how many are reranked. Quality is not
    measured: that needs a real model. Runs in a fresh temporary store unless --home.
    """
    from hindsight.bench import rerank

    with bench_store(app, "hs-r-", n, "ingesting") as (settings, step):
        result = rerank.run(settings, n, queries=queries, progress=step)
    emit_report(result.as_dict(), out, as_json, fields(result.as_dict(), 17))


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
@out_option
@click.pass_obj
def bench_history(
    app: App, versions: tuple[int, ...], entries: int, as_json: bool, out: Path | None
) -> None:
    """Time history(id) beside get(id) as a chain and its owner's audit log grow.

    Runs in a fresh temporary store unless --home is given on the group.
    """
    from hindsight.bench import history

    with bench_store(app, "hs-h-", 0, "building") as (settings, _):
        result = history.run(settings, versions=versions, entries=entries)
    lines = [
        f"{c['versions']:>4} versions, {c['other_entries']:>7} other entries: history "
        f"{c['history_ms']['median']} ms (max {c['history_ms']['max']}), get "
        f"{c['get_ms']['median']} ms"
        for c in result["cases"]
    ]
    emit_report(result, out, as_json, lines)


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
@out_option
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
    emit_report(result.as_dict(), out, as_json, fields(result.as_dict(), 16))
