"""``hindsight review`` and ``hindsight audit``: what the guard held, decisions, the audit log."""

from __future__ import annotations

import click

from hindsight import views
from hindsight.cli.base import (
    App,
    cell,
    echo,
    emit_json,
    iso,
    json_option,
    receipt_json,
    short,
)
from hindsight.cli.group import cli
from hindsight.guard.review import ReviewItem
from hindsight.models import Assessment, ForgetReceipt, Memory
from hindsight.store import AuditEntry


# -- the review queue ---------------------------------------------------------------------------
@cli.group("review")
def review_group() -> None:
    """The review queue: memories the guard held (quarantined or pending review).

    A held memory is never recalled until a person approves it; 'review list'
    shows each beside the trusted memories it conflicts with.
    """


def _origin(m: Memory) -> str:
    return f"[{m.provenance.source.value}, trust {m.trust:.2f}]"


def _print_item(item: ReviewItem) -> None:
    m = item.memory
    reason = cell(m.review.reason) if m.review else "-"
    flags = f"  flags: {cell(', '.join(m.flags))}" if m.flags else ""
    echo(f"{m.id}  {m.status.value:<14} {m.owner}  {reason}{flags}")
    echo(f"    held        {_origin(m)} {short(m.content, 90)}")
    for c in item.conflicts:
        echo(f"    conflicts   {_origin(c)} {short(c.content, 90)}  ({c.id})")
    if m.review is not None and m.review.assessment is not None:
        echo(f"    llm check   {_assessment(m.review.assessment)}")


def _assessment(a: Assessment) -> str:
    against = f"  (against {' '.join(a.against)})" if a.against else ""
    return f"{a.verdict}: {short(a.reason, 120)}{against}"


@review_group.command("list")
@click.option("--owner", metavar="OWNER", help="Only this owner's (default: every owner).")
@click.option("--limit", type=int, default=50, show_default=True, help="Page size.")
@click.option("--offset", type=int, default=0, show_default=True, help="Skip this many.")
@json_option
@click.pass_obj
def review_list(app: App, owner: str | None, limit: int, offset: int, as_json: bool) -> None:
    """List held memories, newest first, each with the reason and what it conflicts with."""
    items = app.engine.review_queue(owner, limit=limit, offset=offset)
    if as_json:
        emit_json({"items": [views.review_item(i) for i in items]})
        return
    if not items:
        echo("nothing held for review")
    for item in items:
        _print_item(item)


@review_group.command("assess")
@click.option("--owner", metavar="OWNER", required=True, help="Whose memories to check.")
@json_option
@click.pass_obj
def review_assess(app: App, owner: str, as_json: bool) -> None:
    """Run the LLM check now: the model judges held and recent low-trust memories.

    Each is judged against the owner's trusted memories on the same subject, and the
    verdict (consistent, contradicts, suspicious or unsure) is filed in the review
    queue with its reason. A low-trust memory judged 'contradicts' or 'suspicious' is
    held for review; nothing is ever approved or released. Needs an LLM configured;
    with one, writes queue this check by themselves.
    """
    done = app.engine.assess(owner)
    if as_json:
        emit_json(
            {
                "judged": [views.memory(m) for m in done.judged],
                "held": done.held,
                "ignored": done.ignored,
                "left": done.left,
            }
        )
        return
    for m in done.judged:
        if m.review is not None and m.review.assessment is not None:
            echo(f"{m.id}  {m.status.value:<14} {_assessment(m.review.assessment)}")
    left = f"; {done.left} left for a later run" if done.left else ""
    echo(f"judged {len(done.judged)}, held {len(done.held)} for review{left}")


def _print_decided(verb: str, memories: list[Memory]) -> None:
    first, *rest = memories
    with_it = f" (and {len(rest)} held with it: {' '.join(m.id for m in rest)})" if rest else ""
    echo(f"{verb} {first.id}{with_it}; it is now {first.status.value}")


@review_group.command("approve")
@json_option
@click.argument("memory_id", metavar="ID")
@click.pass_obj
def review_approve(app: App, as_json: bool, memory_id: str) -> None:
    """Approve a held memory: it becomes active as if it had passed the guard.

    What was held with it (derived from the same turn) is approved too.
    """
    decided = app.engine.approve(memory_id)
    if as_json:
        emit_json({"memories": [views.memory(m) for m in decided]})
    else:
        _print_decided("approved", decided)


@review_group.command("reject")
@click.option(
    "--forget/--keep",
    "forget",
    default=None,
    help="Delete it (with a receipt), or keep it as rejected history "
    "(default: the on_reject setting).",
)
@json_option
@click.argument("memory_id", metavar="ID")
@click.pass_obj
def review_reject(app: App, forget: bool | None, as_json: bool, memory_id: str) -> None:
    """Reject a held memory: it is never recalled, kept as history or forgotten.

    What was held with it (derived from the same turn) is rejected too.
    """
    result = app.engine.reject(memory_id, forget=forget)
    if isinstance(result, ForgetReceipt):
        if as_json:
            emit_json(receipt_json(result))
        else:
            echo(f"rejected and forgot {result.count} memories; receipt {result.id}")
    elif as_json:
        emit_json({"memories": [views.memory(m) for m in result]})
    else:
        _print_decided("rejected", result)


# -- the audit log ------------------------------------------------------------------------------
@cli.group("audit")
def audit_group() -> None:
    """The audit log: who wrote, forgot, decided or recalled what, hash-chained.

    Reading it needs an audit key (the local user has one).
    """


def _print_entry(e: AuditEntry) -> None:
    more = len(e.memory_ids) - 3
    ids = " ".join(e.memory_ids[:3]) + (f" +{more}" if more > 0 else "")
    echo(
        f"{e.seq:>6}  {iso(e.at)}  {cell(e.principal):<12} {cell(e.action):<8} "
        f"{cell(e.owner or '-')}  {cell(ids or '-')}"
    )


@audit_group.command("list")
@click.option("--owner", metavar="OWNER", help="Only this owner's entries (default: every owner).")
@click.option("--principal", metavar="NAME", help="Only what this key (or 'local') did.")
@click.option("--action", metavar="ACTION", help="Only this action, e.g. retain, forget, review.")
@click.option("--since", metavar="ISO", help="Only entries at or after this time.")
@click.option("--until", metavar="ISO", help="Only entries before this time.")
@click.option("--limit", type=int, default=100, show_default=True, help="How many at most.")
@click.option("--before", "before_seq", type=int, metavar="SEQ", help="Page back: only before SEQ.")
@json_option
@click.pass_obj
def audit_list(
    app: App,
    owner: str | None,
    principal: str | None,
    action: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    before_seq: int | None,
    as_json: bool,
) -> None:
    """List audit entries, newest first."""
    entries = app.engine.audit(
        owner,
        principal=principal,
        action=action,
        since=since,
        until=until,
        limit=limit,
        before_seq=before_seq,
    )
    if as_json:
        emit_json({"entries": [views.audit_entry(e) for e in entries]})
        return
    if not entries:
        echo("no audit entries")
    for e in entries:
        _print_entry(e)


@audit_group.command("verify")
@json_option
@click.pass_obj
def audit_verify(app: App, as_json: bool) -> None:
    """Check the audit log's hash chain; exits 1 if an entry was edited or removed."""
    result = app.engine.verify_audit()
    if as_json:
        emit_json(result)
    elif result["intact"]:
        echo(f"intact: {result['entries']} entries checked")
    else:
        echo(f"broken at entry {result['broken_at']} ({result['entries']} entries checked)")
    if not result["intact"]:
        raise click.exceptions.Exit(1)
