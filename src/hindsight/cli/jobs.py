"""``hindsight jobs``: the background work a server schedules, run on demand."""

from __future__ import annotations

import click

from hindsight import jobs
from hindsight.cli.base import App, emit_json, json_option
from hindsight.cli.commands import cli


@cli.group("jobs")
def jobs_group() -> None:
    """Background work over the whole store (a server runs it on a timer)."""


@jobs_group.command("list")
@json_option
@click.pass_obj
def list_jobs(app: App, as_json: bool) -> None:
    """List the jobs, and how often a server runs each."""
    settings = app.settings()
    rows = [
        {
            "name": job.name,
            "summary": job.summary,
            "every_seconds": None if job.every is None else job.every(settings),
        }
        for job in jobs.JOBS.values()
    ]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        every = "on demand" if row["every_seconds"] is None else f"every {row['every_seconds']} s"
        click.echo(f"{row['name']:<16}{row['summary']} ({every})")


@jobs_group.command("run")
@json_option
@click.argument("name", type=click.Choice(list(jobs.JOBS)))
@click.pass_obj
def run_job(app: App, name: str, as_json: bool) -> None:
    """Run one job now."""
    count = jobs.job(name).run(app.engine)
    if as_json:
        emit_json({"job": name, "count": count})
    else:
        click.echo(f"{name}: {count}")
