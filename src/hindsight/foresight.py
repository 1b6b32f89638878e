"""Foresight: what lies ahead for an owner, read from what they said and when.

From dated statements ("the mechanic on Friday", "I owe Marek a reply", "choir every
other Thursday", "the lease ends on the 30th") :func:`foresee` keeps prospective items:
events with a date, commitments with or without one, routines and open goals. Dates
resolve against the time each statement was said, in the users' time zone
(:func:`hindsight.text.timewords.ahead`).

Why computed, not stored: the items are read from the owner's verbatim turns at call
time, in the order they were said. A later turn that moves an item ("pushed to next
week"), cancels it or reports it done then needs no write-time bookkeeping, works on
history imported out of order, on every store backend alike, and a forgotten turn takes
its items with it. Reading is linear in the owner's turns (about 0.25 s for 2,000 on
SQLite, BENCHMARKS.md); nothing is cached.

Only the owner's own words are read: their turns as the user, and memories stored as
said outright; not the assistant's turns (which echo and suggest), nor what an extractor
or a summary made of them.

Each statement is one of, in this order:

- a habit of the past ("used to ... every Friday"): nothing;
- a cancellation or a completion of an open item it names ("the dentist is cancelled",
  "paid the invoice"): the item closes;
- a move of an open item it names, to a day or by an amount ("pushed back two days");
- a new item: a routine, an event or commitment with a date ahead, an undated
  commitment ("I owe Marek a reply") or goal ("I want to learn Spanish"). A report of
  something past ("I went to the dentist on Friday") is none.

Pure functions: :class:`Statement` values in, :class:`Item` values out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Final, Literal

from hindsight.models import Kind, Memory, Source
from hindsight.text import timewords
from hindsight.text.timewords import Ahead, Recurrence

ItemKind = Literal["event", "commitment", "routine", "goal"]

__all__ = ["Item", "ItemKind", "Statement", "briefing", "foresee", "statements"]

DEFAULT_DAYS: Final = 14
MAX_DAYS: Final = 3_660


@dataclass(frozen=True, slots=True)
class Statement:
    """Something the owner said: a memory's id, its text and when it was said."""

    id: str
    text: str
    said: datetime  # aware


@dataclass(frozen=True, slots=True)
class Item:
    """One thing ahead: its words, when it is due (a day, a day and time, or None for
    an undated commitment or goal), its kind, the memories it came from, and how sure
    the reading is (0..1: a date is surer than a weekday, a weekday than none)."""

    content: str
    due: date | datetime | None
    kind: ItemKind
    memory_ids: tuple[str, ...]
    confidence: float

    @property
    def day(self) -> date | None:
        return self.due.date() if isinstance(self.due, datetime) else self.due


@dataclass(slots=True)
class _Open:
    """An item while statements are read: it may still move, close or repeat."""

    content: str
    kind: ItemKind
    words: frozenset[str]
    ids: list[str]
    sure: float
    day: date | None = None
    at: time | None = None
    every: Recurrence | None = None
    closed: bool = False
    said: list[datetime] = field(default_factory=list)


# -- the words that tell what a statement does ---------------------------------------------
def _words(*phrases: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(phrases) + r")\b", re.IGNORECASE)


