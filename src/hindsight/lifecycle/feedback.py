"""Feedback: use, not retrieval, reinforces a memory.

A recalled memory is not a used one, so recall changes no confidence. A caller that
used a memory says so (``feedback(memory_id, useful=True)``), or says it was no use:

- useful raises confidence toward its cap with diminishing steps,
  ``c += (cap - c) * step``, and marks the memory used (``used_at``), and
- not useful lowers it, ``c -= c * step``; it is not use, so ``used_at`` stays,

with ``step`` = ``Settings.feedback_step`` (0.2: three useful marks take 0.5 to
0.744). The cap is the memory's trust, as the guard's rule has it, and no more than
the trust of the caller's key: a key believed 0.5 cannot make a memory more believed
than that. A memory the guard holds (pending review or quarantined) or a reviewer
rejected takes no feedback (a :class:`~hindsight.errors.ConflictError`): only a
reviewer's decision moves it, so feedback cannot launder what the guard held.
Each mark is one write through the door: audited (who, which, useful or not, the
confidence before and after) and all or nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from hindsight.errors import ConflictError
from hindsight.models import HELD, Memory, Status

REFUSED = (*HELD, Status.REJECTED)
"""Statuses that take no feedback: a reviewer decides on them."""


def moved(confidence: float, *, cap: float, step: float, useful: bool) -> float:
    """The confidence after one mark: toward ``cap`` (never past it) or toward 0."""
    if useful:
        return max(confidence, confidence + (cap - confidence) * step)
    return confidence - confidence * step


class Mark:
    """One feedback mark, as a changer of the stored memory (:meth:`Ingest.update`) and
    the audit detail it leaves."""

    def __init__(self, *, useful: bool, step: float, caller_trust: float, at: datetime) -> None:
        self.useful = useful
        self.step = step
        self.caller_trust = caller_trust
        self.at = at
        self.before: float | None = None
        self.memory: Memory | None = None

    def __call__(self, memory: Memory) -> None:
        if memory.status in REFUSED:
            raise ConflictError(
                f"memory {memory.id!r} is {memory.status.value}: a reviewer decides on it "
                "(approve or reject), feedback does not"
            )
        self.before, self.memory = memory.confidence, memory
        cap = min(memory.trust, self.caller_trust)
        memory.confidence = moved(memory.confidence, cap=cap, step=self.step, useful=self.useful)
        if self.useful:
            memory.used_at = self.at

    def detail(self) -> dict[str, Any]:
        """What the audit entry records: useful or not, and confidence before and after."""
        after = None if self.memory is None else round(self.memory.confidence, 6)
        before = None if self.before is None else round(self.before, 6)
        return {"useful": self.useful, "confidence": [before, after]}


def marker(
    *, useful: bool, step: float, caller_trust: float, at: datetime
) -> tuple[Callable[[Memory], None], Callable[[], dict[str, Any]]]:
    """The changer and the audit detail of one mark."""
    mark = Mark(useful=useful, step=step, caller_trust=caller_trust, at=at)
    return mark, mark.detail
