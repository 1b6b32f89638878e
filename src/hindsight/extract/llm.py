"""LLM extraction: turns -> structured memories, by a model, checked before anything is kept.

:func:`messages` asks the model for the design's memory shape: each memory's kind
(preference, fact, experience, tool_result, instruction), one self-contained sentence
(names and relative dates resolved against the turn's time), a ``key`` naming the
subject and attribute it fills (which drives supersession), the questions it answers,
and a confidence. The model is shown the memories already kept that the turns may
update (:func:`messages`' ``known``), each under a label, and names one only when the
new memory clearly updates or contradicts it. :func:`read_answer` turns the validated
answer into :class:`~hindsight.extract.Extracted` items and drops what must not be
kept: statements the model tied to an assistant or system turn (an agent's own words
and system prompts are no user's facts), tool results not from a tool, anything below
``min_confidence``, and labels it was never shown. The answer is read leniently
(:data:`LENIENCY`, :mod:`hindsight.llm.lenient`): ``type`` for ``kind`` and the like,
and an item without a turn is tied to the turn it comes from (:func:`turn_of`). What
hindsight put into the prompt
itself (:data:`~hindsight.extract.base.PROMPT_BLOCK`: recalled memories) is cut from
the turns before they are sent, so it is never extracted again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any, Final

from hindsight.errors import ValidationError
from hindsight.extract.base import PROMPT_BLOCK, Extracted
from hindsight.llm import Leniency, Message
from hindsight.models import Kind, Memory, Turn

#: Part of each extraction job's id: a new prompt extracts the same turns again.
PROMPT_VERSION: Final = "extract-2"
MAX_MEMORIES: Final = 20
MAX_TURN_CHARS: Final = 2_000
MAX_ENTITIES: Final = 8  # entities, and relations, named by one memory
ENTITY_KINDS: Final = ("person", "place", "organization", "pet", "project", "other")
_KINDS: Final = {
    "preference": Kind.PREFERENCE,
    "fact": Kind.FACT,
    "experience": Kind.EXPERIENCE,
    "tool_result": Kind.TOOL_RESULT,
    "instruction": Kind.PREFERENCE,  # kept as a preference that governs some requests
}
_READ_ROLES: Final = frozenset({"user", "tool"})
_KEY: Final = re.compile(r"[^a-z0-9.]+")
_WORD: Final = re.compile(r"[a-z0-9]+")
# words that tie a memory to no turn in particular
_COMMON: Final = frozenset(
    {"the", "and", "for", "with", "that", "this", "was", "were", "has", "have", "had"}
    | {"not", "are", "but", "from", "user", "users"}
)

SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "memories": {
            "type": "array",
            "maxItems": MAX_MEMORIES,
            "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": sorted(_KINDS)},
                    "content": {"type": "string", "minLength": 3, "maxLength": 400},
                    "key": {"type": ["string", "null"], "maxLength": 120},
                    "value": {"type": ["string", "null"], "maxLength": 200},
                    "query_hints": {
                        "type": "array",
                        "maxItems": 5,
                        "items": {"type": "string", "maxLength": 200},
                    },
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "turn": {"type": "integer", "minimum": 0},
                    "updates": {"type": ["string", "null"], "maxLength": 20},
                    "applies_when": {"type": ["string", "null"], "maxLength": 200},
                    "entities": {
                        "type": "array",
                        "maxItems": MAX_ENTITIES,
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "minLength": 1, "maxLength": 120},
                                "kind": {"type": "string", "enum": list(ENTITY_KINDS)},
                                "aliases": {
                                    "type": "array",
                                    "maxItems": 8,
                                    "items": {"type": "string", "maxLength": 120},
                                },
                            },
                            "required": ["name", "kind"],
                            "additionalProperties": False,
                        },
                    },
                    "relations": {
                        "type": "array",
                        "maxItems": MAX_ENTITIES,
                        "items": {
                            "type": "array",
                            "minItems": 3,
                            "maxItems": 3,
                            "items": {"type": "string", "minLength": 1, "maxLength": 120},
                        },
                    },
                },
                "required": ["kind", "content", "confidence", "turn"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["memories"],
    "additionalProperties": False,
}

#: What models call an item's fields otherwise (each name means one field of this
#: schema, nothing else), and the field an item may leave out: its turn (:func:`turn_of`).
LENIENCY: Final = Leniency(
    aliases={
        "type": "kind",
        "memory_type": "kind",
        "category": "kind",
        "text": "content",
        "memory": "content",
        "statement": "content",
        "turn_index": "turn",
        "turn_id": "turn",
        "source_turn": "turn",
        "questions": "query_hints",
    },
    optional=frozenset({"turn"}),
)

SYSTEM: Final = """\
You extract long-term memories for an AI assistant from a conversation. Keep only what \
will still matter in later sessions: what the speakers state about themselves and the \
people, places and things in their lives (facts, plans, events they went through, \
preferences), instructions the user gives the assistant about how to work, and tool \
results worth knowing later. Keep nothing else: no greetings, no questions, no \
hypotheticals, nothing the assistant said or suggested, nothing from a system prompt.