_HABIT_PAST: Final = _words(r"used to", r"would always", r"back when", r"years ago")
_CANCELLED: Final = _words(
    r"cancel(?:l?ed|s|ling)?",
    r"call(?:ed)? (?:it |that |the \w+ )?off",
    r"(?:is|'s|are|'re|was) off",
    r"scrap(?:ped)?",
    r"no longer",
    r"(?:not|isn'?t|aren'?t|won'?t be) (?:going ahead|happening|on anymore)",
    r"not going anymore",
    r"(?:quit|quitting|stopped|stopping|dropped|dropping|gave up|give up|giving up|"
    r"skip(?:ping)?|ditch(?:ed|ing)?)",
    r"(?:don'?t|doesn'?t|no) need to",
    r"(?:'m|am|'re|are) not (?:going|coming|attending|doing|making it)",
    r"(?:won'?t|can'?t|cannot) (?:be )?(?:go|going|come|coming|make it|attend)",
    r"not (?:going|coming) after all",
    r"forget (?:about )?(?:the|it|that)",
)
_DONE: Final = _words(
    r"done",
    r"finished",
    r"completed",
    r"paid(?: off)?",
    r"sent",
    r"submitted",
    r"replied",
    r"returned",
    r"renewed",
    r"handed in",
    r"took care of",
    r"dealt with",
    r"sorted(?: out)?",
    r"fixed",
    r"wrote back",
    r"got back to",
    r"answered",
    r"picked up",
    r"signed",
    r"filed",
    r"settled",
    r"ticked off",
    r"all set",
    r"called",
    r"emailed",
    r"booked",
    r"bought",
    r"posted",
)
_MOVED: Final = _words(
    r"mov(?:e|ed|es|ing)",
    r"push(?:ed|es|ing)?",
    r"postpon(?:e|ed|es|ing)",
    r"reschedul(?:e|ed|es|ing)",
    r"delay(?:ed|s|ing)?",
    r"brought (?:\w+ ){0,3}(?:forward|up)",
    r"bump(?:ed)?",
    r"shift(?:ed)?",
    r"changed to",
    r"now (?:on|at|is|for)",
    r"instead",
    r"put off",
    r"actually",
    r"not (?:on )?(?:" + "|".join(timewords.WEEKDAYS) + ")",
)
_GOAL: Final = _words(
    r"(?:i|we) (?:really )?(?:want|would (?:like|love)|hope|plan|intend|aim|wish) to",
    r"(?:i|we)'d (?:really )?(?:like|love) to",
    r"(?:i'm|i am|we're|we are) (?:trying|hoping|planning|aiming) to",
    r"(?:my|our) (?:goal|aim|plan|resolution) (?:is|for)",
    r"(?:i'm|i am) (?:determined|going) to",
    r"(?:i|we)'ll finally",
)
_COMMITMENT: Final = _words(
    r"(?:i|we) (?:still |really )?(?:owe|must|should|need to|have to|promised|agreed to|"
    r"(?:'ve|have) got to|'ve to|ought to)",
    r"(?:i'm|i am|we're|we are) supposed to",
    r"(?:i'll|i will|we'll|we will) (?:\w+ )?(?:send|call|reply|write|pay|return|finish|submit|"
    r"email|fix|bring|book|get back|sort|renew|review|ring|text|let)",
    r"remind me to",
    r"^(?:still )?(?:need to|have to|gotta|got to|must|should)",
    r"(?:i|we) (?:still )?gotta",
    r"don'?t (?:let me )?forget to",
    r"(?:is|are) due",
    r"deadline",
    r"to-?do",
)
# a to-do said as an order to oneself: "Call the bank today", "Pick up the kids at 4"
_TODO: Final = re.compile(
    r"^(?:please )?(?:call|ring|phone|text|email|e-mail|message|pay|send|post|book|buy|order|"
    r"pick up|collect|drop off|return|renew|submit|finish|fix|water|clean|take|bring|get|"
    r"check|file|write|reply|answer|cancel|sign|print|pack|prepare|confirm|schedule|"
    r"feed|walk|mow|wash|tidy|sort|ask|tell|remind|invite|visit|see|meet|do)\b"
    r"(?!\s+(?:is|are|was|were|has|had|will|starts|ends|club|class|group|with)\b)",
    re.IGNORECASE,
)
_PAST: Final = re.compile(
    r"\b(?:was|were|had|went|did|got|came|saw|met|took|ate|ran|made|told|said|left|"
    r"spent|drove|flew|gave|visited|attended|enjoyed|finished|celebrated|played|watched|"
    r"sent|paid|bought|sold|wrote|spoke|found|heard|brought|thought|kept|lost|won|felt|"
    r"(?!need|feed|speed|seed|indeed|proceed|exceed|succeed|embed)[a-z]{3,}ed)\b",
    re.IGNORECASE,
)
_AHEAD_TENSE: Final = _words(
    r"will",
    r"'ll",
    r"going to",
    r"gonna",
    r"need to",
    r"have to",
    r"has to",
    r"must",
    r"should",
    r"due",
    r"is",
    r"are",
    r"am",
    r"'s",
    r"'re",
    r"owe",
    r"promised",
    r"plan",
    r"want",
    r"ends",
    r"starts",
    r"expires",
    r"(?:booked|scheduled|arranged|planned|set|signed up|registered|invited) (?:for|on|to|me)",
    r"got (?:tickets|a table|an appointment|a slot)",
    r"(?:booked|reserved|scheduled|arranged|registered|signed up|made an appointment)",
)
# a move that names no new day: the item stays open, undated
_OFF_ITS_DAY: Final = _words(
    r"postpon(?:e|ed|es|ing)",
    r"put off",
    r"on hold",
    r"delay(?:ed)?",
    r"reschedul(?:e|ed|ing)",
    r"(?:no|without a) (?:new )?date",
    r"tbc|tbd|to be confirmed",
)
_REMIND: Final = _words(r"remind me", r"don'?t let me forget")
# turns of phrase that promise nothing: "I must say the soup was great"
_IDIOM: Final = _words(
    r"i (?:must|have to|should|need to) (?:say|admit|confess|tell you)",
    r"i'll (?:say|admit|tell you what|be honest)",
    r"i (?:hope|want to say) (?:so|not|that you|you)",
)
_PRONOUN: Final = _words(r"it", r"that", r"this", r"them", r"those")
_SENTENCE: Final = re.compile(r"(?<=[.!?;])\s+|\n+|,? but\s+", re.IGNORECASE)
_LEAD: Final = re.compile(
    r"^(?:(?:oh|ok|okay|so|also|and|btw|by the way|anyway|well|hey|right|reminder|"
    r"heads up|fyi|note to self|quick update|update)\b[,:!\s-]*)+",
    re.IGNORECASE,
)
_STOP_WORDS: Final = (
    "a an the i me my we our us you your it "
    "its this that these those to of for on in at by "
    "with and or but is are am was were be been being "
    "'s 're 'm do does did have has had will 'll would "
    "should must can could need needs going gonna got get gets just "
    "really still now then so also too very up out off back "
    "over about from into next last this coming week weeks day days "
    "month months year years today tonight tomorrow morning evening afternoon night weekend "
    "time again instead later earlier sooner forward anymore no not one two "
    "three four five six seven eight nine ten a couple few end "
    "every each other moved move moves moving pushed push postponed postpone rescheduled "
    "reschedule delayed delay cancelled canceled cancel called off done finished completed all "
    "set sorted there here what when which who whom "
)
_STOP: Final = frozenset(_STOP_WORDS.split() + list(timewords.WEEKDAYS) + list(timewords.MONTHS))


