"""Domain objects as JSON, and back: the one shape every interface speaks.

The CLI's ``--json``, the REST schemas, the MCP tools and the client all build their
answers from these functions (each interface may wrap them: MCP keeps results short
for a model's context), and the client reads REST's answers back with the ``*_from``
functions. Times are ISO 8601 strings with their offset; enums are their values.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from hindsight import validate
from hindsight.entities import Entity, Fact, Related
from hindsight.foresight import Item
from hindsight.guard.review import ReviewItem
from hindsight.jobs.kinds import JobQueue
from hindsight.lifecycle.history import History, HistoryEvent, Version
from hindsight.models import (
    ChannelHit,
    Explanation,
    ForgetReceipt,
    Memory,
    RecallResult,
    RetainResult,
    Status,
    Turn,
)
from hindsight.store import AuditEntry, QueuedJob, StoreStats, UsageRow, WorkingTurn
from hindsight.write.transfer import memory_from_dict, memory_to_dict

JSON = dict[str, Any]


def _default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Turn):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def dumps(data: object) -> str:
    """The one JSON encoder: UTF-8 text, ISO 8601 times, enums as their values."""
    return json.dumps(data, ensure_ascii=False, default=_default)


def _time(value: Any, field: str) -> datetime:
    when = validate.timestamp(value, field=field)
    assert when is not None
    return when


# -- memories ----------------------------------------------------------------------------
def memory(m: Memory) -> JSON:
    """A memory as exported, without the export's format number."""
    data = memory_to_dict(m)
    data.pop("format", None)
    return data


def memory_from(data: Mapping[str, Any]) -> Memory:
    return memory_from_dict(data, limit=sys.maxsize)


# -- recall ------------------------------------------------------------------------------
def explanation(e: Explanation) -> JSON:
    return e.as_dict()


def explanation_from(data: Mapping[str, Any]) -> Explanation:
    return Explanation(
        channels={
            n: ChannelHit(rank=c["rank"], score=c["score"]) for n, c in data["channels"].items()
        },
        fused=data["fused"],
        boosts=dict(data["boosts"]),
        final=data["final"],
        owner_weight=data["owner_weight"],
        confidence=data.get("confidence"),
        unavailable=list(data.get("unavailable") or []),
        rerank=None if data.get("rerank") is None else dict(data["rerank"]),
    )


def reranked(info: dict[str, Any] | None) -> str:
    """The rerank step, as the end of a result's one-line reason ("" without a reranker)."""
    if info is None:
        return ""
    if not info["applied"]:
        return f"; not reranked by {info['provider']} ({info.get('error', '')}): the engine's order"
    if "rank" not in info:
        return ""
    return f"; reranked by {info['provider']}: #{info['rank']} ({info['score']:.3g})"


def recall_hit(r: RecallResult) -> JSON:
    return {"memory": memory(r.memory), "score": r.score, "explanation": explanation(r.explanation)}


def recall_hit_from(data: Mapping[str, Any]) -> RecallResult:
    return RecallResult(
        memory_from(data["memory"]), data["score"], explanation_from(data["explanation"])
    )


# -- writes and deletions ----------------------------------------------------------------
def retained(r: RetainResult) -> JSON:
    """What a write did: the ids, each written memory's status, and why the guard held any."""
    return {
        "episodes": r.episodes,
        "created": r.created,
        "updated": r.updated,
        "superseded": [{"old": old, "new": new} for old, new in r.superseded],
        "status": {mid: status.value for mid, status in r.status.items()},
        "reasons": dict(r.reasons),
    }


def retained_from(data: Mapping[str, Any]) -> RetainResult:
    # a result recorded (for an idempotency key) before statuses were kept has none
    return RetainResult(
        episodes=list(data["episodes"]),
        created=list(data["created"]),
        updated=list(data["updated"]),
        superseded=[(s["old"], s["new"]) for s in data["superseded"]],
        status={mid: Status(value) for mid, value in data.get("status", {}).items()},
        reasons=dict(data.get("reasons", {})),
    )


