"""The engine's writes: retain (a message, a conversation, or one memory as given) and
import. Part of :class:`hindsight.Hindsight` (its base class), kept in a file of its own
so that the facade reads in one sitting; the work is :mod:`hindsight.write.ingest`'s."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from hindsight import validate, views
from hindsight.errors import ValidationError
from hindsight.models import Kind, Provenance, RetainResult, Source, Turn
from hindsight.write.door import Once, Operation, WriteContext
from hindsight.write.ingest import input_hash

if TYPE_CHECKING:
    from hindsight.access import Principal
    from hindsight.write.ingest import Ingest


class _Engine(Protocol):
    """What the writes use of the engine."""

    principal: Principal
    _ingest: Ingest

    def _now(self) -> datetime: ...
    def _context(self, operation: Operation, owner: str) -> WriteContext: ...


class Writes:
    """Retain and import (see :class:`hindsight.Hindsight`)."""

    def retain(
        self: _Engine,
        owner: str,
        content: str | None = None,
        *,
        messages: Sequence[Turn | Mapping[str, Any]] | None = None,
        kind: Kind | str | None = None,
        session_id: str | None = None,
        source: Source | str = Source.USER,
        observed_at: datetime | str | None = None,
        confidence: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        request_id: str | None = None,
        expires_at: datetime | str | None = None,
    ) -> RetainResult:
        """Remember a message, a conversation, or (with ``kind``) one memory as given.

        Without ``kind``, every turn is kept verbatim as an ``episode`` and the
        extractor distils preferences, facts, corrections and tool results from it.
        With ``kind``, ``content`` is stored as that kind directly.

        With ``request_id`` (the caller's idempotency key, kept a day) the write is made
        once: the same call again returns the first one's result and stores nothing;
        the key sent with other arguments is a :class:`ConflictError`.

        With ``expires_at`` (a time with its zone, in the future) every memory the call
        creates is hidden from reads once it has passed, and forgotten, with a receipt,
        by the next maintenance pass.
        """
        asked = [owner, content, messages, kind, session_id, source, observed_at, confidence]
        if expires_at is not None:
            asked.append(expires_at)
        once = Once.of(request_id, [*asked, metadata], lambda plan: views.retained(plan.result))
        owner = validate.owner(owner)
        session_id = validate.session_id(session_id)
        src = validate.choice(Source, source, field="source")
        when = validate.timestamp(observed_at, field="observed_at")
        reader = self._ingest.reader
        meta = reader.metadata(metadata)
        context = self._context(Operation.RETAIN, owner)
        expires = validate.expiry(expires_at, now=context.at)
        if kind is not None:
            if messages is not None:
                raise ValidationError("give either messages or kind with content, not both")
            text = reader.text(content)
            memory = self._ingest.new_memory(
                owner,
                validate.choice(Kind, kind, field="kind"),
                text,
                confidence=validate.confidence(1.0 if confidence is None else confidence),
                provenance=Provenance(
                    source=src, session_id=session_id, input_hash=input_hash(text)
                ),
                observed_at=when or context.at,
                now=context.at,
                metadata=meta,
            )
            memory.expires_at = expires
            return self._ingest.memories(context, [memory], once=once)
        turns = reader.turns(content, messages, src, when or context.at)
        return self._ingest.turns(
            context,
            owner,
            turns,
            session_id=session_id,
            metadata=meta,
            once=once,
            expires_at=expires,
        )

    def import_records(
        self: _Engine, records: Iterable[Mapping[str, Any]], *, request_id: str | None = None
    ) -> dict[str, int]:
        """Load exported dicts, re-embedding them; ids the owner already holds are skipped.

        Every record is checked (and the caller's write access to its owner) before
        anything is written, so a bad line imports nothing. A record whose id another
        owner holds gets a fresh id, as an unknown one would be imported. ``request_id`` makes the
        import once, as for :meth:`retain`.
        """
        context = WriteContext(self.principal, Operation.IMPORT, (), self._now())
        return self._ingest.records(context, records, request_id=request_id)
