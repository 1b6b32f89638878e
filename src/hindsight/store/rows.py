"""A memory as a row of ``memories`` and back, and a filter as SQL: what every query of
the SQL store (:mod:`hindsight.store.sql`) and its vector backends share."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from hindsight.models import Kind, Memory, Provenance, Review, Source, Status
from hindsight.store.db import marks
from hindsight.store.records import Filter

COLUMNS = (
    "id, owner, kind, content, query_hints, confidence, source, session_id, speaker, "
    "observed_at, created_at, updated_at, valid_from, valid_to, superseded_by, "
    "last_accessed_at, access_count, status, embedding_model, attribute, metadata, "
    "principal, input_hash, trust, flags, review, screened, pinned, used_at, expires_at"
)
N_COLUMNS = COLUMNS.count(",") + 1
M_COLUMNS = ", ".join(f"m.{c.strip()}" for c in COLUMNS.split(","))


def ts(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def dt(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


def row_of(m: Memory) -> tuple[Any, ...]:
    return (
        m.id,
        m.owner,
        m.kind.value,
        m.content,
        json.dumps(m.query_hints, ensure_ascii=False),
        m.confidence,
        m.provenance.source.value,
        m.provenance.session_id,
        m.provenance.speaker,
        ts(m.observed_at),
        ts(m.created_at),
        ts(m.updated_at),
        ts(m.valid_from),
        ts(m.valid_to),
        m.superseded_by,
        ts(m.last_accessed_at),
        m.access_count,
        m.status.value,
        m.embedding_model,
        m.attribute,
        json.dumps(m.metadata, ensure_ascii=False),
        m.provenance.principal,
        m.provenance.input_hash,
        m.trust,
        json.dumps(m.flags),
        None if m.review is None else json.dumps(asdict(m.review), ensure_ascii=False),
        int(m.screened),
        int(m.pinned),
        ts(m.used_at),
        ts(m.expires_at),
    )


def chunks(values: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    for i in range(0, len(values), size):
        yield values[i : i + size]


def filter_sql(flt: Filter, *, owner: str | None = "m.owner") -> tuple[str, list[Any]]:
    """The SQL condition (on table alias ``m``) and parameters of a filter.

    ``owner`` is the column that restricts the owners, or None for rows known to be
    theirs (keys from their own indexes): a query that looks rows up by key then offers
    the database no owner index to prefer, which on stale statistics it did (a nested
    loop comparing every row of an owner with every key).
    """
    clauses = [] if owner is None else [f"{owner} IN ({marks(flt.owners)})"]
    params: list[Any] = [] if owner is None else list(flt.owners)
    if flt.kinds:
        clauses.append(f"m.kind IN ({marks(flt.kinds)})")
        params.extend(k.value for k in flt.kinds)
    if flt.statuses:
        clauses.append(f"m.status IN ({marks(flt.statuses)})")
        params.extend(s.value for s in flt.statuses)
    if flt.since is not None:
        clauses.append("m.observed_at >= ?")
        params.append(flt.since.timestamp())
    if flt.until is not None:
        clauses.append("m.observed_at <= ?")
        params.append(flt.until.timestamp())
    if flt.min_confidence is not None:
        clauses.append("m.confidence >= ?")
        params.append(flt.min_confidence)
    if flt.min_trust is not None:
        clauses.append("m.trust >= ?")
        params.append(flt.min_trust)
    if flt.current_only:
        clauses.append("m.valid_to IS NULL")
    if flt.session_id is not None:
        clauses.append("m.session_id = ?")
        params.append(flt.session_id)
    if flt.sources:
        clauses.append(f"m.source IN ({marks(flt.sources)})")
        params.extend(s.value for s in flt.sources)
    if flt.principal is not None:
        clauses.append("m.principal = ?")
        params.append(flt.principal)
    if flt.live_at is not None:
        clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        params.append(flt.live_at.timestamp())
    for name, since in (flt.learnt_since or {}).items():
        clauses.append("(m.owner <> ? OR m.created_at >= ?)")
        params.extend((name, since.timestamp()))
    return " AND ".join(clauses), params


def json_of(text: str) -> Any:
    # most rows hold an empty list or object: recall reads hundreds of rows a query
    return [] if text == "[]" else {} if text == "{}" else json.loads(text)


def memory_of(r: tuple[Any, ...], derived_from: list[str]) -> Memory:
    return Memory(
        id=r[0],
        owner=r[1],
        kind=Kind(r[2]),
        content=r[3],
        query_hints=json_of(r[4]),
        confidence=r[5],
        provenance=Provenance(
            source=Source(r[6]),
            session_id=r[7],
            speaker=r[8],
            derived_from=derived_from,
            principal=r[21],
            input_hash=r[22],
        ),
        observed_at=dt(r[9]) or utcnow(),
        created_at=dt(r[10]) or utcnow(),
        updated_at=dt(r[11]) or utcnow(),
        valid_from=dt(r[12]),
        valid_to=dt(r[13]),
        superseded_by=r[14],
        last_accessed_at=dt(r[15]),
        access_count=r[16],
        status=Status(r[17]),
        embedding_model=r[18],
        attribute=r[19],
        metadata=json_of(r[20]),
        trust=r[23],
        flags=json_of(r[24]),
        review=None if r[25] is None else Review.of(json.loads(r[25])),
        screened=bool(r[26]),
        pinned=bool(r[27]),
        used_at=dt(r[28]),
        expires_at=dt(r[29]),
    )
