"""Background work: the jobs the queue holds (:mod:`~hindsight.jobs.kinds`), the runner
that works them off (:mod:`~hindsight.jobs.runner`), and the maintenance a person or a
server's scheduler runs (:mod:`~hindsight.jobs.scheduled`, whose names are here too)."""

from hindsight.jobs.scheduled import (
    JOBS,
    Job,
    check_vectors,
    job,
    optimize_vectors,
    prune_requests,
    reembed,
    schedule,
)

__all__ = [
    "JOBS",
    "Job",
    "check_vectors",
    "job",
    "optimize_vectors",
    "prune_requests",
    "reembed",
    "schedule",
]
