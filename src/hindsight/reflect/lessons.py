"""Lessons that outlast a conversation: failing tools, corrections, changed values,
lasting preferences."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from hindsight.models import Kind, Memory, Tag
from hindsight.reflect.drafts import (
    MAX_TURN_CHARS,
    Draft,
    clip,
    day,
    detail_of,
    digest,
    role_of,
    sentence,
    span,
    tags_of,
    tool_of,
    unique,
    usable,
    value_of,
)

#: A reflection never exceeds this many characters.
MAX_REFLECTION_CHARS: Final = 600
MIN_TOOL_FAILURES: Final = 2  # failures of one tool before it is a lesson
MIN_PREFERENCE_MENTIONS: Final = 3  # turns stating one preference before it is a lesson
MAX_CHANGE_STEPS: Final = 6  # values of an attribute shown in a change lesson
_VALUED_KINDS: Final = (Kind.FACT, Kind.PREFERENCE)


class _Pool:
    """The memories a reflection may cite, indexed for the lessons below."""

    def __init__(self, memories: Iterable[Memory]) -> None:
        self.by_id = {m.id: m for m in memories if usable(m)}
        # turns said at one time keep the order they were stored in
        self.order = {mid: i for i, mid in enumerate(self.by_id)}
        self.turns: dict[str | None, list[Memory]] = {}
        for m in self.by_id.values():
            if m.kind is Kind.EPISODE:
                self.turns.setdefault(m.provenance.session_id, []).append(m)
        for turns in self.turns.values():
            turns.sort(key=lambda e: (e.observed_at, self.order[e.id]))

    def derived(self) -> list[Memory]:
        """The memories other than turns, ordered on what they say (not how they came)."""
        found = [m for m in self.by_id.values() if m.kind is not Kind.EPISODE]
        return sorted(found, key=lambda m: (m.observed_at, m.content, m.id))

    def times(self, m: Memory) -> list[datetime]:
        """When ``m`` was said: the times of the turns it came from, else its own."""
        parents = [self.by_id[p] for p in m.provenance.derived_from if p in self.by_id]
        return [p.observed_at for p in parents] or [m.observed_at]

    def said_before(self, m: Memory) -> Memory | None:
        """The assistant turn a correction answers: one of the few turns before it."""
        turns = [self.by_id[p] for p in m.provenance.derived_from if p in self.by_id]
        turns = [e for e in turns if e.kind is Kind.EPISODE]
        if not turns:
            return None
        turn = max(turns, key=lambda e: (e.observed_at, self.order[e.id]))
        session = self.turns.get(turn.provenance.session_id, [])
        at = next(i for i, e in enumerate(session) if e.id == turn.id)
        for prev in reversed(session[max(0, at - 3) : at]):
            # without a session, only a turn of the same exchange (the same time) counts
            if turn.provenance.session_id is None and prev.observed_at != turn.observed_at:
                return None
            if role_of(prev) == "assistant":
                return prev
        return None

    def later(self, m: Memory) -> int:
        """How many replacements ``m`` has had: orders values stated at one time."""
        hops, seen = 0, {m.id}
        while m.superseded_by in self.by_id and m.superseded_by not in seen:
            m = self.by_id[m.superseded_by]
            seen.add(m.id)
            hops += 1
        return -hops

    def lesson(
        self,
        key: str,
        content: str,
        members: Sequence[Memory],
        *,
        confidence: float,
        hints: Sequence[str],
        metadata: Mapping[str, Any],
    ) -> Draft:
        """A reflection derived from ``members`` and the turns they came from."""
        evidence = unique(i for m in members for i in (m.id, *m.provenance.derived_from))
        sessions = {m.provenance.session_id for m in members if m.kind is not Kind.EPISODE}
        when = [self.by_id[i].observed_at for i in evidence if i in self.by_id]
        return Draft(
            key=key,
            kind=Kind.REFLECTION,
            content=clip(content, MAX_REFLECTION_CHARS),
            evidence=evidence,
            observed_at=max(when),
            confidence=round(min(confidence, 0.95), 4),
            session_id=sessions.pop() if len(sessions) == 1 else None,
            query_hints=tuple(hints),
            metadata=dict(metadata),
        )


def reflect_on(memories: Iterable[Memory], *, scope: Collection[str] | None = None) -> list[Draft]:
    """Lessons that outlast a conversation, drawn from ``memories``.

    - a tool that failed :data:`MIN_TOOL_FAILURES` times or more;
    - each correction the user made (what was wrong, what is right);
    - an attribute whose value changed over time (old value -> new value, when);
    - a preference stated in :data:`MIN_PREFERENCE_MENTIONS` turns or more.

    ``memories`` should hold the turns the others came from, and every value of an
    attribute they mention. With ``scope`` (memory ids), only lessons citing at
    least one of them are returned.
    """
    pool = _Pool(memories)
    drafts = [
        *_tool_lessons(pool),
        *_correction_lessons(pool),
        *_change_lessons(pool),
        *_preference_lessons(pool),
    ]
    unique: dict[str, Draft] = {}
    for draft in drafts:
        if scope is None or any(i in scope for i in draft.evidence):
            unique.setdefault(draft.key, draft)  # one lesson a key, or reruns would duplicate it
    return list(unique.values())


def _tool_lessons(pool: _Pool) -> list[Draft]:
    failures: dict[str, list[Memory]] = {}
    for m in pool.derived():
        if m.kind is Kind.TOOL_RESULT and Tag.TOOL_FAILURE in tags_of(m):
            failures.setdefault(tool_of(m), []).append(m)
    drafts = []
    for tool, found in failures.items():
        # a failure said again is merged into one memory citing each turn
        count = sum(max(1, len(m.provenance.derived_from)) for m in found)
        if count < MIN_TOOL_FAILURES:
            continue
        times = [t for m in found for t in pool.times(m)]
        latest = max(found, key=lambda m: (max(pool.times(m)), m.content))
        error = detail_of(latest)
        content = (
            f"{'An unnamed tool' if tool == 'tool' else f'The tool {tool}'} is unreliable: "
            f"it failed {count} times {span(times)}. "
            f"Latest error: {sentence(clip(error, 200))} Check its input before calling it, "
            "expect it to fail again, and say so when it does rather than guessing a result."
        )
        drafts.append(
            pool.lesson(
                f"tool_failure:{tool}",
                content,
                found,
                confidence=0.5 + 0.1 * count,
                hints=(tool, f"{tool} error", f"{tool} failures", "which tools fail"),
                metadata={
                    "lesson": Tag.TOOL_FAILURE,
                    "tool": tool,
                    "failures": count,
                    "latest_error": clip(error, 200),
                    "first_at": min(times).isoformat(),
                    "latest_at": max(times).isoformat(),
                },
            )
        )
    return drafts


def _correction_lessons(pool: _Pool) -> list[Draft]:
    groups: dict[str, list[Memory]] = {}
    for m in pool.derived():
        if Tag.CORRECTION in tags_of(m):
            who = m.provenance.speaker or ""
            key = f"{m.kind.value}:{m.attribute}:{who}" if m.attribute else digest(who, m.content)
            groups.setdefault(f"correction:{key}", []).append(m)
    drafts = []
    for key, found in groups.items():
        found.sort(key=lambda m: (max(pool.times(m)), pool.later(m), m.content))
        right = found[-1]
        ids = {m.id for m in found}
        replaced = [m for m in pool.derived() if m.superseded_by in ids and m.id not in ids]
        wrong = [
            m for m in [*replaced, *found[:-1]] if value_of(m).lower() != value_of(right).lower()
        ]
        said = pool.said_before(right)
        who = right.provenance.speaker or "The user"
        content = f"{who} corrected the assistant: {sentence(detail_of(right))}"
        if wrong:
            held = "; ".join(dict.fromkeys(clip(m.content, 120) for m in wrong))
            content += f" Previously recorded, and wrong: {held}."
        if said is not None:
            content += f' The assistant had said: "{clip(said.content, MAX_TURN_CHARS)}".'
        if right.valid_to is not None:
            content += f" (This changed again on {day(right.valid_to)}.)"
        content += " Do not repeat this mistake."
        members = [*found, *wrong, *([said] if said is not None else [])]
        drafts.append(
            pool.lesson(
                key,
                content,
                members,
                confidence=0.95,
                hints=("corrections", "what the assistant got wrong", "mistakes to avoid"),
                metadata={
                    "lesson": Tag.CORRECTION,
                    "right": right.content,
                    "wrong": list(dict.fromkeys(m.content for m in wrong)),
                    "attribute": right.attribute,
                    "corrections": len(found),
                },
            )
        )
    return drafts


def _change_lessons(pool: _Pool) -> list[Draft]:
    chains: dict[tuple[str, str, str], list[Memory]] = {}
    for m in pool.derived():
        if m.attribute and m.kind in _VALUED_KINDS:
            # people in one conversation share attribute names; a change is one person's
            key = (m.kind.value, m.attribute, m.provenance.speaker or "")
            chains.setdefault(key, []).append(m)
    drafts = []
    for (kind, attribute, who), found in chains.items():
        if not any(m.superseded_by for m in found):
            continue
        found.sort(key=lambda m: (m.observed_at, m.created_at, pool.later(m), m.content))
        steps: list[list[Memory]] = []  # runs of one value
        for m in found:
            if steps and value_of(steps[-1][0]).lower() == value_of(m).lower():
                steps[-1].append(m)
            else:
                steps.append([m])
        if len(steps) < 2 or all(Tag.CORRECTION in tags_of(run[0]) for run in steps[1:]):
            continue  # only corrections: the value was wrong, it did not change
        label = attribute.replace(":", " ").replace("_", " ")
        shown = [
            f"{clip(value_of(run[0]), 60)} ({day(run[0].observed_at)}"
            f"{', a correction' if i and Tag.CORRECTION in tags_of(run[0]) else ''})"
            for i, run in enumerate(steps)
        ][-MAX_CHANGE_STEPS:]
        current = steps[-1][-1]
        content = (
            f"{who or 'The user'}'s {label} changed over time: {' -> '.join(shown)}. "
            f"Now: {sentence(current.content)} "
            "Use the latest value, not an earlier one."
        )
        drafts.append(
            pool.lesson(
                f"change:{kind}:{attribute}:{who}",
                content,
                found,
                confidence=0.9,
                hints=(f"{label} history", f"previous {label}", f"when did {label} change"),
                metadata={
                    "lesson": "attribute_change",
                    "attribute": attribute,
                    "values": [value_of(run[0]) for run in steps],
                    "changed_at": [run[0].observed_at.isoformat() for run in steps[1:]],
                },
            )
        )
    return drafts


def _preference_lessons(pool: _Pool) -> list[Draft]:
    drafts = []
    for m in pool.derived():
        mentions = len(set(m.provenance.derived_from))
        if m.kind is not Kind.PREFERENCE or mentions < MIN_PREFERENCE_MENTIONS:
            continue
        said = f"{m.content} (stated {mentions} times {span(pool.times(m))})"
        if m.valid_to is None:
            content = f"Lasting preference: {said}. Follow it without being asked again."
        else:
            content = f"Former preference: {said}; it no longer holds since {day(m.valid_to)}."
        drafts.append(
            pool.lesson(
                f"preference:{digest(m.provenance.speaker or '', m.content)}",
                content,
                [m],
                confidence=0.5 + 0.1 * mentions,
                hints=("lasting preferences", *m.query_hints),
                metadata={"lesson": "preference", "preference": m.content, "mentions": mentions},
            )
        )
    return drafts
