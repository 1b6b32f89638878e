"""LoCoMo (``locomo10.json``, snap-research/LoCoMo), or any file in its layout.

Evidence ids are read with the file's quirks ("D:11:26", "D30:05", "D8:6; D9:17",
ranges such as "D12:3-D12:5"), each repair counted; a turn's photo caption is kept in
its text, and a turn may carry its own time (a real chat's export).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from hindsight.bench.datasets.beam import parse_beam_time
from hindsight.bench.datasets.shape import (
    BenchTurn,
    Conversation,
    Dataset,
    Question,
    Session,
    known_evidence,
    read_json,
)
from hindsight.errors import ValidationError

LOCOMO_CATEGORIES: Final = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


_SESSION_KEY: Final = re.compile(r"session_(\d+)")
_DIA_ID: Final = re.compile(r"D:?(\d+):(\d+)")
_EVIDENCE_SPLIT: Final = re.compile(r"[;,\s]+")
# a run of turns: "D12:3-D12:5", "D12:3-5", "D12:3 - D12:5" (a range over sessions is malformed)
_RANGE: Final = re.compile(r"D:?(\d+):(\d+)\s*[-\u2013]\s*(?:D:?(\d+):)?(\d+)")
MAX_RANGE: Final = 200  # turns one range may name; a longer one is malformed
_TURN_TIME_KEYS: Final = ("date_time", "timestamp", "time")  # a turn's own time, if given


def parse_locomo_time(value: object) -> datetime | None:
    """'1:56 pm on 8 May, 2023' as a UTC datetime, or a time as other files in LoCoMo's
    layout spell it (ISO 8601, 'March 15, 2024', ...: :func:`parse_beam_time`); else None."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y", "%d %B %Y"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return parse_beam_time(text)


def normalise_dia_id(raw: str) -> str | None:
    """'D:11:26' -> 'D11:26', 'D30:05' -> 'D30:5'; None when it is not a dialogue id."""
    m = _DIA_ID.fullmatch(raw.strip())
    return None if m is None else f"D{int(m[1])}:{int(m[2])}"


def split_evidence(items: object, order: Sequence[str] = ()) -> tuple[list[str], int]:
    """Evidence strings split on ';', ',' and spaces; returns (ids, malformed count).

    LoCoMo has entries such as 'D8:6; D9:17' and 'D9:1 D4:4 D4:6'. A range ("D12:3-D12:5")
    names every turn from its first to its last; one that runs into the next session
    ("D12:40-D13:2") is read over ``order``, the conversation's turn ids as they came.
    """
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list):
        return [], 0
    ids: list[str] = []
    malformed = 0
    for item in items:
        text, malformed = _expand_ranges(str(item), ids, malformed, order)
        for part in _EVIDENCE_SPLIT.split(text):
            if not part:
                continue
            norm = normalise_dia_id(part)
            if norm is None:
                malformed += 1
            else:
                ids.append(norm)
    return ids, malformed


def _expand_ranges(
    text: str, ids: list[str], malformed: int, order: Sequence[str]
) -> tuple[str, int]:
    """Add the turns of each range in ``text`` to ``ids``; returns the rest of the text
    and the malformed count so far."""

    def expand(m: re.Match[str]) -> str:
        nonlocal malformed
        session, first, last = int(m[1]), int(m[2]), int(m[4])
        end = session if m[3] is None else int(m[3])
        if end == session:
            if 0 <= last - first < MAX_RANGE:
                ids.extend(f"D{session}:{turn}" for turn in range(first, last + 1))
            else:
                malformed += 1
            return " "
        ends = (f"D{session}:{first}", f"D{end}:{last}")  # across sessions: rare
        start, stop = (order.index(e) if e in order else -1 for e in ends)
        if start >= 0 and 0 <= stop - start < MAX_RANGE:
            ids.extend(order[start : stop + 1])  # in the order the turns came
        else:
            malformed += 1
        return " "

    return _RANGE.sub(expand, text), malformed


