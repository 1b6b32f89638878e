"""Loaders for public long-term-memory benchmarks, into one neutral shape.

Each loader reads a benchmark's own files and returns a :class:`Dataset`:
conversations of sessions of turns, and per conversation the questions whose
evidence is a set of turn ids. Nothing is dropped silently: every question,
evidence id or message that cannot be used is counted under a reason in
:attr:`Conversation.skipped`, and every repair (a malformed evidence id
normalised, an index marker stripped) in :attr:`Conversation.repaired`.

* LoCoMo (``locomo10.json``, snap-research/LoCoMo): :func:`load_locomo`.
* BEAM (a folder of ``<n>/chat.json`` and ``<n>/probing_questions/probing_questions.json``,
  mohammadtavakoli78/BEAM): :func:`load_beam`.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from hindsight.errors import ValidationError

LOCOMO_CATEGORIES: Final = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


@dataclass(frozen=True, slots=True)
class BenchTurn:
    """One message as the benchmark gives it; ``turn_id`` is what evidence names."""

    turn_id: str
    role: str  # "user" or "assistant"
    speaker: str | None
    text: str
    time: datetime | None


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    turns: list[BenchTurn]


@dataclass(frozen=True, slots=True)
class Question:
    """A question and the turn ids that hold its answer.

    ``ordered`` carries named evidence lists where their order matters, e.g.
    BEAM knowledge updates: ``{"updated": [...], "original": [...]}``.
    """

    text: str
    evidence: frozenset[str]
    group: str
    conversation_id: str
    ordered: dict[str, list[str]] | None = None


@dataclass(slots=True)
class Conversation:
    id: str
    sessions: list[Session]
    questions: list[Question] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> how many
    repaired: Counter[str] = field(default_factory=Counter)

    @property
    def turns(self) -> Iterator[BenchTurn]:
        for session in self.sessions:
            yield from session.turns


@dataclass(slots=True)
class Dataset:
    name: str
    conversations: list[Conversation]

    def head(self, limit: int | None) -> Dataset:
        """The first ``limit`` conversations (all when ``None``)."""
        kept = self.conversations if limit is None else self.conversations[:limit]
        return Dataset(self.name, kept)

    @property
    def questions(self) -> list[Question]:
        return [q for c in self.conversations for q in c.questions]

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for c in self.conversations for s in c.sessions)

    @property
    def skipped(self) -> Counter[str]:
        return sum((c.skipped for c in self.conversations), Counter())

    @property
    def repaired(self) -> Counter[str]:
        return sum((c.repaired for c in self.conversations), Counter())


def _read_json(path: Path) -> Any:
    try:
        with path.open("rb") as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    except UnicodeDecodeError:
        raise ValidationError(f"{path} is not UTF-8 text") from None


# -- LoCoMo --------------------------------------------------------------------------------
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


def _known(conv: Conversation, ids: list[str], known: set[str], unit: str) -> frozenset[str]:
    """The evidence ids that name a ``unit`` of the conversation; the rest are counted."""
    evidence = frozenset(i for i in ids if i in known)
    if unknown := len([i for i in ids if i not in known]):
        conv.skipped[f"evidence id matching no {unit} (dropped)"] += unknown
    if not evidence:
        conv.skipped[f"question whose evidence matches no {unit}"] += 1
    return evidence


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
    evidence = _known(conv, ids, known, "turn")
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
    data = _read_json(path)
    if not isinstance(data, list):
        raise ValidationError(f"{path} is not a LoCoMo file: expected a JSON list")
    items = data if limit is None else data[:limit]
    return Dataset("locomo", [_locomo_conversation(i, raw) for i, raw in enumerate(items)])


# -- BEAM ----------------------------------------------------------------------------------
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
    evidence = _known(conv, ids, known, "message")
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
        _beam_sessions(conv, _read_json(folder / "chat.json"))
        questions = folder / "probing_questions" / "probing_questions.json"
        if questions.is_file():
            _beam_questions(conv, _read_json(questions), {t.turn_id for t in conv.turns})
        else:
            conv.skipped["conversation without probing_questions.json"] += 1
        conversations.append(conv)
    return Dataset("beam", conversations)


# -- as people type ------------------------------------------------------------------------
# A sentence ends at . ! or ? before a space and a capital, digit or quote ("Dr. who" stays).
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")


def per_sentence(data: Dataset) -> Dataset:
    """``data`` as people type in a chat: each turn sent as several messages in a row, one
    per sentence, at its time. A question's evidence becomes every message of its turns
    ("D1:3" -> "D1:3.1", "D1:3.2", ...), as a real chat's evidence names the run of
    messages that makes one statement."""
    conversations = []
    for conv in data.conversations:
        pieces: dict[str, list[str]] = {}
        sessions = []
        for session in conv.sessions:
            turns = []
            for turn in session.turns:
                parts = [p for p in _SENTENCE_END.split(turn.text.strip()) if p.strip()]
                ids = [f"{turn.turn_id}.{i}" for i in range(1, len(parts) + 1)]
                pieces[turn.turn_id] = ids
                turns += [replace(turn, turn_id=i, text=p) for i, p in zip(ids, parts, strict=True)]
            sessions.append(Session(session.id, turns))
        questions = [
            replace(q, evidence=frozenset(p for t in q.evidence for p in pieces[t]), ordered=None)
            for q in conv.questions
        ]
        conversations.append(
            Conversation(
                conv.id, sessions, questions, Counter(conv.skipped), Counter(conv.repaired)
            )
        )
    return Dataset(f"{data.name}-sentences", conversations)


def one_owner(data: Dataset) -> Dataset:
    """``data`` as one long history: every conversation's sessions, in order, retained into
    one owner, and each question asked over all of it. The other conversations stand in
    for the rest of a long history, with look-alikes among them (BEAM's writing chats share
    a persona). Ids take their conversation's as a prefix ("conv-26:D1:3"); a question keeps
    its conversation, so figures by conversation and by half still read per conversation."""
    sessions: list[Session] = []
    questions: list[Question] = []
    for conv in data.conversations:
        at = f"{conv.id}:"
        for session in conv.sessions:
            turns = [replace(t, turn_id=at + t.turn_id) for t in session.turns]
            sessions.append(Session(at + session.id, turns))
        for q in conv.questions:
            ordered = q.ordered and {k: [at + i for i in ids] for k, ids in q.ordered.items()}
            evidence = frozenset(at + i for i in q.evidence)
            questions.append(replace(q, evidence=evidence, ordered=ordered))
    merged = Conversation("all", sessions, questions, data.skipped, data.repaired)
    return Dataset(f"{data.name}-one-owner", [merged])


LOADERS: Final = {"locomo": load_locomo, "beam": load_beam}


# How people type on a phone, for chat_typed: shorthand for common words, letters
# stretched for emphasis, dropped capitals and apostrophes, and typos of the four kinds
# the spelling-error literature counts (a letter left out, doubled, swapped with the
# next, or hit beside on the keyboard).
_SHORTHAND: Final = {
    plain: short
    for plain, short in (
        pair.split(":")
        for pair in (  # noqa: SIM905
            "you:u|your:ur|you're:ur|are:r|with:w|because:bc|tomorrow:tmrw|tonight:tonite|"
            "birthday:bday|please:pls|thanks:thx|really:rly|though:tho|picture:pic|pictures:pics|"
            "people:ppl|about:abt|something:smth|probably:prob|definitely:def|favorite:fave|"
            "favourite:fave|awesome:awsm|before:b4|great:gr8|okay:ok|going to:gonna|want to:wanna|"
            "got to:gotta|kind of:kinda|right now:rn|i don't know:idk|to be honest:tbh|"
            "by the way:btw|oh my god:omg|boyfriend:bf|girlfriend:gf|brother:bro|sister:sis|"
            "video:vid|vacation:vacay|conversation:convo|information:info|minutes:mins|"
            "seriously:srsly"
        ).split("|")
    )
}
_SHORTHAND_RE: Final = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _SHORTHAND), key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_STRETCHABLE: Final = re.compile(
    r"\b(so|yes|wow|omg|love|cool|nice|good|great|lol|yay|hey|hi|no|please|thanks|sure|"
    r"amazing|awesome|fun|happy|sorry|glad|oh|ok|okay|hmm|aww|yeah|wait)\b",
    re.IGNORECASE,
)
_KEYBOARD: Final = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_KEYS: Final = {
    key: (row, col) for row, keys in enumerate(_KEYBOARD) for col, key in enumerate(keys)
}
_NEIGHBOURS: Final = {
    key: "".join(
        other
        for other, (r, c) in _KEYS.items()
        if other != key and abs(r - row) <= 1 and abs(c - col) <= 1
    )
    for key, (row, col) in _KEYS.items()
}
_LONG_WORD: Final = re.compile(r"\b[A-Za-z]{4,}\b")


@dataclass(frozen=True, slots=True)
class Typing:
    """How often each habit of chat typing strikes (chat_typed)."""

    lower: float = 0.5  # a message typed all in lower case, its last full stop left out
    apostrophe: float = 0.5  # a message's apostrophes left out ("dont", "im")
    shorthand: float = 0.5  # a word that has a shorthand typed as it ("u", "bday")
    stretch: float = 0.2  # an interjection stretched ("sooo", "yesss")
    typo: float = 0.03  # a word of four letters or more typed wrong once


def chat_typed(data: Dataset, typing: Typing | None = None, *, seed: int = 0) -> Dataset:
    """``data`` as people type on a phone (see :class:`Typing`); questions stay as written,
    as a question writer writes them. Each turn's noise depends on ``seed`` and its id
    alone, so a run is repeatable and a turn types the same in any subset."""
    typing = typing or Typing()

    def retype(turn: BenchTurn) -> BenchTurn:
        rng = random.Random(f"{seed}:{turn.turn_id}")
        text = _SHORTHAND_RE.sub(
            lambda m: (
                _SHORTHAND[m.group(1).lower()] if rng.random() < typing.shorthand else m.group(1)
            ),
            turn.text,
        )
        text = _STRETCHABLE.sub(
            lambda m: _stretch(m.group(1), rng) if rng.random() < typing.stretch else m.group(1),
            text,
        )
        text = _LONG_WORD.sub(
            lambda m: _typo(m.group(0), rng) if rng.random() < typing.typo else m.group(0), text
        )
        if rng.random() < typing.apostrophe:
            text = text.replace("'", "").replace("\u2019", "")
        if rng.random() < typing.lower:
            text = text.lower().removesuffix(".")
        return replace(turn, text=text)

    conversations = [
        Conversation(
            conv.id,
            [Session(s.id, [retype(t) for t in s.turns]) for s in conv.sessions],
            list(conv.questions),
            Counter(conv.skipped),
            Counter(conv.repaired),
        )
        for conv in data.conversations
    ]
    return Dataset(f"{data.name}-typed", conversations)


def _stretch(word: str, rng: random.Random) -> str:
    return word + word[-1] * rng.randint(2, 4)


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word))  # people rarely miss a word's first letter
    kind = rng.randrange(4)
    if kind == 0:  # left out
        return word[:i] + word[i + 1 :]
    if kind == 1:  # doubled
        return word[:i] + word[i] + word[i:]
    if kind == 2 and i < len(word) - 1 and word[i] != word[i + 1]:  # swapped with the next
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return word[:i] + rng.choice(_NEIGHBOURS[word[i].lower()]) + word[i + 1 :]
