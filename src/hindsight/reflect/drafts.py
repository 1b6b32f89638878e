"""What the summaries and lessons are drafted into, and the helpers they share."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from hindsight.models import ROLE_OF_SOURCE, TAG_VALUES, Kind, Memory, Status, Tag

MAX_TURN_CHARS: Final = 160  # one quoted turn
#: Kinds these modules write; they never read them as evidence.
GENERATED_KINDS: Final = frozenset({Kind.SUMMARY, Kind.REFLECTION})


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


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def sentence(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?\u2026" else text + "."


def day(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d")


def digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).lower().encode("utf-8")).hexdigest()[:16]


def tags_of(m: Memory) -> set[Tag]:
    tags = m.metadata.get("tags")
    return {Tag(t) for t in tags if t in TAG_VALUES} if isinstance(tags, list) else set()


def role_of(m: Memory) -> str:
    role = m.metadata.get("role")
    return role if isinstance(role, str) else ROLE_OF_SOURCE[m.provenance.source]


def tool_of(m: Memory) -> str:
    """The tool a tool result came from, as the extractor recorded it."""
    tool = m.metadata.get("tool")
    if isinstance(tool, str) and tool:
        return tool
    return m.query_hints[0] if m.query_hints else "tool"  # stored before "tool" was


def detail_of(m: Memory) -> str:
    """What a tool result or correction says, without the wording around it."""
    detail = m.metadata.get("detail")
    return detail if isinstance(detail, str) and detail.strip() else m.content


def usable(m: Memory) -> bool:
    return m.status is Status.ACTIVE and m.kind not in GENERATED_KINDS


def span(times: Sequence[datetime]) -> str:
    first, last = day(min(times)), day(max(times))
    return f"on {first}" if first == last else f"between {first} and {last}"


def unique(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids))


def value_of(m: Memory) -> str:
    value = m.metadata.get("value")
    return value if isinstance(value, str) and value.strip() else m.content
