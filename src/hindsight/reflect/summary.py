"""A session's summary: who took part, when, its key points and notable turns."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Final

from hindsight.errors import ValidationError
from hindsight.models import Kind, Memory, Tag
from hindsight.reflect.drafts import (
    MAX_TURN_CHARS,
    Draft,
    clip,
    detail_of,
    role_of,
    sentence,
    tags_of,
    tool_of,
    usable,
    value_of,
)

#: A summary never exceeds this many characters, however long the session.
MAX_SUMMARY_CHARS: Final = 1_200
MAX_POINT_CHARS: Final = 200  # one key point of a summary
MAX_SALIENT_TURNS: Final = 3
MAX_PARTICIPANTS: Final = 6  # named in a summary; the rest are counted
_WORD: Final = re.compile(r"\w+")
_ROLE_NAMES: Final = {"assistant": "the assistant", "system": "the system"}


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
    unique = {m.id: m for m in related if usable(m) and m.kind is not Kind.EPISODE}
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
        [f'- {names[e.id]}: "{clip(e.content, MAX_TURN_CHARS)}"' for e in quotes],
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
    shown = [clip(n, 40) for n in names[:MAX_PARTICIPANTS]]
    if len(names) > len(shown):
        shown.append(f"{len(names) - len(shown)} others")
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _speakers(episodes: Sequence[Memory], derived: Sequence[Memory]) -> dict[str, str]:
    """Who said each turn: the speaker's name, else the role, with the user's or tool's name."""
    turn_ids = {e.id for e in episodes}
    tools = {
        parent: tool_of(m)
        for m in derived
        if m.kind is Kind.TOOL_RESULT
        for parent in m.provenance.derived_from
        if parent in turn_ids
    }
    # the user's own turns carry no speaker; "I'm Caroline" gave a name fact
    named = [m for m in derived if m.attribute == "name" and not m.provenance.speaker]
    user = f"{clip(value_of(named[-1]), 40)} (the user)" if named else "the user"
    labels = {}
    for e in episodes:
        role = role_of(e)
        if e.provenance.speaker:
            labels[e.id] = e.provenance.speaker
        elif role == "tool":
            labels[e.id] = f"the tool {tools[e.id]}" if e.id in tools else "a tool"
        else:
            labels[e.id] = user if role == "user" else _ROLE_NAMES.get(role, role)
    return labels


def _priority(m: Memory) -> int:
    tags = tags_of(m)
    if Tag.CORRECTION in tags:
        return 0
    if Tag.TOOL_FAILURE in tags:
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
    text = f"Correction: {detail_of(m)}" if Tag.CORRECTION in tags_of(m) else m.content
    return "- " + sentence(clip(text, MAX_POINT_CHARS))


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
    return len(named) + min(len(words), 40) / 20 + (1.0 if role_of(e) == "user" else 0.0)


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
    lines = [clip(header, MAX_SUMMARY_CHARS // 3)]
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