_IRREGULAR: Final = {
    **{"sent": "send", "paid": "pay", "bought": "buy", "wrote": "write", "written": "write"},
    **{"took": "take", "taken": "take", "made": "make", "brought": "bring", "gave": "give"},
    **{"sold": "sell", "kept": "keep", "told": "tell", "met": "meet", "did": "do"},
}


def _stem(word: str) -> str:
    word = _IRREGULAR.get(word, word)
    if len(word) > 4 and word.endswith(("ied", "ies")):  # replied, replies: reply
        return word[:-3] + "y"
    for ending in ("ing", "ed", "es", "s", "e"):
        if len(word) > len(ending) + 3 and word.endswith(ending):
            return word[: -len(ending)]
    return word


def _key_words(text: str) -> frozenset[str]:
    """The words that name what a statement is about, stemmed: "the mechanic on Friday"
    is {"mechanic"}; "paid the invoice" and "pay the invoice" share "invoice"."""
    words = re.findall(r"[a-z][a-z'-]+|\d+", text.lower())
    return frozenset(_stem(w) for w in words if w not in _STOP and not w.isdigit())


def _clean(text: str) -> str:
    """The user's words for an item: the statement without a lead-in or an end stop."""
    text = _LEAD.sub("", text.strip()).strip(" ,;:-")
    text = text.rstrip(".!;, ")
    return text[:1].upper() + text[1:] if text else text


