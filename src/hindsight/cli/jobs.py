"""``hindsight jobs``: the queue of LLM jobs, and the background work a server schedules,
run on demand."""

from __future__ import annotations

import click

from hindsight import jobs, views
from hindsight.cli.base import App, CliError, cell, echo, emit_json, json_option
from hindsight.cli.group import cli
from hindsight.store import JOB_STATES


@cli.group("jobs", invoke_without_command=True)
@click.pass_context
def jobs_group(ctx: click.Context) -> None:
    """Background work: the queue of LLM jobs (alone: its status), and the work over the
    whole store that a server runs on a timer."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(status)


@jobs_group.command("status")
@click.option("--owner", metavar="OWNER", help="Only this owner's jobs (default: every owner).")
@click.option(
    "--state",
    "states",
    multiple=True,
    type=click.Choice(JOB_STATES),
    help="Only jobs in this state (repeatable).",
)
@click.option("--limit", type=int, default=20, show_default=True, help="Jobs to list.")
@json_option
@click.pass_obj
def status(app: App, owner: str | None, states: tuple[str, ...], limit: int, as_json: bool) -> None:
    """Show the queued LLM jobs: how many are in each state, and the latest."""
    queue = app.engine.jobs(owner, states=list(states) or None, limit=limit)
    if as_json:
        emit_json(views.job_queue(queue))
        return
    echo("  ".join(f"{state} {n}" for state, n in queue.counts.items()))
    for job in queue.jobs:
        note = job.error or ""
        if job.state == "done" and job.result is not None:
            note = f"created {len(job.result.get('created', []))}"
        echo(
            f"{job.id}  {job.state:<8} {job.operation:<8} {cell(job.owner)}  "
            f"tries {job.attempts}  {job.created_at.isoformat(timespec='seconds')}  {cell(note)}"
        )


@jobs_group.command("retry")
@click.option("--owner", metavar="OWNER", help="Only this owner's jobs (default: every owner).")
@json_option
@click.pass_obj
def retry(app: App, owner: str | None, as_json: bool) -> None:
    """Queue the failed LLM jobs again, their tries reset (after mending the model's
    settings); `hindsight jobs wait` or a server then runs them."""
    count = app.engine.retry_jobs(owner)
    if as_json:
        emit_json({"retried": count})
    else:
        echo(f"retried {count} job(s)")


@jobs_group.command("wait")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Give up after this many seconds (default: wait as long as it takes).",
)
@json_option
@click.pass_obj
def wait(app: App, timeout: float | None, as_json: bool) -> None:
    """Run the queued LLM jobs here until none is pending or running; exits 1 if any
    job has failed (or jobs are still waiting at the timeout). Deferred jobs (an owner
    past its daily token budget) wait for their day and do not hold it up."""
    counts = app.engine.wait_jobs(timeout=timeout)
    if as_json:
        emit_json(counts)
    else:
        echo("  ".join(f"{state} {n}" for state, n in counts.items()))
    if counts["failed"]:
        raise CliError(
            f"{counts['failed']} job(s) failed: see `hindsight jobs status --state failed`"
        )
    if counts["pending"] or counts["running"]:
        raise CliError("timed out with jobs still to run")


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
        echo(f"{row['name']:<16}{row['summary']} ({every})")


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
        echo(f"{name}: {count}")