For each memory give:
- kind: preference, fact, experience (something that happened), tool_result, or \
instruction (how the user wants the assistant to behave);
- content: one short sentence that stands on its own: name people instead of pronouns \
("{subject}'s son", never "my son"; a user turn without a name is {subject}), and turn \
relative times into dates from the turn's own date ("next Friday" said on 2024-05-01 is \
2024-05-03);
- key: what it is about, as subject.attribute ("{subject_key}.home_city", \
"evan.son_school"), for something that holds one value at a time; null for things that \
can hold many values (likes, events);
- value: the attribute's value when key is set, else null;
- query_hints: up to 3 short questions the memory answers;
- confidence: 0 to 1, how clearly the turn states it;
- turn: the number of the turn it comes from;
- updates: the label (such as "k2") of a known memory that this one updates, corrects \
or contradicts, only when it clearly does; else null;
- applies_when: for an instruction, the kind of request it governs ("deadlines"); else \
null;
- entities: the people, places, organizations, pets and projects the memory names, each \
with its kind and the other names the conversation gives it ({{"name": "Bartholomew \
Nowak", "kind": "person", "aliases": ["Uncle Bart"]}}); the user as {subject};
- relations: what the memory says links two of them, as [subject, relation, object] \
(["Tom", "coaches", "Falcons"], ["Anna", "niece of", "{subject}"]).
Answer {{"memories": []}} when nothing is worth keeping."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """What one extraction sends, and what its answer's labels refer to."""

    messages: tuple[Message, ...]
    known: dict[str, Memory] = field(default_factory=dict)  # label -> memory shown


def messages(
    turns: Sequence[Turn], known: Sequence[Memory], *, subject: str, zone: tzinfo
) -> Prompt:
    """The request for ``turns`` (dated in ``zone``), showing the ``known`` memories they
    may update. System turns are left out, and so is every :data:`PROMPT_BLOCK`."""
    lines = []
    for i, turn in enumerate(turns):
        if turn.role not in (*_READ_ROLES, "assistant"):
            continue  # a system prompt is nobody's statement
        text = " ".join(PROMPT_BLOCK.sub(" ", turn.content).split())[:MAX_TURN_CHARS]
        if not text:
            continue
        when = turn.observed_at and turn.observed_at.astimezone(zone)
        who = turn.speaker or (subject if turn.role == "user" else turn.role)
        if turn.role == "tool" and turn.tool_name:
            who = f"tool {turn.tool_name}"
        dated = when.strftime("%Y-%m-%d %H:%M (%A) ") if when else ""
        lines.append(f"[{i}] {dated}{turn.role}, {who}: {text}")
    labels = {f"k{n}": m for n, m in enumerate(known, start=1)}
    shown = [
        f"{label} ({m.kind.value}{', key ' + m.attribute if m.attribute else ''}): {m.content}"
        for label, m in labels.items()
    ]
    prompt = "Conversation:\n" + "\n".join(lines)
    if shown:
        prompt += "\n\nKnown memories (for updates):\n" + "\n".join(shown)
    system = SYSTEM.format(subject=subject, subject_key=key_of(subject) or "user")
    return Prompt((Message("system", system), Message("user", prompt)), labels)


