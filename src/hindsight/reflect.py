"""Session summaries and reflections, drafted deterministically from memories.

Everything here is a pure function over :class:`~hindsight.models.Memory`
values: no store, no model, no clock. :meth:`Hindsight.summarize
<hindsight.engine.Hindsight.summarize>` and :meth:`Hindsight.reflect
<hindsight.engine.Hindsight.reflect>` fetch the memories, call these, embed and
write. An LLM-backed drafter can later sit behind the same inputs and outputs:

- :func:`summarize_session` turns a session's turns, and what was derived from
  them, into one summary :class:`Draft`;
- :func:`reflect_on` turns a pool of memories into lesson drafts, each with a
  stable key;
- :func:`reconcile` compares drafts with the stored memories of the same keys and
  says what to insert, rewrite in place or supersede.

Summaries and reflections build on what the extractor and the write path
already recorded: the ``correction`` and ``tool_failure`` tags, attributes with
their ``value``, ``superseded_by`` links, and ``derived_from`` (a statement made
again is merged into one memory that lists every turn that said it).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from hindsight.errors import ValidationError
from hindsight.models import ROLE_OF_SOURCE, Kind, Memory, Provenance, Source, Status, new_id
from hindsight.write import supersede

GENERATOR: Final = "heuristic"
#: A summary never exceeds this many characters, however long the session.
MAX_SUMMARY_CHARS: Final = 1_200
MAX_POINT_CHARS: Final = 200  # one key point of a summary
MAX_TURN_CHARS: Final = 160  # one quoted turn
MAX_SALIENT_TURNS: Final = 3
MAX_PARTICIPANTS: Final = 6  # named in a summary; the rest are counted
#: A reflection never exceeds this many characters.
MAX_REFLECTION_CHARS: Final = 600
MIN_TOOL_FAILURES: Final = 2  # failures of one tool before it is a lesson
MIN_PREFERENCE_MENTIONS: Final = 3  # turns stating one preference before it is a lesson
MAX_CHANGE_STEPS: Final = 6  # values of an attribute shown in a change lesson
#: Kinds these functions write; they never read them as evidence.
GENERATED_KINDS: Final = frozenset({Kind.SUMMARY, Kind.REFLECTION})

_VALUED_KINDS: Final = (Kind.FACT, Kind.PREFERENCE)
_WORD: Final = re.compile(r"\w+")
_TOOL_OF: Final = re.compile(r"^Tool (?P<tool>.+?) (?:failed|returned): ")
_CORRECTED: Final = re.compile(r"^.{1,80}? corrected the assistant: ")
_ROLE_NAMES: Final = {"assistant": "the assistant", "system": "the system"}
Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Draft:
    """A summary or reflection about to be written, before it has an id.

    ``key`` names what it is about ("summary:s1", "tool_failure:weather"): a later
    draft with the same key updates or supersedes it instead of adding another.
    ``evidence`` is what it is derived from, so forgetting all of that forgets it.
    """

    key: str
    kind: Kind
    content: str
    evidence: tuple[str, ...]
    observed_at: datetime
    confidence: float
    session_id: str | None = None
    query_hints: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Changes:
    """What :func:`reconcile` decided: the writes, and the memory holding each draft."""

    insert: list[Memory] = field(default_factory=list)
    rewrite: list[Memory] = field(default_factory=list)  # same key and evidence, new text
    retire: list[Memory] = field(default_factory=list)  # superseded by an insert
    current: list[Memory] = field(default_factory=list)  # one per draft, in order
    changed: list[Memory] = field(default_factory=list)  # inserts and rewrites, in order

    def rows(
        self, vectors: Sequence[Vector]
    ) -> tuple[list[tuple[Memory, Vector]], list[tuple[Memory, Vector | None]]]:
        """The store's insert and update rows, given one vector per :attr:`changed` memory."""
        by_id = dict(zip((m.id for m in self.changed), vectors, strict=True))
        inserts = [(m, by_id[m.id]) for m in self.insert]
        updates = [(m, by_id.get(m.id)) for m in [*self.rewrite, *self.retire]]
        return inserts, updates


