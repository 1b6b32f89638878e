"""The ``hindsight`` command: a thin adapter over :class:`hindsight.Hindsight`.

Each command parses its options, calls one library method and prints the answer,
as a table for people or as JSON (``--json``) for scripts. Errors are mapped to
one line and an exit code in one place (:mod:`hindsight.cli.base`). The group and its
global options are in :mod:`~hindsight.cli.group`, and the commands by concern: memory
(retain, recall, forget, list, show, update, ...) in :mod:`~hindsight.cli.memory`,
working-memory sessions in :mod:`~hindsight.cli.session`, export, import and re-embedding
in :mod:`~hindsight.cli.transfer`, summaries, lessons and foresight in
:mod:`~hindsight.cli.distil`, entity pages and their wiki in :mod:`~hindsight.cli.entities`,
the demo in :mod:`~hindsight.cli.demo`, the benchmarks in
:mod:`~hindsight.cli.bench` (quality in :mod:`~hindsight.cli.bench_quality`, speed, scale
and load in :mod:`~hindsight.cli.bench_speed`), background work in
:mod:`~hindsight.cli.jobs`, the review queue and the audit log in
:mod:`~hindsight.cli.review`, feedback and history in :mod:`~hindsight.cli.history`, LLM
usage in :mod:`~hindsight.cli.usage`, pin, restore and the maintenance pass in
:mod:`~hindsight.cli.lifecycle`, the vector engine's check and index in
:mod:`~hindsight.cli.vectors`, and the configuration and endpoints in
:mod:`~hindsight.cli.doctor`.
"""

from __future__ import annotations

from collections.abc import Sequence

from hindsight.cli.group import cli

# Registered by import: each module adds its commands to the group.
from hindsight.cli import memory as _memory  # noqa: F401  # isort: skip
from hindsight.cli import session as _session  # noqa: F401  # isort: skip
from hindsight.cli import transfer as _transfer  # noqa: F401  # isort: skip
from hindsight.cli import distil as _distil  # noqa: F401  # isort: skip
from hindsight.cli import entities as _entities  # noqa: F401  # isort: skip
from hindsight.cli import demo as _demo  # noqa: F401  # isort: skip
from hindsight.cli import bench as _bench  # noqa: F401  # isort: skip
from hindsight.cli import bench_quality as _bench_quality  # noqa: F401  # isort: skip
from hindsight.cli import bench_speed as _bench_speed  # noqa: F401  # isort: skip
from hindsight.cli import doctor as _doctor  # noqa: F401  # isort: skip
from hindsight.cli import history as _history  # noqa: F401  # isort: skip
from hindsight.cli import jobs as _jobs  # noqa: F401  # isort: skip
from hindsight.cli import lifecycle as _lifecycle  # noqa: F401  # isort: skip
from hindsight.cli import review as _review  # noqa: F401  # isort: skip
from hindsight.cli import serve as _serve  # noqa: F401  # isort: skip
from hindsight.cli import usage as _usage  # noqa: F401  # isort: skip
from hindsight.cli import vectors as _vectors  # noqa: F401  # isort: skip

__all__ = ["cli", "main"]


def main(argv: Sequence[str] | None = None) -> None:
    """The ``hindsight`` console script."""
    cli.main(args=argv, prog_name="hindsight")