# -- reading the statements -------------------------------------------------------------------
class _Book:
    """The items read so far, in the order made, found by their key words: a statement
    is compared with the items it shares a word with, not with every one."""

    def __init__(self) -> None:
        self.items: list[_Open] = []
        self._by_word: dict[str, list[_Open]] = {}
        self._place: dict[int, int] = {}  # id(item) -> its place in items

    def add(self, item: _Open) -> None:
        self._place[id(item)] = len(self.items)
        self.items.append(item)
        for word in item.words:
            self._by_word.setdefault(word, []).append(item)

    def sharing(self, words: Iterable[str]) -> list[_Open]:
        """The open items sharing a word with ``words``, in the order made."""
        found = {id(i): i for w in words for i in self._by_word.get(w, ()) if not i.closed}
        return sorted(found.values(), key=lambda i: self._place[id(i)])

    def last_open(self, kinds: Sequence[ItemKind] | None = None) -> _Open | None:
        """The open item spoken of last (of ``kinds``, when some is)."""
        open_items = [i for i in self.items[-_RECENT:] if not i.closed]
        if kinds is not None:
            open_items = [i for i in open_items if i.kind in kinds] or open_items
        return max(open_items, key=lambda i: i.said[-1], default=None)


_RECENT: Final = 50  # "it" means one of the items made last


def _read(statements: Iterable[Statement], zone: tzinfo) -> list[_Open]:
    """Every item the statements make, in time order, with what later ones did to it."""
    book = _Book()
    for statement in sorted(statements, key=lambda s: s.said):
        said = statement.said.astimezone(zone)
        for sentence in _SENTENCE.split(statement.text):
            for clause in _clauses(sentence.strip()):
                _read_sentence(book, clause, said, statement.id)
    return book.items


_CLAUSE: Final = re.compile(r",\s*(?:and\s+|then\s+)?|\s+and\s+(?=(?:i|we|my|our|the)\b)", re.I)
_HEADING: Final = re.compile(r"^[^:]{1,25}:\s+")
_BULLET: Final = re.compile(r"^(?:[-*\u2022]|\d{1,2}[.)])\s+")


def _clauses(sentence: str) -> list[str]:
    """A sentence that names several plans, each with its own time ("the plumber is on
    Tuesday, Lena's recital on Thursday, and I must send the invoice by Friday"), as
    one clause each; any other sentence whole. A short heading ("Busy week:") goes."""
    sentence = _BULLET.sub("", sentence)
    heading = _HEADING.match(sentence)
    if heading and not timewords.ahead(heading.group(), date.min):  # "Tuesday: gym" stays
        sentence = sentence[heading.end() :]
    parts = [p.strip() for p in _CLAUSE.split(sentence) if p.strip()]
    if (
        len(parts) > 1
        and not timewords.recurrence(sentence, date.min)  # "every Friday, from this Friday"
        and all(timewords.ahead(p, date.min) and _key_words(p) for p in parts)
    ):
        return parts
    return [sentence] if sentence else []


def _read_sentence(items: _Book, text: str, said: datetime, mid: str) -> None:
    if _HABIT_PAST.search(text):
        return
    named = _named(items, text)
    when = timewords.ahead(text, said)
    if when is not None and when.past:
        when = None if _PAST.search(text) or not _AHEAD_TENSE.search(text) else when
    if named is not None and _CANCELLED.search(text):
        _close(named, mid, said)
        return
    if named is not None and _DONE.search(text) and not _is_ahead(text, when):
        _close(named, mid, said)
        return
    moved = _MOVED.search(text) or timewords.shift(text) is not None
    if named is not None and moved and _move(named, text, when, said, mid):
        return
    _new(items, text, when, said, mid)