@dataclass(slots=True)
class Reading:
    """What an answer yields: the memories to keep and how many items were dropped."""

    kept: list[Extracted] = field(default_factory=list)
    dropped: int = 0  # tied to a turn it may not come from, or malformed
    unsure: int = 0  # below the confidence threshold


def read_answer(
    value: Mapping[str, Any], turns: Sequence[Turn], prompt: Prompt, *, min_confidence: float
) -> Reading:
    """The memories worth keeping in a schema-valid answer (see the module's docstring)."""
    out = Reading()
    for item in value.get("memories", []):
        kind = item["kind"]
        index = item.get("turn")
        if index is None:
            index = turn_of(item["content"], kind, turns)
        turn = turns[index] if index is not None and index < len(turns) else None
        from_tool = turn is not None and turn.role == "tool"
        if (
            turn is None
            or turn.role not in _READ_ROLES
            or (kind == "tool_result") != from_tool
            or not PROMPT_BLOCK.sub(" ", turn.content).strip()
        ):
            out.dropped += 1
            continue
        if item["confidence"] < min_confidence:
            out.unsure += 1
            continue
        replaced = prompt.known.get(item.get("updates") or "")
        attribute = key_of(item.get("key"))
        if replaced is not None and replaced.attribute:
            attribute = replaced.attribute  # the slot it fills is the one it updates
        value_text = item.get("value")
        try:
            out.kept.append(
                Extracted(
                    kind=_KINDS[kind],
                    content=" ".join(item["content"].split()),
                    confidence=float(item["confidence"]),
                    turn_index=index,
                    attribute=attribute,
                    value=value_text.strip() or None if attribute and value_text else None,
                    query_hints=tuple(
                        h.strip() for h in item.get("query_hints") or () if h.strip()
                    ),
                    applies_when=(item.get("applies_when") or "").strip() or None
                    if kind == "instruction"
                    else None,
                    tool=turn.tool_name if kind == "tool_result" else None,
                    replaces=() if replaced is None else (replaced.id,),
                    entities=_entities(item),
                )
            )
        except ValidationError:
            out.dropped += 1
    return out


def _entities(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """The entities and relations an item names, as a memory keeps them (its metadata's
    ``entities``: :mod:`hindsight.entities` reads them beside the words)."""
    named = [
        {
            "name": " ".join(e["name"].split()),
            "kind": e["kind"],
            "aliases": [" ".join(a.split()) for a in e.get("aliases") or () if a.strip()],
        }
        for e in item.get("entities") or ()
        if e["name"].strip()
    ]
    links = [[" ".join(part.split()) for part in r] for r in item.get("relations") or ()]
    links = [r for r in links if all(r)]
    return {"named": named, "relations": links} if named or links else None


def turn_of(content: str, kind: str, turns: Sequence[Turn]) -> int | None:
    """The turn a memory that names none comes from: of the turns the model was shown,
    the one sharing the most words with ``content``, the latest on a tie; sharing none,
    the latest turn a memory of ``kind`` may come from (a tool's for a tool result, else
    a user's); None when there is none. A job covers several turns: the words say which
    one the model read, and the latest is the one whose time the memory should carry.
    An assistant's turn may win, and then the memory is dropped as any tied to one."""
    words = _words(content)
    shown = [
        (i, t)
        for i, t in enumerate(turns)
        if t.role in (*_READ_ROLES, "assistant") and PROMPT_BLOCK.sub(" ", t.content).strip()
    ]
    scored = [(len(words & _words(PROMPT_BLOCK.sub(" ", t.content))), i) for i, t in shown]
    best = max(scored, default=(0, -1))
    if best[0] > 0:
        return best[1]
    role = "tool" if kind == "tool_result" else "user"
    return max((i for i, t in shown if t.role == role), default=None)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _COMMON}


def key_of(text: object) -> str | None:
    """A key as the store keeps it: lower case, runs of other characters as ``_``."""
    if not isinstance(text, str):
        return None
    key = _KEY.sub("_", text.strip().lower()).strip("_.")[:80]
    return key or None
