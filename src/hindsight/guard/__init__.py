"""The memory guard: provenance and trust, a safety scan, conflicts held for review.

At write time the :class:`~hindsight.guard.checkpoint.Guard` checkpoint gives every
memory its trust, redacts secrets, quarantines what reads as an attack and holds
for review what contradicts a more trusted memory; at recall time
:func:`~hindsight.guard.screen.screen` withholds untrusted results that read as
attacks or disagree with trusted ones among the results. ``Settings.guard`` turns
both off (provenance and trust are still recorded).
"""

from __future__ import annotations

from hindsight.guard.checkpoint import DEFAULT_TRUST, Guard, Policy
from hindsight.guard.conflict import Contradiction, contradiction
from hindsight.guard.scan import Flag, redact, scan
from hindsight.guard.screen import screen

__all__ = [
    "DEFAULT_TRUST",
    "Contradiction",
    "Flag",
    "Guard",
    "Policy",
    "contradiction",
    "redact",
    "scan",
    "screen",
]
