"""Summaries and lessons drafted by an LLM, behind the same inputs and outputs as the
offline drafters: a :class:`~hindsight.reflect.drafts.Draft` that
:func:`~hindsight.reflect.reconcile` writes.

:func:`summary_messages` / :func:`summary_draft` turn a session's turns into one
summary under the session's key (``summary:<session>``), so it rewrites the offline
summary of the same turns in place. :func:`lesson_messages` / :func:`lesson_drafts`
turn a pool of memories into lessons, each resting on memories the model was shown
(by label; any other label is dropped, and a lesson without evidence with it) and
kept only above ``min_importance``; a lesson's key comes from the model, which is
shown the lessons it drafted before so that it names the same lesson the same way.
The same answer holds topic digests: what was said about one subject across
sessions, in order, a ``summary`` under the key ``digest:<topic>`` derived from every
memory it draws on (at least two), so a question asking for a summary or an order
of events finds them all in one memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any, Final

from hindsight.extract.base import PROMPT_BLOCK
from hindsight.extract.llm import key_of
from hindsight.llm import Leniency, Message
from hindsight.models import Kind, Memory
from hindsight.reflect.drafts import Draft, clip, role_of, unique
from hindsight.reflect.lessons import MAX_REFLECTION_CHARS
from hindsight.reflect.summary import MAX_SUMMARY_CHARS

#: Part of each job's id: a new prompt drafts the same input again.
PROMPT_VERSION: Final = "distil-1"
MAX_TURNS: Final = 200  # of a session, the latest, in one prompt
MAX_POOL: Final = 80  # memories shown for reflection, the latest
_TURN_CHARS: Final = 600

SUMMARY_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "minLength": 10, "maxLength": MAX_SUMMARY_CHARS},
        "topics": {"type": "array", "maxItems": 6, "items": {"type": "string", "maxLength": 80}},
    },
    "required": ["summary", "topics"],
    "additionalProperties": False,
}
LESSON_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "lessons": {
            "type": "array",
            "maxItems": 10,
            "items": {
                "type": "object",
                "properties": {
                    "key": {"type": "string", "minLength": 2, "maxLength": 80},
                    "lesson": {"type": "string", "minLength": 10, "maxLength": 400},
                    "importance": {"type": "number", "minimum": 0, "maximum": 1},
                    "evidence": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 20,
                        "items": {"type": "string", "maxLength": 12},
                    },
                },
                "required": ["key", "lesson", "importance", "evidence"],
                "additionalProperties": False,
            },
        },
        "digests": {
            "type": "array",
            "maxItems": 6,
            "items": {
                "type": "object",
                "properties": {
                    "topic": {"type": "string", "minLength": 2, "maxLength": 80},
                    "digest": {"type": "string", "minLength": 10, "maxLength": MAX_SUMMARY_CHARS},
                    "evidence": {  # at least two, or it is dropped (not the answer)
                        "type": "array",
                        "maxItems": 40,
                        "items": {"type": "string", "maxLength": 12},
                    },
                },
                "required": ["topic", "digest", "evidence"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["lessons", "digests"],
    "additionalProperties": False,
}
#: Other names models give the answers' fields; a bare list is a list of lessons.
SUMMARY_LENIENCY: Final = Leniency(aliases={"text": "summary", "content": "summary"})
LESSON_LENIENCY: Final = Leniency(
    aliases={
        "text": "lesson",
        "memories": "evidence",
        "labels": "evidence",
        "subject": "topic",
        "summary": "digest",
    },
    list_key="lessons",
)
_SUMMARY_SYSTEM: Final = (
    "You summarise one conversation session for an assistant's long-term memory. Say who "
    "took part and when, then what was stated, decided, asked for and done, in the order "
    f"it happened, with names, numbers and dates; at most {MAX_SUMMARY_CHARS} characters. "
    "Leave out greetings and small talk. List the session's main topics too."
)
_LESSON_SYSTEM: Final = (
    "You look back over an assistant's memories of one user and distil lasting lessons: "
    "what the assistant should do differently or keep doing (a tool that keeps failing, a "
    "correction the user made, a preference stated again and again, a habit, a change of "
    "circumstance). Each lesson: a short key naming it (snake_case), one or two sentences, "
    "an importance from 0 to 1 (how much it should change what the assistant does), and "
    "the labels of the memories it rests on. Only what the memories show; no lesson is "
    "fine. Reuse the key of a known lesson when it is the same lesson. Then, for each "
    "subject the user came back to across sessions (a project, a trip, a person, a "
    "problem), a digest: what was said about it, in the order it happened, with dates, "
    "and the labels of every memory it draws on; reuse the topic of a known digest when "
    'it is the same subject. Answer {"lessons": [], "digests": []} when there is none.'
)


def _line(label: str, m: Memory, zone: tzinfo) -> str:
    text = " ".join(PROMPT_BLOCK.sub(" ", m.content).split())[:_TURN_CHARS]
    who = m.provenance.speaker or role_of(m)
    when = m.observed_at.astimezone(zone).strftime("%Y-%m-%d %H:%M")
    kind = "" if m.kind is Kind.EPISODE else f" [{m.kind.value}]"
    return f"{label} {when}{kind} {who}: {text}"


def summary_messages(episodes: Sequence[Memory], *, zone: tzinfo) -> tuple[Message, ...]:
    """The request for a session's summary: its turns, oldest first (the latest
    :data:`MAX_TURNS`), system turns and quoted memories left out."""
    turns = [e for e in episodes if role_of(e) != "system"][-MAX_TURNS:]
    lines = [_line(f"[{i}]", e, zone) for i, e in enumerate(turns)]
    return (
        Message("system", _SUMMARY_SYSTEM),
        Message("user", "Session:\n" + "\n".join(lines)),
    )


def summary_draft(offline: Draft, value: Mapping[str, Any], *, generator: str) -> Draft:
    """The model's summary in place of ``offline``'s text (the same key, evidence and
    session), its topics among the hints."""
    topics = tuple(t.strip() for t in value["topics"] if t.strip())
    return Draft(
        key=offline.key,
        kind=offline.kind,
        content=clip(value["summary"], MAX_SUMMARY_CHARS),
        evidence=offline.evidence,
        observed_at=offline.observed_at,
        confidence=offline.confidence,
        session_id=offline.session_id,
        query_hints=unique([*offline.query_hints, *topics]),
        metadata={**offline.metadata, "topics": list(topics), "generator": generator},
    )


@dataclass(frozen=True, slots=True)
class LessonPrompt:
    messages: tuple[Message, ...]
    shown: dict[str, Memory] = field(default_factory=dict)  # label -> memory


def lesson_messages(
    pool: Sequence[Memory], known: Sequence[Memory], *, zone: tzinfo
) -> LessonPrompt:
    """The request for lessons from ``pool`` (the latest :data:`MAX_POOL`), showing the
    lessons already drafted (``known``) by key."""
    latest = sorted(pool, key=lambda m: (m.observed_at, m.id))[-MAX_POOL:]
    shown = {f"m{i}": m for i, m in enumerate(latest, start=1)}
    lines = [_line(label, m, zone) for label, m in shown.items()]
    prompt = "Memories:\n" + "\n".join(lines)
    lessons = [f"{m.metadata['llm_key']}: {m.content}" for m in known if m.kind is Kind.REFLECTION]
    digests = [m.metadata["llm_key"] for m in known if m.kind is Kind.SUMMARY]
    if lessons:
        prompt += "\n\nKnown lessons:\n" + "\n".join(lessons)
    if digests:
        prompt += "\n\nKnown digests (topics): " + ", ".join(digests)
    return LessonPrompt((Message("system", _LESSON_SYSTEM), Message("user", prompt)), shown)


def lesson_drafts(
    value: Mapping[str, Any],
    prompt: LessonPrompt,
    *,
    min_importance: float,
    generator: str,
) -> tuple[list[Draft], int]:
    """The lessons worth keeping (importance above ``min_importance``, resting on shown
    memories), and how many were left out."""
    drafts: dict[str, Draft] = {}
    left = 0
    for item in value["lessons"]:
        evidence = [prompt.shown[x] for x in item["evidence"] if x in prompt.shown]
        key = key_of(item["key"])
        if item["importance"] <= min_importance or not evidence or key is None:
            left += 1
            continue
        sessions = {m.provenance.session_id for m in evidence}
        drafts[key] = Draft(
            key=f"llm:{key}",
            kind=Kind.REFLECTION,
            content=clip(item["lesson"], MAX_REFLECTION_CHARS),
            evidence=unique(m.id for m in evidence),
            observed_at=max(m.observed_at for m in evidence),
            confidence=round(min(float(item["importance"]), 0.95), 4),
            session_id=sessions.pop() if len(sessions) == 1 else None,
            query_hints=(key.replace("_", " "),),
            metadata={
                "lesson": "llm",
                "llm_key": key,
                "importance": float(item["importance"]),
                "generator": generator,
            },
        )
    for item in value.get("digests", []):
        evidence = [prompt.shown[x] for x in item["evidence"] if x in prompt.shown]
        key = key_of(item["topic"])
        if len(evidence) < 2 or key is None:
            left += 1
            continue
        turns = sorted(evidence, key=lambda m: (m.observed_at, m.id))
        drafts[f"digest:{key}"] = Draft(
            key=f"digest:{key}",
            kind=Kind.SUMMARY,
            content=clip(item["digest"], MAX_SUMMARY_CHARS),
            evidence=unique(m.id for m in turns),
            observed_at=turns[-1].observed_at,
            confidence=0.9,
            query_hints=(item["topic"].strip(), f"what happened with {item['topic'].strip()}"),
            metadata={
                "digest": "llm",
                "llm_key": key,
                "sessions": len({m.provenance.session_id for m in turns}),
                "generator": generator,
            },
        )
    return list(drafts.values()), left
