"""The ``hindsight`` group: its global options (--home, --quiet, --version) and help.

Every other module of this package adds its commands to :data:`cli`.
"""

from __future__ import annotations

from pathlib import Path

import click

from hindsight.cli.base import App, _Group


@click.group("hindsight", cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Data directory (default: $HINDSIGHT_HOME, else the platform's data dir).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bars or progress notes.")
@click.version_option(package_name="agent-hindsight", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context, home: Path | None, quiet: bool) -> None:
    """Long-term memory for LLM agents, on the command line.

    Every command that prints data takes --json. TEXT and QUERY arguments may be
    '-' to read stdin (strict UTF-8).

    \b
    Exit codes:
      0  success
      1  failure (store, embedding model, conflict, or a declined confirmation)
      2  bad input or usage; nothing was changed
      3  not found
    """
    ctx.obj = App(home=home, quiet=quiet)
