"""The jobs the queue holds, as data: their kinds, and the jobs a write queues.

A job's id is derived from its owner, its memories and the prompt's version, so the
same work is queued once (see :mod:`hindsight.jobs.runner` for how jobs run).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from hindsight.extract import llm as llm_extract
from hindsight.reflect import llm as distil_prompts
from hindsight.store import QueuedJob
from hindsight.write.door import WriteContext

EXTRACT: Final = "extract"
SUMMARIZE: Final = "summarize"
REFLECT: Final = "reflect"
READ_ROLES: Final = frozenset({"user", "tool"})  # whose turns state something to extract


@dataclass(frozen=True, slots=True)
class JobQueue:
    """The queue as a caller sees it: how many jobs are in each state, and the latest."""

    counts: dict[str, int]
    jobs: list[QueuedJob]


def _job(
    context: WriteContext, operation: str, ids: Sequence[str], version: str, **payload: Any
) -> QueuedJob:
    """A job of ``operation`` over ``ids`` for the write's owner, run as its writer; its
    id derives from all of that, so the same work is queued once."""
    (owner,) = context.owners
    key = "\0".join([operation, owner, version, *ids])
    return QueuedJob(
        id="j_" + hashlib.sha256(key.encode()).hexdigest()[:28],
        owner=owner,
        operation=operation,
        payload={
            **payload,
            "memories": list(ids),
            "principal": context.principal.name,
            "trust": context.principal.trust,
            "prompt": version,
        },
        created_at=context.at,
    )


def distil_job(
    context: WriteContext, operation: str, ids: Sequence[str], *, session_id: str | None = None
) -> QueuedJob:
    """The model's summary of a session (``summarize``: its turns' ids) or lessons
    (``reflect``: the ids of the memories looked at)."""
    extra = {} if session_id is None else {"session_id": session_id}
    return _job(context, operation, ids, distil_prompts.PROMPT_VERSION, **extra)


def extraction_jobs(
    context: WriteContext, turns: Sequence[tuple[str, str]], size: int
) -> list[QueuedJob]:
    """The extraction jobs for a write's kept turns (``(episode id, role)``, in order):
    one per ``size`` turns that include a user's or a tool's, run as the writer."""
    jobs = []
    for start in range(0, len(turns), size):
        chunk = turns[start : start + size]
        if not any(role in READ_ROLES for _, role in chunk):
            continue  # nothing anyone stated: only the assistant or the system spoke
        ids = [episode for episode, _ in chunk]
        jobs.append(_job(context, EXTRACT, ids, llm_extract.PROMPT_VERSION))
    return jobs
