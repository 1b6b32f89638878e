"""Export and import: a memory as a JSON-ready dict, and back (vectors are not exported)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from datetime import datetime
from typing import Any

from hindsight import validate
from hindsight.errors import ValidationError
from hindsight.models import (
    VERDICTS,
    Assessment,
    Kind,
    Memory,
    Provenance,
    Review,
    Source,
    Status,
)

FORMAT_VERSION = 1
_TIMES = (
    "observed_at",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_to",
    "last_accessed_at",
    "used_at",
    "expires_at",
)


def memory_to_dict(m: Memory) -> dict[str, Any]:
    def iso(value: datetime | None) -> str | None:
        return None if value is None else value.isoformat()

    return {
        "format": FORMAT_VERSION,
        "id": m.id,
        "owner": m.owner,
        "kind": m.kind.value,
        "content": m.content,
        "query_hints": list(m.query_hints),
        "confidence": m.confidence,
        "provenance": {
            "source": m.provenance.source.value,
            "session_id": m.provenance.session_id,
            "speaker": m.provenance.speaker,
            "derived_from": list(m.provenance.derived_from),
            "principal": m.provenance.principal,
            "input_hash": m.provenance.input_hash,
        },
        **{name: iso(getattr(m, name)) for name in _TIMES},
        "superseded_by": m.superseded_by,
        "access_count": m.access_count,
        "status": m.status.value,
        "embedding_model": m.embedding_model,
        "attribute": m.attribute,
        "metadata": m.metadata,
        "trust": m.trust,
        "flags": list(m.flags),
        "review": None if m.review is None else asdict(m.review),
        "screened": m.screened,
        "pinned": m.pinned,
    }


def memory_from_dict(d: Mapping[str, Any], *, limit: int) -> Memory:
    """Rebuild a memory from :func:`memory_to_dict` output, checking every field."""
    if not isinstance(d, Mapping):
        raise ValidationError("a record must be a JSON object")
    if d.get("format", FORMAT_VERSION) != FORMAT_VERSION:
        raise ValidationError(f"unsupported export format {d.get('format')!r}")
    for name in ("id", "owner", "kind", "content", "observed_at"):
        if d.get(name) is None:
            raise ValidationError(f"missing field {name!r}")
    if not isinstance(d["id"], str) or not validate.SESSION_RE.fullmatch(d["id"]):
        raise ValidationError(f"invalid id {d['id']!r}")
    prov = d.get("provenance") or {}
    if not isinstance(prov, Mapping):
        raise ValidationError("provenance must be an object")
    derived = prov.get("derived_from") or []
    if not isinstance(derived, list) or not all(isinstance(x, str) for x in derived):
        raise ValidationError("provenance.derived_from must be a list of ids")
    hints = d.get("query_hints") or []
    if not isinstance(hints, list) or not all(isinstance(h, str) for h in hints):
        raise ValidationError("query_hints must be a list of strings")
    times = {name: validate.timestamp(d.get(name), field=name) for name in _TIMES}
    observed = times["observed_at"]
    assert observed is not None
    flags = d.get("flags") or []
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise ValidationError("flags must be a list of strings")
    count = d.get("access_count", 0)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValidationError("access_count must be a non-negative integer")
    return Memory(
        id=d["id"],
        owner=validate.owner(d["owner"]),
        kind=validate.choice(Kind, d["kind"], field="kind"),
        content=validate.text(d["content"], limit=limit),
        query_hints=hints,
        confidence=validate.confidence(d.get("confidence", 1.0)),
        provenance=Provenance(
            source=validate.choice(Source, prov.get("source", "import"), field="source"),
            session_id=validate.session_id(prov.get("session_id")),
            speaker=prov.get("speaker"),
            derived_from=derived,
            principal=_optional_text(prov.get("principal"), "provenance.principal"),
            input_hash=_optional_text(prov.get("input_hash"), "provenance.input_hash"),
        ),
        observed_at=observed,
        created_at=times["created_at"] or observed,
        updated_at=times["updated_at"] or observed,
        valid_from=times["valid_from"],
        valid_to=times["valid_to"],
        superseded_by=d.get("superseded_by"),
        last_accessed_at=times["last_accessed_at"],
        access_count=count,
        status=validate.choice(Status, d.get("status", "active"), field="status"),
        embedding_model=d.get("embedding_model"),
        attribute=d.get("attribute"),
        metadata=validate.metadata(d.get("metadata"), limit=1 << 20),
        trust=validate.confidence(d.get("trust", 1.0), field="trust"),
        flags=flags,
        review=_review(d.get("review")),
        screened=d.get("screened") is True,
        pinned=d.get("pinned") is True,
        used_at=times["used_at"],
        expires_at=times["expires_at"],
    )


def _optional_text(value: object, field: str) -> str | None:
    if value is not None and (not isinstance(value, str) or len(value) > 200):
        raise ValidationError(f"{field} must be a string of at most 200 characters")
    return value


def _review(value: object) -> Review | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("reason"), str):
        raise ValidationError("review must be an object with a 'reason'")
    ids = value.get("conflicts_with") or []
    if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
        raise ValidationError("review.conflicts_with must be a list of ids")
    extra = {k: value.get(k) for k in ("decision", "decided_by", "decided_at")}
    if not all(v is None or isinstance(v, str) for v in extra.values()):
        raise ValidationError("review.decision, decided_by and decided_at must be strings")
    return Review(value["reason"], ids, **extra, assessment=_assessment(value.get("assessment")))


def _assessment(value: object) -> Assessment | None:
    """The LLM check's verdict on a memory, as exported; checked like the rest."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or value.get("verdict") not in VERDICTS:
        raise ValidationError(f"review.assessment must be an object with a verdict: {VERDICTS}")
    ids = value.get("against") or []
    if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
        raise ValidationError("review.assessment.against must be a list of ids")
    texts = {k: value.get(k) for k in ("reason", "model", "at")}
    if not isinstance(texts["reason"], str) or not all(
        v is None or isinstance(v, str) for v in texts.values()
    ):
        raise ValidationError("review.assessment.reason, model and at must be strings")
    return Assessment(value["verdict"], texts["reason"], ids, texts["model"], texts["at"])
