"""Background work kept in the database: what an LLM does, off the write path.

Five kinds of job: ``embed`` (the vectors of memories written while the embedding
endpoint was down, queued by that write: :mod:`hindsight.write.door`; no LLM needed),
``extract`` (memories from retained turns), ``summarize`` (the
model's summary of a session, queued by ``summarize``), ``reflect`` (lessons and
topic digests, queued by ``reflect``; :mod:`hindsight.reflect.llm`) and ``assess`` (the
LLM check of held and untrusted memories, queued by a write that holds or writes one;
:mod:`hindsight.guard.assess`).
With an LLM configured (``llm_provider``) and ``llm_extract`` on, every retain keeps
its turns verbatim and writes what the offline extractor finds at once, as without an
LLM, and queues one ``extract`` job per ``llm_extract_turns`` turns in the same
transaction (:func:`extraction_jobs`): a retain never waits for a model, and the job
lands with the turns or not at all. A job's id is derived from its owner, its turns
and the prompt's version, so the same turns retained again queue nothing new.

:class:`Work` runs the jobs that are due, leased from the store (:mod:`hindsight.store.queue`),
so threads, processes and servers sharing PostgreSQL share the queue; a lease whose
worker died lapses and the job runs again, which writes nothing twice (a memory already
derived from the same turn is folded into the one kept). How a run ends:

- ``done``: the memories written (``result``: created, updated and superseded ids, and
  how many items were dropped or below the confidence threshold); the turns may have
  been forgotten since, and then there is nothing to do;
- ``deferred`` until the next UTC day: the owner spent its token budget
  (:class:`~hindsight.errors.LLMBudgetError`); the attempt does not count;
- ``pending`` again after a backoff (``30 s * 2**attempts``, at most an hour): the
  provider could not be reached or kept failing (429, 5xx, timeouts, after its own
  retries), or the store was busy; ``failed`` once ``llm_job_attempts`` runs have;
- ``failed``: the answer was invalid even after a retry and was dropped, cut off, or
  the server refused the request (a 4xx): the same input would fail again. Nothing of a
  failed job is stored; the turns and the offline memories stay.

:class:`Worker` is the thread every engine with an LLM runs (``llm_worker``), a
server's too; ``hindsight jobs wait`` runs the queue in the foreground.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any, Final

from hindsight.access import Principal
from hindsight.errors import (
    EmbeddingUnavailableError,
    HindsightError,
    LLMBudgetError,
    LLMOutputError,
    LLMRequestError,
    LLMTimeoutError,
    LLMTransportError,
    LLMTruncatedError,
    NotFoundError,
    StoreError,
    ValidationError,
)
from hindsight.extract import llm as llm_extract
from hindsight.guard.assess import OPERATION as ASSESS
from hindsight.guard.assess import Assessor
from hindsight.jobs.kinds import EXTRACT, READ_ROLES, REFLECT, SUMMARIZE
from hindsight.models import Kind, Memory, Turn
from hindsight.reflect import llm as distil_prompts
from hindsight.store import Filter, QueuedJob
from hindsight.write.decide import embedding_text
from hindsight.write.door import EMBED, Operation, WriteContext

if TYPE_CHECKING:
    from hindsight.config import Settings
    from hindsight.embed import Embeddings
    from hindsight.llm.meter import Meter
    from hindsight.sessions.distil import Distil
    from hindsight.store import Store
    from hindsight.write.ingest import Ingest

_log = logging.getLogger("hindsight.jobs")
#: Who holds a job's lease: this process (and its thread, in :class:`Work.run`).
HOLDER: Final = f"{socket.gethostname()}:{os.getpid()}"
_BACKOFF: Final = 30.0
_MAX_BACKOFF: Final = 3_600.0
_KNOWN: Final = 8  # stored memories shown to the model as ones it may update
# the provider unreachable or failing after its own retries, or the store busy: later
_RETRYABLE: Final = (LLMTransportError, LLMTimeoutError, StoreError, EmbeddingUnavailableError)
# while the embedding endpoint is down, an embed job waits this long between tries, its
# tries not counted: it runs until the endpoint is back
_EMBED_RETRY: Final = 30.0
_FINAL: Final = (LLMOutputError, LLMTruncatedError, LLMRequestError)


class Work:
    """Runs an engine's queued jobs (see the module's docstring)."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        ingest: Ingest,
        distil: Distil,
        embedder: Embeddings,
        meter: Meter,
        zone: tzinfo,
        clock: Callable[[], datetime],
    ) -> None:
        self.settings = settings
        self.store = store
        self.ingest = ingest
        self.distil = distil
        self.embedder = embedder
        self.meter = meter
        self.zone = zone
        self.clock = clock
        self.assessor = Assessor(settings, store, ingest.door, embedder, meter, zone=zone)

    def run(
        self,
        *,
        limit: int | None = None,
        owners: Sequence[str] | None = None,
        stop: Callable[[], bool] | None = None,
        holder: str | None = None,
    ) -> int:
        """Run the jobs due now, one at a time, until none is due, ``limit`` have run or
        ``stop()`` says so; returns how many ran."""
        holder = holder or f"{HOLDER}:{threading.get_ident()}"
        lease = timedelta(seconds=self.settings.llm_job_lease_seconds)
        done = 0
        while (limit is None or done < limit) and not (stop is not None and stop()):
            now = self.clock()
            claimed = self.store.claim_jobs(
                holder, now=now, until=now + lease, limit=1, owners=owners
            )
            if not claimed:
                break
            self._run(claimed[0], holder)
            done += 1
        return done

    def wait(
        self,
        *,
        owners: Sequence[str] | None = None,
        timeout: float | None = None,
        poll: float = 0.5,
    ) -> dict[str, int]:
        """Run jobs until none is pending or running (deferred ones wait for their day),
        for at most ``timeout`` seconds; returns the count of each state at the end. A
        job another worker holds is waited for; one backing off, run when its time comes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self.run(owners=owners)
            counts = self.store.job_counts(owners)
            if not counts["pending"] and not counts["running"]:
                return counts
            if deadline is not None and time.monotonic() >= deadline:
                return counts
            time.sleep(
                poll if deadline is None else max(0.0, min(poll, deadline - time.monotonic()))
            )

    # -- one job -------------------------------------------------------------------------
    def _run(self, job: QueuedJob, holder: str) -> None:
        handlers = {
            EXTRACT: self._extract,
            SUMMARIZE: self._summarize,
            REFLECT: self._reflect,
            ASSESS: self._assess,
            EMBED: self._embed,
        }
        try:
            if job.operation not in handlers:
                raise ValidationError(f"no handler for jobs of {job.operation!r}")
            result = handlers[job.operation](job)
        except LLMBudgetError as exc:
            self._finish(
                job,
                holder,
                "deferred",
                error=str(exc),
                not_before=_tomorrow(self.clock()),
                attempts=job.attempts - 1,
            )
        except EmbeddingUnavailableError as exc:
            if job.operation != EMBED and job.attempts >= self.settings.llm_job_attempts:
                self._finish(
                    job, holder, "failed", error=f"gave up after {job.attempts} tries: {exc}"
                )
            else:
                self._finish(
                    job,
                    holder,
                    "pending",
                    error=str(exc),
                    not_before=self.clock() + timedelta(seconds=_EMBED_RETRY),
                    attempts=job.attempts - 1 if job.operation == EMBED else job.attempts,
                )
        except _RETRYABLE as exc:
            if job.attempts >= self.settings.llm_job_attempts:
                self._finish(
                    job, holder, "failed", error=f"gave up after {job.attempts} tries: {exc}"
                )
            else:
                wait = min(_BACKOFF * 2 ** (job.attempts - 1), _MAX_BACKOFF)
                self._finish(
                    job,
                    holder,
                    "pending",
                    error=str(exc),
                    not_before=self.clock() + timedelta(seconds=wait),
                )
        except _FINAL as exc:
            self._finish(job, holder, "failed", error=str(exc))
        except Exception as exc:  # the guard refused the write, or a bug: recorded
            _log.warning("job %s (%s) failed: %s", job.id, job.operation, exc, exc_info=True)
            self._finish(job, holder, "failed", error=f"{type(exc).__name__}: {exc}")
        else:
            self._finish(job, holder, "done", result=result)

    def _finish(self, job: QueuedJob, holder: str, state: str, **how: Any) -> None:
        if not self.store.finish_job(job.id, holder, state=state, now=self.clock(), **how):
            _log.info("job %s: its lease lapsed and another worker took it over", job.id)

    def _inputs(self, job: QueuedJob) -> list[Memory]:
        """The job's memories that still exist, in the order it names them."""
        ids = [str(i) for i in job.payload.get("memories", [])]
        found = {m.id: m for m in self.store.get(ids)}
        return [found[i] for i in ids if i in found and found[i].owner == job.owner]

    def _context(self, job: QueuedJob, operation: Operation) -> WriteContext:
        """The job's write, as the writer whose write queued it (its name and trust)."""
        principal = Principal(
            name=str(job.payload.get("principal") or "local"),
            read=(job.owner,),
            write=(job.owner,),
            trust=float(job.payload.get("trust", 1.0)),
        )
        return WriteContext(principal, operation, (job.owner,), self.clock())

    def _generator(self, operation: str) -> str:
        return f"llm:{self.meter.model_for(operation) or self.meter.provider.name}"

    def _summarize(self, job: QueuedJob) -> dict[str, Any]:
        sid = str(job.payload.get("session_id"))
        try:
            episodes, offline = self.distil.session(job.owner, sid)
        except NotFoundError:
            return {"note": "its turns were forgotten"}
        turns = {str(i) for i in job.payload.get("memories", [])}
        flt = Filter(owners=[job.owner], kinds=[Kind.SUMMARY], session_id=sid)
        stored = list(self.store.iterate(flt))
        if set(offline.evidence) != turns or any(
            set(m.provenance.derived_from) != turns for m in stored
        ):
            return {"note": "the session changed since: a later job summarizes it"}
        messages = distil_prompts.summary_messages(episodes, zone=self.zone)
        answer = self.meter.structured(
            job.owner,
            SUMMARIZE,
            messages,
            distil_prompts.SUMMARY_SCHEMA,
            name="summary",
            leniency=distil_prompts.SUMMARY_LENIENCY,
        )
        draft = distil_prompts.summary_draft(
            offline, answer.value, generator=self._generator(SUMMARIZE)
        )
        changes = self.ingest.drafts(
            self._context(job, Operation.SUMMARIZE), [draft], self.distil.summaries(job.owner, sid)
        )
        return {"updated": [m.id for m in changes.changed]}

    def _reflect(self, job: QueuedJob) -> dict[str, Any]:
        pool = self._inputs(job)
        if not pool:
            return {"note": "its memories were forgotten"}
        flt = Filter(owners=[job.owner], kinds=[Kind.REFLECTION, Kind.SUMMARY])
        known = [
            m
            for m in self.store.iterate(flt)
            if "llm" in (m.metadata.get("lesson"), m.metadata.get("digest"))
        ]
        prompt = distil_prompts.lesson_messages(pool, known, zone=self.zone)
        answer = self.meter.structured(
            job.owner,
            REFLECT,
            prompt.messages,
            distil_prompts.LESSON_SCHEMA,
            name="lessons",
            leniency=distil_prompts.LESSON_LENIENCY,
        )
        drafts, left = distil_prompts.lesson_drafts(
            answer.value,
            prompt,
            min_importance=self.settings.llm_reflect_importance,
            generator=self._generator(REFLECT),
        )
        changes = self.ingest.drafts(
            self._context(job, Operation.REFLECT), drafts, self.distil.lessons(job.owner)
        )
        return {"changed": [m.id for m in changes.changed], "left_out": left}

    def _embed(self, job: QueuedJob) -> dict[str, Any]:
        """Make the vectors of memories written while the embedding endpoint was down."""
        memories = self._inputs(job)
        if not memories:
            return {"embedded": 0, "note": "its memories were forgotten"}
        vectors = self.embedder.encode_documents([embedding_text(m) for m in memories])
        for memory in memories:
            memory.embedding_model = self.embedder.model_id
        self.store.replace_vectors(list(zip(memories, vectors, strict=True)))
        return {"embedded": len(memories)}

    def _assess(self, job: QueuedJob) -> dict[str, Any]:
        ids = [str(i) for i in job.payload.get("memories", [])]
        return self.assessor.run(self._context(job, Operation.ASSESS), ids).as_result()

    def _extract(self, job: QueuedJob) -> dict[str, Any]:
        episodes = self._inputs(job)
        if not episodes:
            return {"created": [], "note": "its turns were forgotten"}
        turns = [_turn(e) for e in episodes]
        prompt = llm_extract.messages(
            turns, self._known(job.owner, episodes), subject="User", zone=self.zone
        )
        answer = self.meter.structured(
            job.owner,
            "extract",
            prompt.messages,
            llm_extract.SCHEMA,
            name="memories",
            leniency=llm_extract.LENIENCY,
        )
        reading = llm_extract.read_answer(
            answer.value, turns, prompt, min_confidence=self.settings.llm_min_confidence
        )
        written = self.ingest.derived(
            self._context(job, Operation.EXTRACT),
            episodes,
            reading.kept,
            extractor=self._generator(EXTRACT),
        )
        return {
            "created": written.created,
            "updated": written.updated,
            "superseded": [list(pair) for pair in written.superseded],
            "dropped": reading.dropped + answer.dropped,
            "below_confidence": reading.unsure,
        }

    def _known(self, owner: str, episodes: Sequence[Memory]) -> list[Memory]:
        """What the model is shown as memories the turns may update: what was already
        derived from these turns, then the owner's current facts and preferences
        nearest to what the turns say."""
        derived = [
            m
            for m in self.store.children([e.id for e in episodes])
            if m.kind is not Kind.EPISODE and m.valid_to is None
        ]
        said = " ".join(e.content for e in episodes if e.metadata.get("role") in READ_ROLES)
        near: list[Memory] = []
        if said.strip():
            vector = self.embedder.encode_query(said[:4_000])
            flt = Filter(owners=[owner], kinds=[Kind.FACT, Kind.PREFERENCE])
            hits = self.store.vector_search(flt, vector, _KNOWN)
            near = self.store.get([mid for mid, _ in hits])
        shown = {m.id: m for m in [*derived, *near]}
        return list(shown.values())[: 2 * _KNOWN]


def _turn(episode: Memory) -> Turn:
    role = episode.metadata.get("role")
    return Turn(
        role=role if isinstance(role, str) else "user",
        content=episode.content,
        speaker=episode.provenance.speaker,
        observed_at=episode.observed_at,
        tool_name=episode.metadata.get("tool_name")
        if isinstance(episode.metadata.get("tool_name"), str)
        else None,
    )


def _tomorrow(now: datetime) -> datetime:
    midnight = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight + timedelta(days=1)


class Worker:
    """A thread that runs the queue while the engine is open: it looks for due jobs
    every ``idle`` seconds, at once when :meth:`wake` is called (after a retain)."""

    def __init__(self, work: Work, *, idle: float = 2.0) -> None:
        self.work = work
        self.idle = idle
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="hindsight-work", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def close(self, timeout: float = 10.0) -> None:
        """Stop after the job in hand (waiting at most ``timeout`` seconds for it; a job
        still running then is taken over by another worker once its lease lapses)."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.work.run(stop=self._stop.is_set)
            except HindsightError as exc:  # a store that fails now may not later
                _log.warning("job queue: %s", exc)
            self._wake.wait(self.idle)
            self._wake.clear()