# -- helpers -----------------------------------------------------------------------------
def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?\u2026" else text + "."


def _date(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).lower().encode("utf-8")).hexdigest()[:16]


def _tags(m: Memory) -> set[str]:
    tags = m.metadata.get("tags")
    return {t for t in tags if isinstance(t, str)} if isinstance(tags, list) else set()


def _role(m: Memory) -> str:
    role = m.metadata.get("role")
    return role if isinstance(role, str) else ROLE_OF_SOURCE[m.provenance.source]


def _tool(m: Memory) -> str:
    """The tool a tool result came from (the extractor puts it first among the hints)."""
    if m.query_hints:
        return m.query_hints[0]
    found = _TOOL_OF.match(m.content)
    return found["tool"] if found else "tool"


def _usable(m: Memory) -> bool:
    return m.status is Status.ACTIVE and m.kind not in GENERATED_KINDS


def _span(times: Sequence[datetime]) -> str:
    first, last = _date(min(times)), _date(max(times))
    return f"on {first}" if first == last else f"between {first} and {last}"


def _unique(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids))


# -- summaries -----------------------------------------------------------------------------
def summarize_session(
    session_id: str, episodes: Sequence[Memory], related: Iterable[Memory]
) -> Draft:
    """One summary of a session: who took part, when, its key points and notable turns.

    ``episodes`` are the session's turns, oldest first; ``related`` the memories
    derived from them or stored for the session (summaries, reflections, repeats
    and inactive memories are skipped). The text is at most
    :data:`MAX_SUMMARY_CHARS` characters; the summary derives from the turns.
    """
    if not episodes:
        raise ValidationError("a summary needs at least one turn")
    unique = {m.id: m for m in related if _usable(m) and m.kind is not Kind.EPISODE}
    # sorted on what they say, so the summary does not depend on the order they came in
    derived = sorted(unique.values(), key=lambda m: (m.observed_at, m.content, m.id))
    names = _speakers(episodes, derived)
    people = list(dict.fromkeys(names.values()))
    first, last = min(e.observed_at for e in episodes), max(e.observed_at for e in episodes)
    count = f"{len(episodes)} turn{'' if len(episodes) == 1 else 's'}"
    header = f"Summary of session {session_id}: {count} {_when(first, last)} by {_and(people)}."
    points = _key_points(derived, {e.id: i for i, e in enumerate(episodes)})
    covered = {p for m in points for p in m.provenance.derived_from}
    quotes = _salient([e for e in episodes if e.id not in covered])
    text, shown_points, shown_quotes = _fit(
        header,
        [_point(m) for m in points],
        [f'- {names[e.id]}: "{_clip(e.content, MAX_TURN_CHARS)}"' for e in quotes],
    )
    return Draft(
        key=f"summary:{session_id}",
        kind=Kind.SUMMARY,
        content=text,
        evidence=tuple(e.id for e in episodes),
        observed_at=last,
        confidence=0.9,
        session_id=session_id,
        query_hints=(f"summary of session {session_id}", "what did we talk about", *people),
        metadata={
            "turns": len(episodes),
            "participants": people,
            "started_at": first.isoformat(),
            "ended_at": last.isoformat(),
            "key_points": shown_points,
            "omitted_points": len(points) - shown_points,
            "notable_turns": shown_quotes,
            "max_chars": MAX_SUMMARY_CHARS,
        },
    )


def _when(first: datetime, last: datetime) -> str:
    first, last = first.astimezone(UTC), last.astimezone(UTC)
    if first == last:
        return f"at {first:%Y-%m-%d %H:%M} UTC"
    if first.date() == last.date():
        return f"on {first:%Y-%m-%d} from {first:%H:%M} to {last:%H:%M} UTC"
    return f"from {first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC"