def _is_ahead(text: str, when: Ahead | None) -> bool:
    """Whether ``text`` speaks of a time ahead: "booked the flight for Friday" books a
    plan, "booked the flight" completes one."""
    return when is not None and not when.past and (when.surely_ahead or _is_future(text))


def _is_future(text: str) -> bool:
    return bool(_AHEAD_TENSE.search(text)) or not _is_past(text)


_HAVE_GOT: Final = _words(r"(?:'ve|have|has|'s) got")


def _is_past(text: str) -> bool:
    """Whether ``text`` is in the past tense ("I've got band" is not)."""
    return bool(_PAST.search(_HAVE_GOT.sub("have", text)))


def _named(items: _Book, text: str) -> _Open | None:
    """The open item ``text`` speaks of: the one sharing most of its key words (the
    latest made on a tie), else, for "it" or "that", the item spoken of last."""
    words = _key_words(text)
    best, best_score = None, 0
    for item in items.sharing(words):
        if (shared := len(words & item.words)) >= best_score:
            best, best_score = item, shared
    if best is not None:
        return best
    if _PRONOUN.search(text):
        # what one completes is a commitment or a goal
        return items.last_open(_DOABLE if _DONE.search(text) else None)
    return None


_DOABLE: Final[tuple[ItemKind, ...]] = ("commitment", "goal")


def _close(item: _Open, mid: str, said: datetime) -> None:
    item.closed = True
    item.ids.append(mid)
    item.said.append(said)


def _move(item: _Open, text: str, when: Ahead | None, said: datetime, mid: str) -> bool:
    """Move ``item`` as ``text`` says: to a day it names, by an amount, or off its day
    ("postponed, no new date yet": open, undated); False if it says none of these."""
    by = timewords.shift(text)
    if by is not None and item.day is not None:
        item.day = item.day + by
    elif when is not None and when.week and item.day is not None:
        # "pushed to next week": the same weekday, a week after the one it was said in
        monday = said.date() + timedelta(days=7 - said.weekday())
        item.day = monday + timedelta(days=item.day.weekday())
    elif when is not None:
        item.day, item.sure = when.day, when.sure
        item.at = when.at or item.at
        if item.kind == "goal" and not when.deadline:
            item.kind = "event"
    elif _OFF_ITS_DAY.search(text) and item.every is None:
        item.day, item.at, item.sure = None, None, min(item.sure, 0.4)
    else:
        return False
    if item.kind == "routine":  # a routine moved once is a one-off on that day
        item.every = None
    item.ids.append(mid)
    item.said.append(said)
    return True


def _new(items: _Book, text: str, when: Ahead | None, said: datetime, mid: str) -> None:
    content, words = _clean(text), _key_words(text)
    if not content or not words or _IDIOM.search(text):
        return
    if text.rstrip().endswith("?") and not _REMIND.search(text):
        return  # "Should I book the dentist next week?" asks; "Can you remind me to" does not
    every = timewords.recurrence(text, said)
    if every is not None and not _is_past(text):
        for item in items.sharing(words):
            if item.kind == "routine" and _same(item.words, words):  # said again, or changed
                item.every, item.day, item.at = every, every.first, timewords.clock(text) or item.at
                item.ids.append(mid)
                item.said.append(said)
                return
        at = timewords.clock(text)
        items.add(_item(content, "routine", words, mid, said, 0.8, every.first, at=at, every=every))
        return
    if when is not None and not when.past:
        if not when.surely_ahead and not _is_future(text):
            return  # "I went to the dentist on Friday": a report of something past
        kind: ItemKind = "event"
        if _GOAL.search(text):
            kind = "goal"
        elif _COMMITMENT.search(text) or _TODO.search(content) or when.deadline:
            kind = "commitment"
        _append(items, _item(content, kind, words, mid, said, when.sure, when.day, at=when.at))
        return
    if when is None and _GOAL.search(text):
        _append(items, _item(content, "goal", words, mid, said, 0.4, None))
    elif when is None and _COMMITMENT.search(text):
        _append(items, _item(content, "commitment", words, mid, said, 0.5, None))