def receipt(r: ForgetReceipt) -> JSON:
    criteria = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in r.criteria.items()}
    return {
        "id": r.id,
        "count": r.count,
        "deleted_ids": r.deleted_ids,
        "derived_ids": r.derived_ids,
        "restored_ids": r.restored_ids,
        "at": r.at.isoformat(),
        "criteria": criteria,
    }


def receipt_from(data: Mapping[str, Any]) -> ForgetReceipt:
    criteria = dict(data["criteria"])
    for name in ("since", "until"):
        if isinstance(criteria.get(name), str):
            criteria[name] = _time(criteria[name], name)
    return ForgetReceipt(
        id=data["id"],
        deleted_ids=list(data["deleted_ids"]),
        derived_ids=list(data["derived_ids"]),
        at=_time(data["at"], "at"),
        criteria=criteria,
        restored_ids=list(data.get("restored_ids", [])),
    )


# -- the review queue and the audit log --------------------------------------------------
def review_item(item: ReviewItem) -> JSON:
    """A held memory (its ``review`` says why) and the memories it conflicts with."""
    return {"memory": memory(item.memory), "conflicts": [memory(m) for m in item.conflicts]}


def review_item_from(data: Mapping[str, Any]) -> ReviewItem:
    return ReviewItem(memory_from(data["memory"]), [memory_from(m) for m in data["conflicts"]])


def audit_entry(e: AuditEntry) -> JSON:
    return {
        "seq": e.seq,
        "at": e.at.isoformat(),
        "principal": e.principal,
        "owner": e.owner,
        "action": e.action,
        "memory_ids": list(e.memory_ids),
        "request_id": e.request_id,
        "detail": dict(e.detail),
        "hash": e.hash,
    }


def audit_entry_from(data: Mapping[str, Any]) -> AuditEntry:
    return AuditEntry(
        at=_time(data["at"], "at"),
        principal=data["principal"],
        owner=data["owner"],
        action=data["action"],
        memory_ids=tuple(data["memory_ids"]),
        request_id=data["request_id"],
        detail=dict(data["detail"]),
        seq=data["seq"],
        hash=data["hash"],
    )


# -- history -----------------------------------------------------------------------------
def history_event(e: HistoryEvent) -> JSON:
    return {
        "at": e.at.isoformat(),
        "principal": e.principal,
        "action": e.action,
        "what": e.what,
        "memory_id": e.memory_id,
        "detail": dict(e.detail),
    }


def history(h: History) -> JSON:
    """A memory's versions, oldest first, each with what happened to it."""
    return {
        "memory_id": h.memory_id,
        "versions": [
            {"memory": memory(v.memory), "events": [history_event(e) for e in v.events]}
            for v in h.versions
        ],
        "derived": [memory(m) for m in h.derived],
    }


def history_from(data: Mapping[str, Any]) -> History:
    return History(
        memory_id=data["memory_id"],
        versions=[
            Version(
                memory_from(v["memory"]),
                [
                    HistoryEvent(
                        at=_time(e["at"], "at"),
                        principal=e["principal"],
                        action=e["action"],
                        what=e["what"],
                        memory_id=e["memory_id"],
                        detail=dict(e["detail"]),
                    )
                    for e in v["events"]
                ],
            )
            for v in data["versions"]
        ],
        derived=[memory_from(m) for m in data.get("derived", [])],
    )


# -- the store and working memory --------------------------------------------------------
def stats(s: StoreStats) -> JSON:
    return dataclasses.asdict(s)


def stats_from(data: Mapping[str, Any]) -> StoreStats:
    return StoreStats(
        **{f.name: data[f.name] for f in dataclasses.fields(StoreStats) if f.name in data}
    )


def turn(t: WorkingTurn) -> JSON:
    return {
        **dataclasses.asdict(t),
        "created_at": t.created_at.isoformat(),
        "expires_at": t.expires_at.isoformat(),
    }


def turn_from(data: Mapping[str, Any]) -> WorkingTurn:
    return WorkingTurn(
        **{
            **data,
            "created_at": _time(data["created_at"], "created_at"),
            "expires_at": _time(data["expires_at"], "expires_at"),
        }
    )


