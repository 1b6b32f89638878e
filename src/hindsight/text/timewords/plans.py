"""Times ahead: the day a plan points to, the clock time it names, and how far it moved.

"The mechanic on Friday", "the lease ends on the 30th", "in ten days": :func:`ahead`
resolves the first time ahead a text names against the day it was said;
:func:`clock` reads a clock time ("at 3pm"), and :func:`shift` an amount a plan moved
by ("pushed back two days").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Final

from hindsight.text.timewords.dates import add_months, month_end, next_date, next_nth
from hindsight.text.timewords.vocabulary import (
    ANY_WEEKDAY,
    NUMBER,
    ORDINAL,
    count,
    month_number,
    named_month,
    weekday_number,
)

_DAY_NAME: Final = rf"(?:(?:{ANY_WEEKDAY}),? )?"  # "Friday the 27th", "Friday, 27 March"
_CLOCK: Final = re.compile(
    r"\b(?:at |@ ?)?(?:(?P<hour>\d{1,2})(?::(?P<minute>[0-5]\d))? ?(?P<half>am|pm|a\.m\.|p\.m\.)"
    r"|(?P<h24>[01]?\d|2[0-3]):(?P<m24>[0-5]\d)|(?P<noon>noon|midday))\b",
    re.IGNORECASE,
)
_AHEAD: Final = re.compile(
    rf"\b(?P<by>(?:by|before|until|no later than|due) )?(?:"
    r"(?P<iso>\d{4}-\d{2}-\d{2})"
    rf"|(?:on )?{_DAY_NAME}(?:the )?(?P<dm_day>\d{{1,2}}){ORDINAL}?(?: of)? "
    rf"{named_month('dm_month')}(?:,? (?P<dm_year>\d{{4}}))?"
    rf"|(?:on )?{_DAY_NAME}{named_month('md_month')} (?:the )?(?P<md_day>\d{{1,2}}){ORDINAL}?\b"
    r"(?:,? (?P<md_year>\d{4}))?"
    rf"|(?:on )?(?:{ANY_WEEKDAY}),? (?:the )?(?P<wd_nth>\d{{1,2}}){ORDINAL}\b"
    r"|(?P<after_tomorrow>the day after tomorrow)"
    r"|(?P<tomorrow>tomorrow)(?: (?:morning|afternoon|evening|night))?"
    r"|(?P<today>today|tonight|this (?:morning|afternoon|evening)|later today)"
    r"|(?P<end_which>(?:the )?end of (?:the |this )?|(?:the )?end of next )(?P<end_unit>month|week)"
    r"|(?P<month_end>month end|end of month)"
    rf"|(?:the )?(?:end|close) of {named_month('end_month')}"
    rf"|(?P<in_n>in|within) (?P<n>{NUMBER}) (?P<unit>day|week|month|fortnight)s?"
    r"|(?P<in_fortnight>in a fortnight)"
    rf"|(?P<n_from>{NUMBER}) (?P<from_unit>day|week)s? from (?:now|today)"
    r"|(?P<week_which>next|this coming) (?P<week_unit>week|month|weekend)"
    r"|(?P<weekend>this weekend|at the weekend|on the weekend)"
    rf"|(?P<last>last|past|previous) (?:{ANY_WEEKDAY})"
    rf"|(?P<wd_which>this coming |this |next |coming |on |(?:on )?the )?"
    rf"(?P<weekday>{ANY_WEEKDAY}|tues?|thu(?:rs?)?|wed|fri)\b"
    rf"(?!s)(?: (?:after next|week))?"
    r"|(?P<wd_which2>this |next |on )(?P<weekday2>mon|sat|sun)\b"
    rf"|(?:on )?the (?P<nth>\d{{1,2}}){ORDINAL}\b(?! of (?:every|each))"
    r")",
    re.IGNORECASE,
)
# phrases whose time lies ahead for sure, whatever the tense: "booked for tomorrow"
_SURELY_AHEAD: Final = (
    *("after_tomorrow", "tomorrow", "in_n", "in_fortnight", "n_from", "week_which"),
)


@dataclass(frozen=True, slots=True)
class Ahead:
    """A time ahead that a text names, resolved against the day it was said.

    ``at`` is the clock time when the text gives one ("at 3pm"). ``sure`` is how
    exactly the words pin the day: a date or "tomorrow" ``0.9``, a weekday ``0.75``,
    "next week" or "the end of the month" ``0.6``. ``deadline`` is true for "by ...":
    something to be done before then. ``start``/``end`` are the phrase's place in the
    text, and ``relative`` whether it is a time from the day said, not a named date.
    """

    day: date
    at: time | None
    sure: float
    deadline: bool
    start: int
    end: int
    surely_ahead: bool = False
    past: bool = False  # "last Friday": a time behind, not ahead
    week: bool = False  # "next week": the week, its Monday standing for it


def ahead(text: str, said: datetime | date) -> Ahead | None:
    """The first time ahead ``text`` names, resolved against the day ``said``.

    Today and tonight; tomorrow (morning, evening); the day after tomorrow; this, on, or
    next <weekday> ("next Friday" is the Friday of next week); in N days, weeks or months
    (digits or words, "a week", "a fortnight"); on the Nth (this month's, or next month's
    once it has passed); <Month> <day> and <day> <Month> (this year's, or next year's);
    next week or month; this weekend; by <date>; by the end of the week or month. A clock
    time anywhere in the text ("at 3pm", "14:30") is ``at``. "last Friday" is found too,
    marked ``past``. Returns None when the text names no such time.
    """
    today = said.date() if isinstance(said, datetime) else said
    for match in _AHEAD.finditer(text):
        try:
            found = _ahead(match, today)
        except (ValueError, OverflowError):  # "30 February", a year past the calendar's
            continue
        if found is None:
            continue
        day, sure = found
        return Ahead(
            day=day,
            at=clock(text),
            sure=sure,
            deadline=bool(
                match["by"] or match["end_which"] or match["month_end"] or match["end_month"]
            ),
            start=match.start(),
            end=match.end(),
            surely_ahead=any(match[g] for g in _SURELY_AHEAD),
            past=bool(match["last"]),
            week=bool(match["week_unit"] and match["week_unit"].lower() == "week"),
        )
    return None


def _ahead(match: re.Match[str], today: date) -> tuple[date, float] | None:
    if iso := match["iso"]:
        return date.fromisoformat(iso), 0.9
    if nth := match["wd_nth"]:  # "Friday the 27th": the date decides
        return next_nth(today, int(nth)), 0.9
    if match["dm_day"] or match["md_day"]:
        month = month_number(match["dm_month"] or match["md_month"])
        day = int(match["dm_day"] or match["md_day"])
        if year := match["dm_year"] or match["md_year"]:
            return date(int(year), month, day), 0.9
        return next_date(today, month, day), 0.9
    if match["after_tomorrow"]:
        return today + timedelta(days=2), 0.9
    if match["tomorrow"]:
        return today + timedelta(days=1), 0.9
    if match["today"]:
        return today, 0.9
    if unit := match["end_unit"]:
        later = "next" in match["end_which"].lower()
        if unit.lower() == "week":
            return today + timedelta(days=6 - today.weekday() + (7 if later else 0)), 0.6
        return month_end(today, 1 if later else 0), 0.6
    if match["month_end"]:
        return month_end(today, 0), 0.6
    if name := match["end_month"]:  # "by the end of June": this year's, or next year's
        return month_end(next_date(today, month_number(name), 1), 0), 0.75
    if match["in_n"] or match["n_from"]:
        n = count(match["n"] or match["n_from"])
        unit = (match["unit"] or match["from_unit"]).lower()
        if unit == "month":
            return add_months(today, n), 0.6
        days = {"day": 1, "week": 7, "fortnight": 14}[unit] * n
        return today + timedelta(days=days), 0.9
    if match["in_fortnight"]:
        return today + timedelta(days=14), 0.9
    if unit := match["week_unit"]:
        unit = unit.lower()
        if unit == "month":
            return add_months(today.replace(day=1), 1), 0.5
        monday = today + timedelta(days=7 - today.weekday())
        return (monday + timedelta(days=5) if unit == "weekend" else monday), 0.6
    if match["weekend"]:
        return today + timedelta(days=(5 - today.weekday()) % 7), 0.75
    if match["last"]:
        return today, 0.0
    if weekday := match["weekday"] or match["weekday2"]:
        return _weekday(today, weekday, match), 0.75
    if nth := match["nth"]:
        return next_nth(today, int(nth)), 0.9
    return None


def _weekday(today: date, name: str, match: re.Match[str]) -> date:
    """The day "<which> <weekday>" means: "this Friday" may be today, "on Friday" said on
    a Friday is a week away, and "next Friday" is the Friday of next week."""
    target = weekday_number(name)
    which = (match["wd_which"] or match["wd_which2"] or "").strip().lower()
    days = (target - today.weekday()) % 7
    if which == "this" or which == "this coming":
        pass
    elif which == "next":
        days = days or 7
        if today.weekday() < target:  # this week's is still ahead: next week's is meant
            days += 7
    else:
        days = days or 7
    tail = match.group(0).lower()
    if tail.endswith(("after next", "week")):  # "Friday week": a week after the coming one
        days += 7
    return today + timedelta(days=days)


def clock(text: str) -> time | None:
    """The clock time ``text`` names ("at 3pm", "9:30am", "14:30", "noon"), if any."""
    if not (match := _CLOCK.search(text)):
        return None
    if match["noon"]:
        return time(12, 0)
    if match["h24"]:
        return time(int(match["h24"]), int(match["m24"]))
    hour = int(match["hour"])
    if not 1 <= hour <= 12:
        return None
    pm = match["half"].lower().startswith("p")
    return time(hour % 12 + (12 if pm else 0), int(match["minute"] or 0))


# -- moves: how far a plan moved ----------------------------------------------------------------
_SHIFT: Final = re.compile(
    rf"\b(?:(?:back|forward|up|out|on|delayed|postponed|pushed|moved) )?(?:by )?(?P<n>{NUMBER})"
    r" (?P<unit>day|week|fortnight)s?(?: (?P<way>later|earlier|back|forward|sooner))?\b",
    re.IGNORECASE,
)
_EARLIER: Final = re.compile(r"\b(?:earlier|sooner|forward|moved up|brought up|ahead)\b", re.I)


def shift(text: str) -> timedelta | None:
    """How far ``text`` says a plan moved ("pushed back two days", "a week later",
    "brought forward by a day"): negative when earlier; None if it names no amount.
    "in three days" is a time ahead, not an amount moved, and is not read here."""
    for match in _SHIFT.finditer(text):
        before = text[max(0, match.start() - 3) : match.start()].lower()
        if before.endswith("in ") or before.endswith("n "):  # "in two days", "within"
            continue
        days = count(match["n"]) * {"day": 1, "week": 7, "fortnight": 14}[match["unit"].lower()]
        return timedelta(days=-days if _EARLIER.search(text) else days)
    return None