def _locomo_turn(raw: object, session_time: datetime | None) -> BenchTurn | None:
    if not isinstance(raw, dict):
        return None
    dia_id, text = raw.get("dia_id"), raw.get("text")
    if not isinstance(dia_id, str) or not isinstance(text, str):
        return None
    caption = raw.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        text = f"{text} [shares a photo: {caption.strip()}]"
    if not text.strip():
        return None
    speaker = raw.get("speaker")
    # LoCoMo dates its sessions; a real chat's export may date each message, and its
    # times tell which messages were sent in a row
    own = next((t for key in _TURN_TIME_KEYS if (t := parse_locomo_time(raw.get(key)))), None)
    return BenchTurn(
        turn_id=normalise_dia_id(dia_id) or dia_id.strip(),
        role="user",  # both sides of a LoCoMo chat are people; the name tells them apart
        speaker=speaker if isinstance(speaker, str) and speaker.strip() else None,
        text=text,
        time=own or session_time,
    )


def _locomo_conversation(index: int, raw: object) -> Conversation:
    if not isinstance(raw, dict) or not isinstance(raw.get("conversation"), dict):
        raise ValidationError(f"LoCoMo item {index} has no 'conversation' object")
    conv_id = str(raw.get("sample_id") or f"conv-{index}")
    body: dict[str, Any] = raw["conversation"]
    conv = Conversation(conv_id, [])
    numbers = sorted(int(m[1]) for key in body if (m := _SESSION_KEY.fullmatch(key)))
    for n in numbers:
        when = parse_locomo_time(body.get(f"session_{n}_date_time"))
        if when is None:
            conv.skipped["session date-time missing or unparseable (turns kept without time)"] += 1
        turns_raw = body[f"session_{n}"]
        turns: list[BenchTurn] = []
        for item in turns_raw if isinstance(turns_raw, list) else []:
            turn = _locomo_turn(item, when)
            if turn is None:
                conv.skipped["turn without dia_id or text"] += 1
            else:
                turns.append(turn)
        if turns:
            conv.sessions.append(Session(f"session_{n}", turns))
        else:
            conv.skipped["empty session"] += 1
    order = [t.turn_id for t in conv.turns]
    known = set(order)
    for item in raw.get("qa") or []:
        question = _locomo_question(conv, item, order, known)
        if question is not None:
            conv.questions.append(question)
    return conv


def _locomo_question(
    conv: Conversation, item: object, order: Sequence[str], known: set[str]
) -> Question | None:
    if not isinstance(item, dict) or not str(item.get("question") or "").strip():
        conv.skipped["QA item without a question"] += 1
        return None
    raw_evidence = item.get("evidence")
    if not raw_evidence:
        conv.skipped["question without evidence"] += 1
        return None
    ids, malformed = split_evidence(raw_evidence, order)
    as_given = raw_evidence if isinstance(raw_evidence, list) else [raw_evidence]
    if malformed or len(ids) != len(as_given) or any(i not in as_given for i in ids):
        conv.repaired["QA item with malformed evidence normalised"] += 1
    if malformed:
        conv.skipped["evidence string that is not a dialogue id"] += malformed
    evidence = known_evidence(conv, ids, known, "turn")
    if not evidence:
        return None
    category = item.get("category")
    group = (
        LOCOMO_CATEGORIES.get(category, f"category-{category}")
        if isinstance(category, int)
        else f"category-{category}"
    )
    return Question(str(item["question"]), evidence, group, conv.id)


def load_locomo(path: Path, *, limit: int | None = None) -> Dataset:
    """LoCoMo's ``locomo10.json``: a list of conversations with their QA items."""
    data = read_json(path)
    if not isinstance(data, list):
        raise ValidationError(f"{path} is not a LoCoMo file: expected a JSON list")
    items = data if limit is None else data[:limit]
    return Dataset("locomo", [_locomo_conversation(i, raw) for i, raw in enumerate(items)])