# -- LLM usage ---------------------------------------------------------------------------
def usage_row(r: UsageRow) -> JSON:
    return dataclasses.asdict(r)


def usage_row_from(data: Mapping[str, Any]) -> UsageRow:
    return UsageRow(**{f.name: data[f.name] for f in dataclasses.fields(UsageRow)})


def usage_total(rows: list[UsageRow]) -> JSON:
    """The rows added up; cost is None when no row has one."""
    costs = [r.cost for r in rows if r.cost is not None]
    return {
        "calls": sum(r.calls for r in rows),
        "failures": sum(r.failures for r in rows),
        "retries": sum(r.retries for r in rows),
        "dropped": sum(r.dropped for r in rows),
        "dropped_items": sum(r.dropped_items for r in rows),
        "prompt_tokens": sum(r.prompt_tokens for r in rows),
        "completion_tokens": sum(r.completion_tokens for r in rows),
        "cost": sum(costs) if costs else None,
    }


_JOB_TIMES = ("created_at", "not_before", "updated_at", "lease_until")


def job_queue(q: JobQueue) -> JSON:
    return {
        "counts": dict(q.counts),
        "jobs": [
            {
                **dataclasses.asdict(j),
                **{
                    t: None if getattr(j, t) is None else getattr(j, t).isoformat()
                    for t in _JOB_TIMES
                },
            }
            for j in q.jobs
        ],
    }


def job_queue_from(data: Mapping[str, Any]) -> JobQueue:
    def job(d: Mapping[str, Any]) -> QueuedJob:
        values = {f.name: d[f.name] for f in dataclasses.fields(QueuedJob)}
        for t in _JOB_TIMES:
            values[t] = None if d[t] is None else datetime.fromisoformat(d[t])
        return QueuedJob(**values)

    return JobQueue(counts=dict(data["counts"]), jobs=[job(d) for d in data["jobs"]])


def foresight_item(item: Item) -> JSON:
    """An item ahead: its due as an ISO date, or a date and time with its offset."""
    return {
        "content": item.content,
        "due": None if item.due is None else item.due.isoformat(),
        "kind": item.kind,
        "memory_ids": list(item.memory_ids),
        "confidence": item.confidence,
    }


def foresight_item_from(data: Mapping[str, Any]) -> Item:
    due = data.get("due")
    when: date | datetime | None = None
    if due is not None:
        when = datetime.fromisoformat(due) if "T" in due else date.fromisoformat(due)
    return Item(
        content=data["content"],
        due=when,
        kind=data["kind"],
        memory_ids=tuple(data["memory_ids"]),
        confidence=float(data["confidence"]),
    )


# -- entities ----------------------------------------------------------------------------
def entity(e: Entity) -> JSON:
    """An entity's page: its names and kind, what was said of it (each fact with the memory
    it was said in) and what it is linked with."""
    return {
        "name": e.name,
        "kind": e.kind,
        "aliases": list(e.aliases),
        "facts": [{"content": f.content, "memory_id": f.memory_id} for f in e.facts],
        "related": [{"name": r.name, "relation": r.relation} for r in e.related],
    }


def entity_from(data: Mapping[str, Any]) -> Entity:
    """A page read back; its roles, which the page does not carry, are empty."""
    return Entity(
        name=data["name"],
        kind=data["kind"],
        aliases=tuple(data["aliases"]),
        facts=tuple(Fact(f["content"], f["memory_id"]) for f in data["facts"]),
        related=tuple(Related(r["name"], r["relation"]) for r in data["related"]),
    )


def entity_summary(e: Entity) -> JSON:
    """An entity as a list names it: what to ask its page by."""
    return {"name": e.name, "aliases": list(e.aliases), "kind": e.kind}


def entity_summary_from(data: Mapping[str, Any]) -> Entity:
    """An entity listed: its names and kind, without its facts and links."""
    return Entity(data["name"], data["kind"], tuple(data["aliases"]), (), ())