def _and(names: Sequence[str]) -> str:
    shown = [_clip(n, 40) for n in names[:MAX_PARTICIPANTS]]
    if len(names) > len(shown):
        shown.append(f"{len(names) - len(shown)} others")
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _speakers(episodes: Sequence[Memory], derived: Sequence[Memory]) -> dict[str, str]:
    """Who said each turn: the speaker's name, else the role, with the user's or tool's name."""
    turn_ids = {e.id for e in episodes}
    tools = {
        parent: _tool(m)
        for m in derived
        if m.kind is Kind.TOOL_RESULT
        for parent in m.provenance.derived_from
        if parent in turn_ids
    }
    # the user's own turns carry no speaker; "I'm Caroline" gave a name fact
    named = [m for m in derived if m.attribute == "name" and not m.provenance.speaker]
    user = f"{_clip(_value(named[-1]), 40)} (the user)" if named else "the user"
    labels = {}
    for e in episodes:
        role = _role(e)
        if e.provenance.speaker:
            labels[e.id] = e.provenance.speaker
        elif role == "tool":
            labels[e.id] = f"the tool {tools[e.id]}" if e.id in tools else "a tool"
        else:
            labels[e.id] = user if role == "user" else _ROLE_NAMES.get(role, role)
    return labels


def _priority(m: Memory) -> int:
    tags = _tags(m)
    if "correction" in tags:
        return 0
    if "tool_failure" in tags:
        return 1
    if m.kind is Kind.FACT and m.attribute:
        return 2
    if m.kind is Kind.PREFERENCE:
        return 3
    return 4 if m.kind in (Kind.FACT, Kind.EXPERIENCE) else 5


def _key_points(derived: Sequence[Memory], position: Mapping[str, int]) -> list[Memory]:
    """What the session established, most important first, then in the order it was said.

    A value replaced later in the same session gives way to the one that replaced it.
    """
    ids = {m.id for m in derived}
    kept: dict[str, Memory] = {}
    for m in derived:
        if m.superseded_by not in ids:
            kept.setdefault(m.content.lower(), m)

    def order(m: Memory) -> tuple[int, int, datetime, str]:
        said = [position[p] for p in m.provenance.derived_from if p in position]
        return _priority(m), min(said, default=len(position)), m.observed_at, m.content

    return sorted(kept.values(), key=order)


def _point(m: Memory) -> str:
    text = _CORRECTED.sub("", m.content)
    if "correction" in _tags(m):
        text = f"Correction: {text}"
    return "- " + _sentence(_clip(text, MAX_POINT_CHARS))


def _salience(e: Memory) -> float:
    """How much a turn says: names and numbers first, then length; user turns first."""
    words = _WORD.findall(e.content)
    if len(words) < 4:
        return 0.0  # "ok, thanks!"
    named = {
        w.lower()
        for i, w in enumerate(words)
        if w != "I" and ((i > 0 and w[0].isupper()) or any(c.isdigit() for c in w))
    }
    return len(named) + min(len(words), 40) / 20 + (1.0 if _role(e) == "user" else 0.0)


def _salient(episodes: Sequence[Memory]) -> list[Memory]:
    """The turns most worth quoting, in the order they were said."""
    scores = [_salience(e) for e in episodes]
    ranked = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))
    return [episodes[i] for i in sorted(ranked[:MAX_SALIENT_TURNS])]


def _take(items: Sequence[str], room: int) -> list[str]:
    """The leading items that fit in ``room`` characters, one line each."""
    taken: list[str] = []
    for item in items:
        room -= len(item) + 1
        if room < 0:
            break
        taken.append(item)
    return taken


