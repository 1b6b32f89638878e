"""BEAM (mohammadtavakoli78/BEAM): a folder of ``<n>/chat.json`` and
``<n>/probing_questions/probing_questions.json``.

Messages lose their trailing index markers (" ->-> 1,1"), times come from the batches'
and messages' anchors, and a knowledge update keeps its updated and original evidence
apart (:attr:`~hindsight.bench.datasets.shape.Question.ordered`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

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

# Each user message ends in an index marker such as ' ->-> 1,1' (also '1,N/A', '5,14)').
_MARKER: Final = re.compile(r"\s*->->[\s\d,]*(?:N/A)?\)?\s*\Z")
_TIME_FORMATS: Final = (
    "%B-%d-%Y",
    "%b-%d-%Y",
    "%B %d, %Y",
    "%b %d, %Y",
    "%d %B %Y",
    "%d %B, %Y",
    "%Y-%m-%d",
    "%m/%d/%Y",
)


def parse_beam_time(value: object) -> datetime | None:
    """'March-15-2024' (and a few other date spellings, or ISO 8601) as UTC; else None."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = " ".join(value.split())
    for fmt in _TIME_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def strip_marker(text: str) -> tuple[str, bool]:
    """The text without its trailing index marker, and whether there was one."""
    stripped = _MARKER.sub("", text)
    return stripped, stripped != text


def flatten_ids(value: object) -> tuple[list[str], int]:
    """Message ids from a list, a dict of lists, or any nesting of them, in order.

    Returns (ids, malformed count); ids are ints or digit strings.
    """
    out: list[str] = []
    bad = 0
    if isinstance(value, dict):
        for part in value.values():
            ids, b = flatten_ids(part)
            out.extend(ids)
            bad += b
    elif isinstance(value, list | tuple):
        for part in value:
            ids, b = flatten_ids(part)
            out.extend(ids)
            bad += b
    elif isinstance(value, int) and not isinstance(value, bool):
        out.append(str(value))
    elif isinstance(value, str) and value.strip().isdigit():
        out.append(str(int(value.strip())))
    elif value is not None:
        bad += 1
    return out, bad


def _beam_messages(turns: object) -> Iterator[object]:
    """The messages of a batch in order; ``turns`` may be a list of lists."""
    if not isinstance(turns, list):
        return
    for item in turns:
        if isinstance(item, list):
            yield from item
        else:
            yield item


def _beam_sessions(conv: Conversation, chat: object) -> None:
    if not isinstance(chat, list):
        raise ValidationError(f"BEAM conversation {conv.id}: chat.json is not a list of batches")
    last_time: datetime | None = None
    for index, batch in enumerate(chat, start=1):
        if not isinstance(batch, dict):
            conv.skipped["batch that is not an object"] += 1
            continue
        number = batch.get("batch_number", index)
        batch_time = _anchor(conv, batch.get("time_anchor"))
        turns: list[BenchTurn] = []
        for msg in _beam_messages(batch.get("turns")):
            turn = _beam_turn(conv, msg, batch_time or last_time)
            if turn is not None:
                turns.append(turn)
                last_time = turn.time or last_time
        if turns:
            conv.sessions.append(Session(f"b{number}", turns))
        else:
            conv.skipped["empty batch"] += 1


def _anchor(conv: Conversation, value: object) -> datetime | None:
    when = parse_beam_time(value)
    if when is None and value not in (None, ""):
        conv.skipped["unparseable time_anchor (ignored)"] += 1
    return when


def _beam_turn(conv: Conversation, msg: object, fallback: datetime | None) -> BenchTurn | None:
    if not isinstance(msg, dict):
        conv.skipped["message that is not an object"] += 1
        return None
    ids, _ = flatten_ids(msg.get("id"))
    content, role = msg.get("content"), msg.get("role")
    if len(ids) != 1 or not isinstance(content, str):
        conv.skipped["message without an id or content"] += 1
        return None
    text, had_marker = strip_marker(content)
    if had_marker:
        conv.repaired["index marker stripped from message"] += 1
    if not text.strip():
        conv.skipped["message without text"] += 1
        return None
    if role not in ("user", "assistant"):
        conv.repaired[f"role {role!r} read as 'user'"] += 1
        role = "user"
    return BenchTurn(
        turn_id=ids[0],
        role=role,
        speaker=None,
        text=text,
        time=_anchor(conv, msg.get("time_anchor")) or fallback,
    )


def _beam_questions(conv: Conversation, probing: object, known: set[str]) -> None:
    if not isinstance(probing, dict):
        raise ValidationError(f"BEAM conversation {conv.id}: probing_questions is not an object")
    for ability, items in probing.items():
        for item in items if isinstance(items, list) else []:
            question = _beam_question(conv, str(ability), item, known)
            if question is not None:
                conv.questions.append(question)


def _beam_question(
    conv: Conversation, ability: str, item: object, known: set[str]
) -> Question | None:
    if not isinstance(item, dict) or not str(item.get("question") or "").strip():
        conv.skipped["probing item without a question"] += 1
        return None
    source = item.get("source_chat_ids")
    ids, malformed = flatten_ids(source)
    if malformed:
        conv.skipped["evidence id that is not a message id (dropped)"] += malformed
    if not ids and not malformed:
        conv.skipped[f"question without evidence ({ability})"] += 1
        return None
    evidence = known_evidence(conv, ids, known, "message")
    if not evidence:
        return None
    ordered = None
    if isinstance(source, dict) and "updated_info" in source:
        ordered = {
            "updated": [i for i in flatten_ids(source.get("updated_info"))[0] if i in known],
            "original": [i for i in flatten_ids(source.get("original_info"))[0] if i in known],
        }
    return Question(str(item["question"]), evidence, ability, conv.id, ordered)


def _beam_folders(path: Path) -> list[Path]:
    if (path / "chat.json").is_file():
        return [path]  # one conversation given directly
    folders = [p for p in path.iterdir() if p.is_dir() and (p / "chat.json").is_file()]
    if not folders:
        raise ValidationError(f"{path} holds no BEAM conversation (no <n>/chat.json)")
    return sorted(
        folders,
        key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit() else 0, p.name),
    )


def load_beam(path: Path, *, limit: int | None = None) -> Dataset:
    """A folder of BEAM conversations, each ``<n>/chat.json`` with its probing questions."""
    folders = _beam_folders(path)
    conversations = []
    for folder in folders if limit is None else folders[:limit]:
        conv = Conversation(folder.name, [])
        _beam_sessions(conv, read_json(folder / "chat.json"))
        questions = folder / "probing_questions" / "probing_questions.json"
        if questions.is_file():
            _beam_questions(conv, read_json(questions), {t.turn_id for t in conv.turns})
        else:
            conv.skipped["conversation without probing_questions.json"] += 1
        conversations.append(conv)
    return Dataset("beam", conversations)
