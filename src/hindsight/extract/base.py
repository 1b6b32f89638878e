"""The extraction seam: turn a conversation into structured memory candidates.

An :class:`Extractor` reads turns and returns :class:`Extracted` statements; the
engine decides what to store (dedupe, supersession, review). Providers register
by name in :data:`registry`, built-ins the same way a plugin would.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from hindsight.errors import ValidationError
from hindsight.models import TAG_VALUES, Kind, Tag, Turn
from hindsight.registry import Registry

#: What hindsight or the agent put into a prompt, not what anyone said: recalled
#: memories, quoted as the README shows (``<memory id="..." ...>...</memory>``), and
#: system prompts or context pasted in. Extractors never read inside it.
PROMPT_BLOCK: Final = re.compile(
    r"<(system|memories|memory|context|instructions)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)
#: Kinds an extractor may produce; episodes are kept verbatim by the engine.
EXTRACTABLE_KINDS = frozenset({Kind.PREFERENCE, Kind.FACT, Kind.EXPERIENCE, Kind.TOOL_RESULT})


@dataclass(frozen=True, slots=True)
class Extracted:
    """One statement an extractor found in a turn.

    ``content`` is standalone and third person ("Alice lives in Berlin").
    ``attribute``/``value`` name a single-valued slot ("location" = "Berlin") so a
    later statement filling the same slot can supersede this one; multi-valued
    things (likes, experiences) leave them ``None``. ``applies_when`` is, for an
    instruction to the assistant, the kind of request it governs ("deadlines"):
    what a later request matches, so the memory is embedded as it. ``replaces`` names
    stored memories this statement updates or contradicts (an LLM extractor that was
    shown them says so): the write retires them, and nothing else. ``entities``: the
    entities and relations an LLM extractor read in it, kept in the memory's metadata.
    """

    kind: Kind
    content: str
    confidence: float
    turn_index: int
    attribute: str | None = None
    value: str | None = None
    query_hints: tuple[str, ...] = ()
    polarity: int = 1
    tags: tuple[Tag, ...] = ()
    applies_when: str | None = None
    tool: str | None = None
    detail: str | None = None
    replaces: tuple[str, ...] = ()
    entities: dict[str, Any] | None = None  # an LLM's: {"named": [...], "relations": [...]}

    def __post_init__(self) -> None:
        if self.kind not in EXTRACTABLE_KINDS:
            raise ValidationError(f"an extractor cannot produce kind {self.kind!r}")
        if not self.content.strip():
            raise ValidationError("extracted content is empty")
        if not (0.0 <= self.confidence <= 1.0) or math.isnan(self.confidence):
            raise ValidationError(f"confidence {self.confidence!r} is outside 0..1")
        if self.turn_index < 0:
            raise ValidationError(f"turn_index {self.turn_index} is negative")
        if self.polarity not in (1, -1):
            raise ValidationError(f"polarity must be 1 or -1, not {self.polarity!r}")
        if unknown := [t for t in self.tags if t not in TAG_VALUES]:
            known = ", ".join(sorted(TAG_VALUES))
            raise ValidationError(f"unknown tags {unknown!r}; known: {known}")
        # a plugin may hand plain strings: keep the enum
        object.__setattr__(self, "tags", tuple(Tag(t) for t in self.tags))


class Extractor(Protocol):
    """Finds preferences, facts, experiences and tool results in turns.

    ``subject`` names the speaker of turns that carry no ``speaker`` of their own
    (the engine passes e.g. ``"User"``). An extractor that cannot do its work raises
    :class:`~hindsight.errors.ExtractionError` (the engine wraps any other exception
    in one); nothing of the write is stored then.
    """

    name: str

    def extract(self, turns: Sequence[Turn], *, subject: str) -> list[Extracted]: ...


registry: Registry[Extractor] = Registry("extractor")
