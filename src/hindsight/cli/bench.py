"""``hindsight bench``: benchmarks through the code users run.

This module is the group and what its commands share: the --out option, the report
(kept in a file, printed as JSON or for people) and the benchmark's own store. The
recall-quality benchmarks are in :mod:`~hindsight.cli.bench_quality`, those of speed,
scale and load in :mod:`~hindsight.cli.bench_speed`.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hindsight.cli.base import App, dumps, echo, emit_json
from hindsight.cli.group import cli
from hindsight.store import scratch

if TYPE_CHECKING:
    from hindsight.config import Settings


@cli.group()
def bench() -> None:
    """Measure speed and recall quality through the code users run.

    Each benchmark writes into a store of its own, removed when it ends: a temporary
    home (unless --home is given), and with HINDSIGHT_DATABASE_URL a new schema of
    that database, so its owners never mix with the data already there.
    """


def out_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--out",
        type=click.Path(dir_okay=False, writable=True, path_type=Path),
        metavar="FILE",
        help="Also write the JSON report to FILE.",
    )(f)


def emit_report(data: dict[str, Any], out: Path | None, as_json: bool, lines: list[str]) -> None:
    """Keep the JSON report in ``out`` (if given); print it, or ``lines`` for people."""
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(dumps(data) + "\n", encoding="utf-8")
    if as_json:
        emit_json(data)
    else:
        echo("\n".join(lines))


@contextlib.contextmanager
def bench_store(
    app: App, prefix: str, work: int, label: str
) -> Iterator[tuple[Settings, Callable[[int], None] | None]]:
    """The benchmark's own store (a temporary home unless --home; a scratch schema on
    PostgreSQL) and a progress bar's step for ``work`` units."""
    with contextlib.ExitStack() as stack:
        home = app.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))
        settings = stack.enter_context(scratch(app.settings(home)))
        bar = stack.enter_context(app.progress(range(work), length=work, label=label))
        yield settings, getattr(bar, "update", None)


def fields(data: dict[str, Any], width: int) -> list[str]:
    return [f"{key:>{width}}  {value}" for key, value in data.items()]