def _fit(header: str, points: Sequence[str], quotes: Sequence[str]) -> tuple[str, int, int]:
    """The header and as many points, then quotes, as fit in :data:`MAX_SUMMARY_CHARS`.

    Returns the text and how many points and quotes it holds.
    """
    lines = [_clip(header, MAX_SUMMARY_CHARS // 3)]
    room = MAX_SUMMARY_CHARS - len(lines[0])
    title, more_room = "Key points:", 40  # the "(N more ...)" line must still fit
    kept = _take(points, room - len(title) - 1 - more_room)
    if kept:
        lines += [title, *kept]
    if len(kept) < len(points):
        lines.append(f"({len(points) - len(kept)} more key points not shown)")
    room = MAX_SUMMARY_CHARS - len("\n".join(lines))
    title = "Notable turns:"
    quoted = _take(quotes, room - len(title) - 1)
    if quoted:
        lines += [title, *quoted]
    return "\n".join(lines), len(kept), len(quoted)


# -- reflections --------------------------------------------------------------------------
class _Pool:
    """The memories a reflection may cite, indexed for the lessons below."""

    def __init__(self, memories: Iterable[Memory]) -> None:
        self.by_id = {m.id: m for m in memories if _usable(m)}
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
            if _role(prev) == "assistant":
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
        evidence = _unique(i for m in members for i in (m.id, *m.provenance.derived_from))
        sessions = {m.provenance.session_id for m in members if m.kind is not Kind.EPISODE}
        when = [self.by_id[i].observed_at for i in evidence if i in self.by_id]
        return Draft(
            key=key,
            kind=Kind.REFLECTION,
            content=_clip(content, MAX_REFLECTION_CHARS),
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
        if m.kind is Kind.TOOL_RESULT and "tool_failure" in _tags(m):
            failures.setdefault(_tool(m), []).append(m)
    drafts = []
    for tool, found in failures.items():
        # a failure said again is merged into one memory citing each turn
        count = sum(max(1, len(m.provenance.derived_from)) for m in found)
        if count < MIN_TOOL_FAILURES:
            continue
        times = [t for m in found for t in pool.times(m)]
        latest = max(found, key=lambda m: (max(pool.times(m)), m.content))
        error = _TOOL_OF.sub("", latest.content)
        content = (
            f"{'An unnamed tool' if tool == 'tool' else f'The tool {tool}'} is unreliable: "
            f"it failed {count} times {_span(times)}. "
            f"Latest error: {_sentence(_clip(error, 200))} Check its input before calling it, "
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
                    "lesson": "tool_failure",
                    "tool": tool,
                    "failures": count,
                    "latest_error": _clip(error, 200),
                    "first_at": min(times).isoformat(),
                    "latest_at": max(times).isoformat(),
                },
            )
        )
    return drafts


def _value(m: Memory) -> str:
    value = m.metadata.get("value")
    return value if isinstance(value, str) and value.strip() else m.content


def _correction_lessons(pool: _Pool) -> list[Draft]:
    groups: dict[str, list[Memory]] = {}
    for m in pool.derived():
        if "correction" in _tags(m):
            who = m.provenance.speaker or ""
            key = f"{m.kind.value}:{m.attribute}:{who}" if m.attribute else _digest(who, m.content)
            groups.setdefault(f"correction:{key}", []).append(m)
    drafts = []
    for key, found in groups.items():
        found.sort(key=lambda m: (max(pool.times(m)), pool.later(m), m.content))
        right = found[-1]
        ids = {m.id for m in found}
        replaced = [m for m in pool.derived() if m.superseded_by in ids and m.id not in ids]
        wrong = [m for m in [*replaced, *found[:-1]] if _value(m).lower() != _value(right).lower()]
        said = pool.said_before(right)
        who = right.provenance.speaker or "The user"
        content = f"{who} corrected the assistant: {_sentence(_CORRECTED.sub('', right.content))}"
        if wrong:
            held = "; ".join(dict.fromkeys(_clip(m.content, 120) for m in wrong))
            content += f" Previously recorded, and wrong: {held}."
        if said is not None:
            content += f' The assistant had said: "{_clip(said.content, MAX_TURN_CHARS)}".'
        if right.valid_to is not None:
            content += f" (This changed again on {_date(right.valid_to)}.)"
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
                    "lesson": "correction",
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
            if steps and _value(steps[-1][0]).lower() == _value(m).lower():
                steps[-1].append(m)
            else:
                steps.append([m])
        if len(steps) < 2 or all("correction" in _tags(run[0]) for run in steps[1:]):
            continue  # only corrections: the value was wrong, it did not change
        label = attribute.replace(":", " ").replace("_", " ")
        shown = [
            f"{_clip(_value(run[0]), 60)} ({_date(run[0].observed_at)}"
            f"{', a correction' if i and 'correction' in _tags(run[0]) else ''})"
            for i, run in enumerate(steps)
        ][-MAX_CHANGE_STEPS:]
        current = steps[-1][-1]
        content = (
            f"{who or 'The user'}'s {label} changed over time: {' -> '.join(shown)}. "
            f"Now: {_sentence(current.content)} "
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
                    "values": [_value(run[0]) for run in steps],
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
        said = f"{m.content} (stated {mentions} times {_span(pool.times(m))})"
        if m.valid_to is None:
            content = f"Lasting preference: {said}. Follow it without being asked again."
        else:
            content = f"Former preference: {said}; it no longer holds since {_date(m.valid_to)}."
        drafts.append(
            pool.lesson(
                f"preference:{_digest(m.provenance.speaker or '', m.content)}",
                content,
                [m],
                confidence=0.5 + 0.1 * mentions,
                hints=("lasting preferences", *m.query_hints),
                metadata={"lesson": "preference", "preference": m.content, "mentions": mentions},
            )
        )
    return drafts


# -- writing -------------------------------------------------------------------------------
def reconcile(
    drafts: Sequence[Draft],
    existing: Iterable[Memory],
    *,
    owner: str,
    embedding_model: str,
    now: datetime,
) -> Changes:
    """Decide what each draft does to the stored memories of its key.

    The same text and evidence: nothing. No new evidence (say some was forgotten, or
    a count changed): the memory is rewritten in place. New evidence: a new memory
    supersedes the old one, which keeps its text with ``valid_to``/``superseded_by``.
    """
    stored = {m.metadata["key"]: m for m in existing if isinstance(m.metadata.get("key"), str)}
    out = Changes()
    for draft in drafts:
        metadata = {**draft.metadata, "key": draft.key, "generator": GENERATOR}
        old = stored.get(draft.key)
        if old is not None and _holds(old, draft, metadata):
            out.current.append(old)
            continue
        if old is not None and set(draft.evidence) <= set(old.provenance.derived_from):
            old.content, old.confidence, old.metadata = draft.content, draft.confidence, metadata
            old.query_hints, old.observed_at = list(draft.query_hints), draft.observed_at
            old.provenance.derived_from = list(draft.evidence)
            old.provenance.session_id = draft.session_id
            old.updated_at = now
            out.rewrite.append(old)
            out.changed.append(old)
            out.current.append(old)
            continue
        new = Memory(
            id=new_id(),
            owner=owner,
            kind=draft.kind,
            content=draft.content,
            confidence=draft.confidence,
            provenance=Provenance(
                source=Source.SYSTEM,
                session_id=draft.session_id,
                derived_from=list(draft.evidence),
            ),
            observed_at=draft.observed_at
            if old is None
            else max(draft.observed_at, old.observed_at),
            created_at=now,
            updated_at=now,
            query_hints=list(draft.query_hints),
            embedding_model=embedding_model,
            metadata=metadata,
        )
        new.valid_from = new.observed_at
        if old is not None:
            retired, _ = supersede(old, new, now=now)  # new is never the older: see above
            out.retire.append(retired)
        out.insert.append(new)
        out.changed.append(new)
        out.current.append(new)
    return out


def _holds(old: Memory, draft: Draft, metadata: Mapping[str, Any]) -> bool:
    """Whether a stored memory already says exactly what the draft says."""
    return (
        old.content == draft.content
        and set(old.provenance.derived_from) == set(draft.evidence)
        and old.metadata == metadata
        and old.confidence == draft.confidence
        and old.query_hints == list(draft.query_hints)
        and old.provenance.session_id == draft.session_id
    )