def _item(
    content: str,
    kind: ItemKind,
    words: frozenset[str],
    mid: str,
    said: datetime,
    sure: float,
    day: date | None,
    *,
    at: time | None = None,
    every: Recurrence | None = None,
) -> _Open:
    return _Open(content, kind, words, [mid], sure, day, at, every, said=[said])


def _same(these: frozenset[str], those: frozenset[str]) -> bool:
    """Whether two statements' key words name the same thing: half of the shorter's."""
    return len(these & those) >= max(1, min(len(these), len(those)) // 2)


def _append(items: _Book, new: _Open) -> None:
    """Add ``new``, or, when it says again an open item of the same kind and day, keep
    the item with this statement among its sources."""
    for item in items.sharing(new.words):
        if item.kind == new.kind and item.day == new.day and _same(item.words, new.words):
            item.ids.extend(new.ids)
            item.said.extend(new.said)
            item.sure = max(item.sure, new.sure)
            return
    items.add(new)


# -- what lies ahead ---------------------------------------------------------------------------
def foresee(
    statements: Iterable[Statement],
    *,
    now: datetime,
    days: int = DEFAULT_DAYS,
    zone: tzinfo,
) -> list[Item]:
    """The open items due from ``now``'s day to ``days`` days later (inclusive, in
    ``zone``), and the open undated ones; a routine once, at its next time in the
    horizon. Soonest first (undated last), then surest."""
    today = now.astimezone(zone).date()
    last = today + timedelta(days=min(days, (date.max - today).days))
    found = []
    for item in _read((s for s in statements if s.said <= now), zone):
        if item.closed:
            continue
        day = item.day
        if item.every is not None:
            try:
                day = item.every.next(today)
            except (ValueError, OverflowError):  # its next time is past the calendar's end
                continue
        if day is not None and not today <= day <= last:
            continue
        due: date | datetime | None = day
        if day is not None and item.at is not None:
            due = datetime.combine(day, item.at, tzinfo=zone)
        found.append(
            Item(
                content=item.content,
                due=due,
                kind=item.kind,
                memory_ids=tuple(dict.fromkeys(item.ids)),
                confidence=round(item.sure, 2),
            )
        )
    return sorted(found, key=_order)


def _order(item: Item) -> tuple[bool, date, time, float]:
    at = item.due.timetz().replace(tzinfo=None) if isinstance(item.due, datetime) else time.min
    return (item.day is None, item.day or date.max, at, -item.confidence)


def statements(memories: Iterable[Memory]) -> list[Statement]:
    """What the owner said, of ``memories``: their verbatim turns as the user, and what
    was stored as said outright (a fact or an experience given with its kind); not what
    an extractor, a summary or the assistant made of it, which would say it twice."""
    return [
        Statement(m.id, m.content, m.observed_at)
        for m in memories
        if m.provenance.source is Source.USER
        and (
            m.metadata.get("role", "user") == "user"
            if m.kind is Kind.EPISODE
            else m.kind in _STATED and not m.provenance.derived_from
        )
    ]


_STATED: Final = (Kind.FACT, Kind.EXPERIENCE, Kind.PREFERENCE)
"""The kinds a statement may be stored as directly; :data:`READ` adds the turns."""
READ: Final = (Kind.EPISODE, *_STATED)


def briefing(items: Sequence[Item]) -> str:
    """The items as a short text for the start of a session: one line each, soonest
    first, "nothing ahead" when there are none."""
    if not items:
        return "Nothing ahead."
    lines = ["Ahead:"]
    for item in items:
        when = "no date"
        if isinstance(item.due, datetime):
            when = f"{item.due:%a %d %b %H:%M}"
        elif item.due is not None:
            when = f"{item.due:%a %d %b}"
        lines.append(f"- {when}: {item.content} ({item.kind})")
    return "\n".join(lines)
