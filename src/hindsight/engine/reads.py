"""The engine's reads: recall, what lies ahead, one memory, a page of them, an owner's
stats, a memory's versions, an export, and warming what recall reads. Part of
:class:`hindsight.Hindsight` (its base class), kept in a file of its own so that the
facade reads in one sitting."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol, Unpack, overload

from hindsight import foresight, validate
from hindsight.errors import NotFoundError, StoreError, ValidationError
from hindsight.lifecycle.history import History, versions
from hindsight.models import MAX_K, Kind, Memory, RecallResult, Status
from hindsight.recall.request import Owners, RecallOptions, RecallRequest, request_of
from hindsight.store import AuditEntry, Filter, StoreStats
from hindsight.store.replicas import replica_reads
from hindsight.write.transfer import memory_to_dict

if TYPE_CHECKING:
    from datetime import tzinfo

    from hindsight.access import Principal
    from hindsight.config import Settings
    from hindsight.llm.meter import Meter
    from hindsight.recall.cache import RecallCache
    from hindsight.recall.expand import Expander
    from hindsight.store import Store, WorkingMemory

_log = logging.getLogger("hindsight.engine")


class _Engine(Protocol):
    """What the reads use of the engine."""

    principal: Principal
    settings: Settings
    store: Store
    working: WorkingMemory
    llm: Meter
    _zone: tzinfo
    _recall: RecallCache
    _expander: Expander

    def _now(self) -> datetime: ...
    def _readable(self, owner: object) -> str: ...
    def _live(self, flt: Filter, now: datetime) -> Filter: ...
    def _is_live(self, memory: Memory, now: datetime) -> bool: ...
    def _audit_read(
        self, action: str, read: Mapping[str, tuple[str, ...]], detail: dict[str, Any]
    ) -> None: ...
    def get(self, memory_id: str) -> Memory: ...


class Reads:
    """Recall and the other reads (see :class:`hindsight.Hindsight`)."""

    @overload
    def recall(self: _Engine, owners: RecallRequest, /) -> list[RecallResult]: ...
    @overload
    def recall(
        self: _Engine, owners: Owners, query: str, **options: Unpack[RecallOptions]
    ) -> list[RecallResult]: ...
    def recall(
        self: _Engine,
        owners: Owners | RecallRequest,
        query: str | None = None,
        **options: Unpack[RecallOptions],
    ) -> list[RecallResult]:
        """The memories that best answer ``query``, each with why it came back; or those
        of one :class:`~hindsight.recall.request.RecallRequest` given alone.

        ``owners`` may weigh namespaces, e.g. ``{"user:alice": 1.0, "shared:team": 0.5}``;
        searching several needs read access to each. The options (``k``, ``kinds``,
        ``since``, ``until``, ``min_confidence``, ``token_budget``, ``include_history``,
        ``timezone``, ``expand``) are the request's fields. ``timezone`` (an IANA name
        such as "America/New_York", or an offset such as "-05:00") is the asker's: the
        days that "yesterday" or "on 8 May" in the query mean; by default
        ``settings.timezone``. ``min_confidence`` bounds the effective confidence: the
        stored one decayed for the weeks the memory went unused
        (:mod:`hindsight.lifecycle`), as each result's explanation shows it. Archived,
        expired and retired memories are never returned. The same recall again, of owners
        unchanged since, may be answered from the recall cache
        (:mod:`hindsight.recall.cache`), audited and counted all the same. With
        ``expand`` (by default ``settings.llm_expand``) and an LLM configured, the model
        splits the query into sub-queries searched beside it
        (:mod:`hindsight.recall.expand`).
        """
        request = request_of(owners, query, options)
        plan = request.plan(max_chars=self.settings.max_content_chars, zone=self._zone)
        self.principal.check_read(plan.weights)
        expand = self.settings.llm_expand if plan.expand is None else plan.expand
        if expand and self.llm.configured:
            extra = self._expander.expand(next(iter(plan.weights)), plan.query)
            plan = dataclasses.replace(plan, extra=extra)
        now = self._now()
        self._live(plan.filter, now)
        with replica_reads():  # on a read replica, where one is set and has caught up
            results = self._recall.recall(self.principal, plan, now)
        if self.settings.audit_recalls:
            # who recalled what: the query as a hash, the log keeps no memory text
            digest = hashlib.sha256(plan.query.encode("utf-8")).hexdigest()[:16]
            read = {
                o: tuple(r.memory.id for r in results if r.memory.owner == o) for o in plan.weights
            }
            self._audit_read("recall", read, {"query_sha256": digest, "k": plan.k})
        return results

    def _audit_read(
        self: _Engine, action: str, read: Mapping[str, tuple[str, ...]], detail: dict[str, Any]
    ) -> None:
        """Who read which ids of each owner: one entry per owner. Bookkeeping: a failure
        to write it is logged, and the read it records still answers."""
        at = self._now()
        entries = [
            AuditEntry(
                at=at,
                principal=self.principal.name,
                owner=owner,
                action=action,
                memory_ids=ids,
                detail=detail,
            )
            for owner, ids in read.items()
        ]
        try:
            self.store.append_audit(entries)
        except StoreError as exc:
            _log.warning("%s not audited: %s", action, exc)

    def foresee(
        self: _Engine,
        owner: str,
        now: datetime | str | None = None,
        days: int = foresight.DEFAULT_DAYS,
    ) -> list[foresight.Item]:
        """What lies ahead for ``owner``: events, commitments, routines and goals they
        spoke of that are open and due from ``now``'s day (default: today) to ``days``
        days later, in ``settings.timezone``, and the open ones with no date; soonest,
        then surest, first. Read from their turns as of ``now``: a later move,
        cancellation or completion is honoured (:mod:`hindsight.foresight`)."""
        owner = self._readable(owner)
        limit = foresight.MAX_DAYS
        if isinstance(days, bool) or not isinstance(days, int) or not 0 <= days <= limit:
            raise ValidationError(f"days must be an integer from 0 to {foresight.MAX_DAYS}")
        when = validate.timestamp(now, field="now") or self._now()
        flt = Filter(owners=[owner], kinds=foresight.READ, until=when + timedelta(microseconds=1))
        self._live(flt, self._now())
        said = foresight.statements(self.store.iterate(flt))
        items = foresight.foresee(said, now=when, days=days, zone=self._zone)
        if self.settings.audit_recalls:  # a read of the owner's words, as a recall is
            ids = tuple(dict.fromkeys(mid for item in items for mid in item.memory_ids))
            self._audit_read("foresee", {owner: ids}, {"days": days, "now": when.isoformat()})
        return items

    def get(self: _Engine, memory_id: str) -> Memory:
        """One memory by id (an id of an owner the caller may not read is unknown)."""
        found = self.store.get([memory_id]) if isinstance(memory_id, str) else []
        if (
            not found
            or not self.principal.can_read(found[0].owner)
            or not self._is_live(found[0], self._now())
        ):
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return found[0]

    def list_memories(
        self: _Engine,
        owner: str,
        *,
        kinds: Sequence[Kind | str] | None = None,
        session_id: str | None = None,
        include_history: bool = False,
        status: Status | str = Status.ACTIVE,
        limit: int = 50,
        offset: int = 0,
    ) -> list[Memory]:
        """An owner's memories, newest observed first, a page at a time."""
        flt = Filter(
            owners=[validate.owner(owner)],
            kinds=[validate.choice(Kind, x, field="kind") for x in kinds] if kinds else None,
            session_id=validate.session_id(session_id),
            statuses=(validate.choice(Status, status, field="status"),),
            current_only=not include_history,
        )
        limit = validate.positive(limit, field="limit", maximum=MAX_K)
        self.principal.check_read(flt.owners)
        self._live(flt, self._now())
        return self.store.list_memories(flt, limit=limit, offset=validate.offset(offset))

    def owners(self: _Engine) -> list[str]:
        """The owners that have memories and that the caller may read, sorted."""
        return [o for o in self.store.owners() if self.principal.can_read(o)]

    def stats(self: _Engine, owner: str | None = None) -> StoreStats:
        """Counts by kind and status, the store's size and model: of one owner, or (for a
        caller that reads every owner) of all."""
        if owner is None:
            self.principal.check_read_all()
        else:
            owner = self._readable(owner)
        stats = self.store.stats(owner)
        stats.working_turns = self.working.wm_count(owner)
        return stats

    def history(self: _Engine, memory_id: str) -> History:
        """The versions of a memory, oldest first: what it superseded and what superseded
        it (``superseded_by``), each with its validity, status and who changed what and
        when (from the audit log and the row). Needs read access to its owner."""
        return versions(self.store, self.get(memory_id))

    def export(
        self: _Engine, owner: str, *, include_history: bool = True
    ) -> Iterator[dict[str, Any]]:
        """Every memory of ``owner`` as a JSON-ready dict, oldest first (no vectors)."""
        flt = Filter(
            owners=[self._readable(owner)], statuses=tuple(Status), current_only=not include_history
        )
        return (memory_to_dict(memory) for memory in self.store.iterate(flt))

    def warm(
        self: _Engine,
        owners: Sequence[str] | None = None,
        *,
        limit: int | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> int:
        """Load (or build) what recall reads of ``owners`` (by default the ``limit`` that
        changed last; every owner without a limit), so that their first recalls cost
        what later ones do: a server does it as it starts. ``stop`` is asked before each
        owner (true: stop there). Returns how many owners it warmed."""
        if owners is None:
            self.principal.check_read_all()
            names = self.store.recent_owners(limit) if limit is not None else self.store.owners()
        else:
            names = [self._readable(owner) for owner in owners]
        done = 0
        for name in names:
            if stop is not None and stop():
                break
            self.store.warm(name)
            done += 1
        return done
