"""The guard at recall time: what an untrusted result must pass to be returned.

Write-time checks see a memory against what was stored then; a recall sees it beside
what answers the same question now, and catches what the write-time checks did not
read: memories written before the guard or with it off (``Memory.screened`` is
false), and those kept flagged rather than quarantined. Among a recall's best
candidates, such an untrusted result is withheld when

- it reads as an attack (its stored flags, or the scan run now), or
- it contradicts a more trusted candidate (:mod:`hindsight.guard.conflict`): the query
  put both on one subject, and the trusted consensus wins (A-MemGuard's idea, with a
  lexical judge). Summaries and reflections, which quote what they are made of, are
  not held to this.

Trusted results always pass, and so do those a reviewer approved. The results keep
their order.
"""

from __future__ import annotations

from collections.abc import Sequence

from hindsight.guard.checkpoint import Policy, held_to
from hindsight.guard.conflict import contradiction
from hindsight.guard.scan import ATTACKS, scan
from hindsight.models import Kind, RecallResult

# What hindsight wrote about a session or a lesson quotes its sources, it does not claim
# what they said; it is made from active memories only, so nothing held reaches it.
_REPORTS = (Kind.SUMMARY, Kind.REFLECTION)


def screen(results: Sequence[RecallResult], policy: Policy, *, window: int) -> list[RecallResult]:
    """``results`` without the untrusted ones among the first ``window`` that read as
    attacks or contradict a more trusted one among the first ``2 * window``."""
    trusted = [
        r.memory
        for r in results[: 2 * window]
        if policy.trusted(r.memory) and not r.memory.content.rstrip().endswith("?")
    ]
    kept = []
    for i, result in enumerate(results):
        m = result.memory
        approved = m.review is not None and m.review.decision == "approved"
        if ATTACKS & set(m.flags) and not (policy.trusted(m) or approved):
            continue  # kept flagged by policy: never handed to an agent as it is
        if i < window and not (policy.trusted(m) or approved or m.screened):
            if any(f.flag in ATTACKS for f in scan(m.content)):
                continue
            if m.kind not in _REPORTS and any(
                t.trust > m.trust and held_to(m, t) and contradiction(m.content, t.content)
                for t in trusted
            ):
                continue
        kept.append(result)
    return kept
