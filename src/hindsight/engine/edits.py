"""The engine's edits of what is stored: correct a memory, rate it, pin it, archive and
restore it, forget it, and the maintenance pass. Part of :class:`hindsight.Hindsight`
(its base class), kept in a file of its own so that the facade reads in one sitting."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Protocol

from hindsight import validate
from hindsight.errors import NotFoundError, ValidationError
from hindsight.guard import review
from hindsight.lifecycle import MaintainReport, Maintenance, erase
from hindsight.lifecycle.feedback import marker
from hindsight.models import UNSET, ForgetReceipt, Memory, Source, Status, _Unset
from hindsight.store import Filter
from hindsight.write.door import Operation, WriteContext

if TYPE_CHECKING:
    from hindsight.access import Principal
    from hindsight.config import Settings
    from hindsight.recall.search import Search
    from hindsight.sessions.working import Sessions
    from hindsight.store import Store
    from hindsight.write.door import Door
    from hindsight.write.ingest import Ingest

#: Metadata an extractor reads off a memory's text; an update of the text drops it.
READ_FROM_TEXT: Final = frozenset({"value", "polarity", "detail", "applies_when"})
#: The statuses ``update(status=...)`` moves a memory between; a reviewer moves the rest.
MOVABLE: Final = (Status.ACTIVE, Status.ARCHIVED)


class _Engine(Protocol):
    """What the edits use of the engine."""

    principal: Principal
    settings: Settings
    store: Store
    _door: Door
    _ingest: Ingest
    _search: Search
    _sessions: Sessions

    def _now(self) -> datetime: ...
    def _context(self, operation: Operation, owner: str) -> WriteContext: ...
    def _mark(
        self, operation: Operation, memory_id: str, change: Callable[[Memory], None]
    ) -> Memory: ...
    def get(self, memory_id: str) -> Memory: ...


class Edits:
    """Update, feedback, pin, restore, forget, maintain (see :class:`hindsight.Hindsight`)."""

    def update(
        self: _Engine,
        memory_id: str,
        *,
        content: str | _Unset = UNSET,
        metadata: Mapping[str, Any] | _Unset = UNSET,
        confidence: float | _Unset = UNSET,
        query_hints: Sequence[str] | _Unset = UNSET,
        status: Status | str | _Unset = UNSET,
        expires_at: datetime | str | _Unset | None = UNSET,
    ) -> Memory:
        """Change a memory in place; new content is re-embedded. ``expires_at=None``
        clears an expiry.

        New content is judged as a new write of it by the caller (:mod:`hindsight.guard`):
        the memory's trust falls to the caller's if that is lower, the scan reads it (an
        attack is quarantined: held for review) and it is checked for conflicts, its old
        words included. ``status`` moves a memory between ``active`` and ``archived``
        only (back to active, it is judged afresh, as :meth:`restore` does). A memory held
        for review, or rejected, takes no update (:class:`ConflictError`): a reviewer
        approves or rejects it (:meth:`approve`, :meth:`reject`)."""
        reader = self._ingest.reader
        changes: dict[str, Any] = {}
        if not isinstance(content, _Unset):
            changes["content"] = reader.text(content)
        if not isinstance(metadata, _Unset):
            changes["metadata"] = reader.metadata(metadata)
        if not isinstance(confidence, _Unset):
            changes["confidence"] = validate.confidence(confidence)
        if not isinstance(query_hints, _Unset):
            if isinstance(query_hints, str) or not isinstance(query_hints, Sequence):
                raise ValidationError("query_hints must be a list of strings")
            changes["query_hints"] = [reader.text(h, "query hint") for h in query_hints]
        if not isinstance(status, _Unset):
            changes["status"] = validate.choice(Status, status, field="status")
            if changes["status"] not in MOVABLE:
                raise ValidationError(
                    "status may be set to active or archived only: a reviewer approves or "
                    "rejects a held memory, and forget deletes one"
                )
        context = self._context(Operation.UPDATE, self.get(memory_id).owner)
        if not isinstance(expires_at, _Unset):
            changes["expires_at"] = validate.expiry(expires_at, now=context.at)

        def change(memory: Memory) -> None:
            review.check_editable(memory)  # read under the lock: as it stands now
            if "content" in changes and "metadata" not in changes:
                # what the extractor read off the old text does not describe the new one
                memory.metadata = {
                    k: v for k, v in memory.metadata.items() if k not in READ_FROM_TEXT
                }
            for name, value in changes.items():
                setattr(memory, name, value)

        return self._ingest.update(context, memory_id, change)

    def feedback(self: _Engine, memory_id: str, useful: bool) -> Memory:
        """Say whether a memory was of use: useful raises its confidence toward its trust
        (and that of the caller's key) with diminishing steps and marks it used; not
        useful lowers it (``settings.feedback_step`` of the way, see
        :mod:`hindsight.lifecycle.feedback`). A memory the guard holds, or a reviewer rejected,
        takes none (:class:`ConflictError`). Returns the memory as changed."""
        if not isinstance(useful, bool):
            raise ValidationError("useful must be true or false")
        context = self._context(Operation.FEEDBACK, self.get(memory_id).owner)
        change, detail = marker(
            useful=useful,
            step=self.settings.feedback_step,
            caller_trust=self.principal.trust,
            at=context.at,
        )
        return self._ingest.update(context, memory_id, change, detail=detail)

    def forget(
        self: _Engine,
        memory_id: str | None = None,
        *,
        owner: str | None = None,
        session_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        source: Source | str | None = None,
        principal: str | None = None,
        dry_run: bool = False,
    ) -> ForgetReceipt:
        """Delete one memory, or an owner's memories: all, or those of one session, period
        (of ``observed_at``), source or writer (``principal``, an API key's name), as given.

        With ``memory_id``, ``owner`` (if given) must own it. What was derived only
        from deleted memories goes too, and so does any summary or reflection that
        drew on one of them; the receipt lists it all. A value a forgotten memory had
        superseded is current again (``receipt.restored_ids``): forgetting "I moved to
        Berlin" leaves the owner living in Paris, not nowhere.

        With ``dry_run`` nothing is deleted or logged: the receipt (id ``"preview"``)
        lists what would go.
        """
        if not isinstance(dry_run, bool):
            raise ValidationError("dry_run must be true or false")
        criteria: dict[str, Any]
        if memory_id is not None:
            if session_id is not None or since or until or source or principal:
                raise ValidationError("give a memory id, or an owner with filters, not both")
            memory = self.get(memory_id)
            if owner is not None and memory.owner != validate.owner(owner):
                # the same answer as for an unknown id: do not reveal whose it is
                raise NotFoundError(f"no memory with id {memory_id!r} belongs to {owner}")
            self.principal.check_write(memory.owner)
            owner, ids = memory.owner, [memory.id]
            criteria = {"id": memory_id}
        else:
            if owner is None:
                raise ValidationError("give a memory id or an owner")
            flt = Filter(
                owners=[validate.owner(owner)],
                session_id=validate.session_id(session_id),
                since=validate.timestamp(since, field="since"),
                until=validate.timestamp(until, field="until"),
                statuses=tuple(Status),
                current_only=False,
                sources=None
                if source is None
                else [validate.choice(Source, source, field="source")],
                principal=None
                if principal is None
                else validate.text(principal, field="principal", limit=200),
            )
            self.principal.check_write(flt.owners)
            ids = [m.id for m in self.store.iterate(flt)]
            criteria = {
                "owner": owner,
                "session_id": session_id,
                "since": flt.since,
                "until": flt.until,
                **({"source": flt.sources[0].value} if flt.sources else {}),
                **({"principal": flt.principal} if flt.principal is not None else {}),
            }
            if not dry_run and not (since or until or source or principal):
                self._sessions.clear(owner, session_id)
        return erase(
            self.store,
            ids,
            owner=owner,
            criteria=criteria,
            principal=self.principal.name,
            at=self._now(),
            audit=self.settings.audit,
            dry_run=dry_run,
        )

    def pin(self: _Engine, memory_id: str) -> Memory:
        """Pin a memory: it neither decays nor is archived until unpinned."""
        return self._mark(Operation.PIN, memory_id, lambda m: setattr(m, "pinned", True))

    def unpin(self: _Engine, memory_id: str) -> Memory:
        """Let a pinned memory decay and archive again (counting from its last use)."""
        return self._mark(Operation.UNPIN, memory_id, lambda m: setattr(m, "pinned", False))

    def restore(self: _Engine, memory_id: str) -> Memory:
        """Make an archived memory active again, judged afresh by the guard (the world may
        have changed since it was archived: held, it waits for a reviewer). Restoring is
        use: its decay starts afresh, so the next maintenance pass does not archive it
        again at once."""
        memory = self.get(memory_id)
        if memory.status is not Status.ARCHIVED:
            raise ValidationError(
                f"memory {memory_id!r} is {memory.status.value}, not archived: nothing to restore"
            )

        def restore(m: Memory) -> None:
            if m.status is not Status.ARCHIVED:  # changed since it was read
                raise ValidationError(f"memory {memory_id!r} is no longer archived")
            m.status = Status.ACTIVE
            m.used_at = context.at

        context = self._context(Operation.RESTORE, memory.owner)
        return self._ingest.update(context, memory_id, restore)

    def _mark(
        self: _Engine, operation: Operation, memory_id: str, change: Callable[[Memory], None]
    ) -> Memory:
        context = self._context(operation, self.get(memory_id).owner)
        return self._ingest.update(context, memory_id, change)

    def maintain(self: _Engine, as_of: datetime | str | None = None) -> MaintainReport:
        """Run the maintenance pass over every owner, as at ``as_of`` (default: now):
        forget what expired (``expired``) or passed its owner's retention
        (``forgotten``), each batch with a receipt, and archive what went stale
        (``archived``). Owner by owner, each in its own transaction; running it again at
        the same time does nothing. Needs write access to every owner."""
        self.principal.check_write_all()
        when = validate.timestamp(as_of, field="as_of") if as_of is not None else self._now()
        assert when is not None
        self._search.flush_access(force=True)  # recalls are use: count them first
        return Maintenance.of(self.settings, self.store).run(
            self.store.owners(), now=when, principal=self.principal, door=self._door
        )
