"""Time in words: the dates a text points to, and the span of time a query asks about.

People say "yesterday" and "last Friday"; later questions name the day ("What did Sam
do on December 4, 2023?"). The keyword index holds, beside a memory's own date, the
dates its text points to, resolved against when it was said: "I went there yesterday",
said on 5 December 2023, is also indexed under "4 December 2023".

A query that names a time ("in May 2023", "last week", "three days ago") asks for what
happened then: :func:`asked_period` turns it into a :class:`Period`, resolved against
the time of the query in the asker's time zone (at 9 pm in New York, "today" is not yet
tomorrow in UTC), which recall uses to favour memories from that span.

Plans look ahead: "the mechanic on Friday", "the lease ends on the 30th", "in ten days".
:func:`ahead` resolves the first time ahead a text names against the day it was said,
:func:`recurrence` reads a routine ("every other Thursday", "the 1st of every month") and
:func:`shift` an amount a plan moved by ("pushed back two days"); foresight
(:mod:`hindsight.foresight`) builds on them.
"""

from __future__ import annotations

import re
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Final, Literal

Precision = Literal["day", "month", "year"]

__all__ = [
    "MONTHS",
    "WEEKDAYS",
    "Ahead",
    "Period",
    "Recurrence",
    "ahead",
    "asked_period",
    "clock",
    "count",
    "date_words",
    "pinned",
    "recurrence",
    "referred_dates",
    "shift",
]

_WEEKDAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS: Final = (
    *("january", "february", "march", "april", "may", "june", "july", "august"),
    *("september", "october", "november", "december"),
)
WEEKDAYS: Final = _WEEKDAYS
"""The weekdays' names, Monday first, lower case."""
MONTHS: Final = _MONTHS
"""The months' names, January first, lower case."""
_COUNTS: Final = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_REFERENCE: Final = re.compile(
    r"\b(?:(?P<day_before>the day before yesterday)|(?P<yesterday>yesterday|last night)"
    rf"|last (?P<weekday>{'|'.join(_WEEKDAYS)}|weekend)"
    r"|(?P<count>\d{1,2}|a|one|two|three|four|five|six) (?P<unit>day|week)s? ago"
    r"|last (?P<period>week|month|year))\b",
    re.IGNORECASE,
)


def date_words(when: datetime, *, precision: Precision = "day") -> str:
    """A date as the index writes it: "4 December 2023", "December 2023" or "2023"."""
    if precision == "year":
        return str(when.year)
    if precision == "month":
        return f"{when:%B %Y}"
    return f"{when.day} {when:%B %Y}"


def referred_dates(text: str, said: datetime) -> list[str]:
    """Words for each date ``text`` points to relative to ``said``, in order, without repeats.

    Day references ("yesterday", "last Friday", "three days ago") give the day; week
    references ("last week", "two weeks ago") the month; "last month" the month;
    "last year" the year. Dates the words of ``said`` itself already name are left out,
    and so are dates before the calendar's first ("yesterday", said on 1 January 1).
    """
    own = {date_words(said), date_words(said, precision="month"), str(said.year)}
    found: list[str] = []
    for match in _REFERENCE.finditer(text):
        try:
            when, precision = _resolve(match, said)
        except (ValueError, OverflowError):
            continue
        words = date_words(when, precision=precision)
        if words not in own and words not in found:
            found.append(words)
    return found


def _resolve(match: re.Match[str], said: datetime) -> tuple[datetime, Precision]:
    if match["day_before"]:
        return said - timedelta(days=2), "day"
    if match["yesterday"]:
        return said - timedelta(days=1), "day"
    if weekday := match["weekday"]:
        target = 5 if weekday.lower() == "weekend" else _WEEKDAYS.index(weekday.lower())
        back = (said.weekday() - target) % 7 or 7  # the latest such day before today
        return said - timedelta(days=back), "day"
    if count := match["count"]:
        n = int(count) if count.isdigit() else _COUNTS[count.lower()]
        if match["unit"].lower() == "day":
            return said - timedelta(days=n), "day"
        return said - timedelta(weeks=n), "month"
    period = match["period"].lower()
    if period == "week":
        return said - timedelta(weeks=1), "month"
    if period == "month":
        first = said.replace(day=1)
        return first - timedelta(days=1), "month"
    return said.replace(year=said.year - 1, month=1, day=1), "year"


_TRAILING: Final = re.compile(
    r"(?:,\s*|\s+)(?P<phrase>(?:the day before yesterday|yesterday|last night|today|earlier today"
    r"|this (?:morning|afternoon|evening|week|month|year)"
    rf"|last (?:{'|'.join(_WEEKDAYS)}|weekend|week|month|year)"
    r"|(?:\d{1,2}|a|one|two|three|four|five|six) (?:day|week|month|year)s? ago))"
    r"(?P<end>[.!]?)$",
    re.IGNORECASE,
)
_PARTS_OF_DAY: Final = ("morning", "afternoon", "evening")


def pinned(text: str, said: datetime) -> str:
    """``text`` with a time relative to ``said`` at its end replaced by the date it meant.

    "Caroline went to a pride parade last week", said on 8 May 2023, is "Caroline went
    to a pride parade in the week of 1 May 2023": a memory outlives the week it was
    said in, and read later, "last week" would mean another week. Days give the day
    ("yesterday": "on 7 May 2023"), weeks the week from its Monday, months the month,
    years the year. Text ending in no such phrase, or in one before the calendar's first
    year, is returned as it is.
    """
    if not (match := _TRAILING.search(text)):
        return text
    day = said.replace(hour=0, minute=0, second=0, microsecond=0)
    try:
        when = _when(match["phrase"].lower(), day)
    except (ValueError, OverflowError):  # "last year", said in year 1
        return text
    return f"{text[: match.start()]} {when}{match['end']}"


def _when(phrase: str, day: datetime) -> str:
    """Words for the time ``phrase`` means, said on ``day``."""
    if phrase in ("today", "earlier today") or phrase.split()[-1] in _PARTS_OF_DAY:
        return f"on {date_words(day)}"
    words = phrase.split()
    unit = (words[-2] if words[-1] == "ago" else words[-1]).rstrip("s")
    if unit in ("week", "month", "year"):
        back = {"this": 0, "last": 1}.get(words[0])
        if back is None:  # "two weeks ago"
            back = int(words[0]) if words[0].isdigit() else _COUNTS[words[0]]
        if unit == "week":
            return f"in the week of {date_words(day - timedelta(days=day.weekday(), weeks=back))}"
        if unit == "month":
            months = day.year * 12 + day.month - 1 - back
            first = day.replace(year=months // 12, month=months % 12 + 1, day=1)
            return f"in {date_words(first, precision='month')}"
        return f"in {day.replace(year=day.year - back, month=1, day=1).year}"  # year >= 1
    if phrase == "last weekend":
        saturday = day - timedelta(days=(day.weekday() - 5) % 7 or 7)
        return f"on the weekend of {date_words(saturday)}"
    reference = _REFERENCE.fullmatch(phrase)  # a day: yesterday, last Friday, 3 days ago
    assert reference is not None
    return f"on {date_words(_resolve(reference, day)[0])}"


@dataclass(frozen=True, slots=True)
class Period:
    """A span of time a query names: ``[start, end)``, or a month of any year.

    "in May" without a year means a May of any year (the user knows which; recency
    still favours the latest), so ``month`` is set, in time ``zone``, and
    ``start``/``end`` are not.
    """

    start: datetime | None = None
    end: datetime | None = None
    month: int | None = None
    zone: tzinfo = UTC

    def __contains__(self, when: object) -> bool:
        if not isinstance(when, datetime):
            return False
        if self.month is not None:
            return when.astimezone(self.zone).month == self.month
        return self.start is not None and self.end is not None and self.start <= when < self.end


_MONTH_NAMES: Final = "|".join([*_MONTHS, *(m[:3] for m in _MONTHS)])


def _named_month(group: str) -> str:
    return rf"(?P<{group}>{_MONTH_NAMES})\.?"


_ASKED: Final = re.compile(
    rf"\b(?:(?P<mday>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? {_named_month('m1')},? (?P<myear>\d{{4}})"
    rf"|{_named_month('m2')} (?P<dday>\d{{1,2}})(?:st|nd|rd|th)?,? (?P<dyear>\d{{4}})"
    rf"|{_named_month('m3')},?(?: of)? (?P<year>\d{{4}})"
    rf"|in (?:early |late |mid-?)?{_named_month('m4')}(?:,?(?: of)? (?P<in_year>\d{{4}}))?"
    r"|in (?P<only_year>(?:19|20)\d{2})"
    r"|(?P<day_before>the day before yesterday)|(?P<yesterday>yesterday|last night)"
    r"|(?P<today>today|tonight|this morning|this afternoon|this evening)"
    rf"|(?:last|on) (?P<weekday>{'|'.join(_WEEKDAYS)}|weekend)"
    r"|(?P<count>\d{1,2}|a|one|two|three|four|five|six) (?P<unit>day|week|month|year)s? ago"
    r"|(?:in )?the (?:last|past) (?P<span>\d{1,2}|two|three|four|five|six) (?P<span_unit>day|week)s"
    r"|(?P<which>last|this|past) (?P<period>week|month|year))\b",
    re.IGNORECASE,
)


def asked_period(query: str, now: datetime, zone: tzinfo = UTC) -> Period | None:
    """The first span of time ``query`` names, resolved against ``now``; None if it names none.

    Dates ("8 May 2023", "May 8, 2023"), months ("May 2023", "in May"), years ("in
    2022"), and times relative to ``now``: "yesterday", "today", "last Friday", "three
    days ago", "two weeks ago", "the past 10 days", "last week" (the calendar week
    before this one), "this month", "last year". Days, months and years are those of
    time ``zone``: the asker's, whose "8 May" starts at their midnight.
    """
    matches = list(_ASKED.finditer(query))
    if not matches:
        return None
    # A date named outright wins over a relative one: "last week, as mentioned on
    # November 6, 2023" and "the last week of August 2023" ask about 2023, not this week.
    absolute = [m for m in matches if m["m1"] or m["m2"] or m["m3"] or m["m4"] or m["only_year"]]
    try:
        if absolute:
            return _named(absolute[0], zone)
        return _relative(matches[0], now.astimezone(zone))
    except (ValueError, OverflowError):  # no such date: "31 February 2023", "May 0000"
        return None


def _named(match: re.Match[str], zone: tzinfo) -> Period:
    if match["only_year"]:
        return _year(int(match["only_year"]), zone)
    number = _month_number(match["m1"] or match["m2"] or match["m3"] or match["m4"])
    if day := match["mday"] or match["dday"]:
        start = datetime(int(match["myear"] or match["dyear"]), number, int(day), tzinfo=zone)
        return Period(start, start + timedelta(days=1))
    if year := match["year"] or match["in_year"]:
        return _month(int(year), number, zone)
    return Period(month=number, zone=zone)


def _relative(match: re.Match[str], now: datetime) -> Period:
    """A span relative to ``now``, in days of ``now``'s time zone (wall-clock arithmetic:
    the day a clock changes is 23 or 25 hours long)."""
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    tomorrow = today + timedelta(days=1)
    if match["day_before"] or match["yesterday"] or match["today"] or match["weekday"]:
        day = today if match["today"] else _resolve(match, today)[0]
        weekend = (match["weekday"] or "").lower() == "weekend"
        return Period(day, day + timedelta(days=2 if weekend else 1))
    if count := match["count"] or match["span"]:
        n = int(count) if count.isdigit() else _COUNTS[count.lower()]
        unit = (match["unit"] or match["span_unit"]).lower()
        if match["span"]:
            return Period(today - timedelta(days=n if unit == "day" else 7 * n), tomorrow)
        if unit == "day":
            day = today - timedelta(days=n)
            return Period(day, day + timedelta(days=1))
        return _calendar(unit, today, back=n)
    which, period = match["which"].lower(), match["period"].lower()
    if which == "past":  # a span ending today
        days = {"week": 7, "month": 30, "year": 365}[period]
        return Period(today - timedelta(days=days), tomorrow)
    return _calendar(period, today, back=1 if which == "last" else 0)


def _calendar(unit: str, today: datetime, *, back: int) -> Period:
    """The calendar week (from Monday), month or year ``back`` of them before today's."""
    if unit == "week":
        week = today - timedelta(days=today.weekday(), weeks=back)
        return Period(week, week + timedelta(weeks=1))
    zone = today.tzinfo or UTC
    if unit == "month":
        months = today.year * 12 + today.month - 1 - back
        return _month(months // 12, months % 12 + 1, zone)
    return _year(today.year - back, zone)


def _month_number(name: str) -> int:
    return [m[:3] for m in _MONTHS].index(name[:3].lower()) + 1


def _month(year: int, month: int, zone: tzinfo) -> Period:
    start = datetime(year, month, 1, tzinfo=zone)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=zone)
    return Period(start, end)


def _year(year: int, zone: tzinfo) -> Period:
    return Period(datetime(year, 1, 1, tzinfo=zone), datetime(year + 1, 1, 1, tzinfo=zone))


# -- times ahead: the dates plans point to ---------------------------------------------------
_NUMBERS: Final = {
    **_COUNTS,
    **{"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12},
    **{"thirteen": 13, "fourteen": 14, "fifteen": 15, "twenty": 20, "thirty": 30},
    **{"a couple of": 2, "a couple": 2, "a few": 3},
}
_NUMBER: Final = r"\d{1,3}|a couple(?: of)?|a few|" + "|".join(
    sorted((n for n in _NUMBERS if not n.startswith("a ")), key=len, reverse=True)
)
_WEEKDAY: Final = "|".join(_WEEKDAYS)
_ORDINAL: Final = r"(?:st|nd|rd|th)"
_DAY_NAME: Final = rf"(?:(?:{_WEEKDAY}),? )?"  # "Friday the 27th", "Friday, 27 March"
_CLOCK: Final = re.compile(
    r"\b(?:at |@ ?)?(?:(?P<hour>\d{1,2})(?::(?P<minute>[0-5]\d))? ?(?P<half>am|pm|a\.m\.|p\.m\.)"
    r"|(?P<h24>[01]?\d|2[0-3]):(?P<m24>[0-5]\d)|(?P<noon>noon|midday))\b",
    re.IGNORECASE,
)
_AHEAD: Final = re.compile(
    rf"\b(?P<by>(?:by|before|until|no later than|due) )?(?:"
    r"(?P<iso>\d{4}-\d{2}-\d{2})"
    rf"|(?:on )?{_DAY_NAME}(?:the )?(?P<dm_day>\d{{1,2}}){_ORDINAL}?(?: of)? "
    rf"{_named_month('dm_month')}(?:,? (?P<dm_year>\d{{4}}))?"
    rf"|(?:on )?{_DAY_NAME}{_named_month('md_month')} (?:the )?(?P<md_day>\d{{1,2}}){_ORDINAL}?\b"
    r"(?:,? (?P<md_year>\d{4}))?"
    rf"|(?:on )?(?:{_WEEKDAY}),? (?:the )?(?P<wd_nth>\d{{1,2}}){_ORDINAL}\b"
    r"|(?P<after_tomorrow>the day after tomorrow)"
    r"|(?P<tomorrow>tomorrow)(?: (?:morning|afternoon|evening|night))?"
    r"|(?P<today>today|tonight|this (?:morning|afternoon|evening)|later today)"
    r"|(?P<end_which>(?:the )?end of (?:the |this )?|(?:the )?end of next )(?P<end_unit>month|week)"
    r"|(?P<month_end>month end|end of month)"
    rf"|(?:the )?(?:end|close) of {_named_month('end_month')}"
    rf"|(?P<in_n>in|within) (?P<n>{_NUMBER}) (?P<unit>day|week|month|fortnight)s?"
    r"|(?P<in_fortnight>in a fortnight)"
    rf"|(?P<n_from>{_NUMBER}) (?P<from_unit>day|week)s? from (?:now|today)"
    r"|(?P<week_which>next|this coming) (?P<week_unit>week|month|weekend)"
    r"|(?P<weekend>this weekend|at the weekend|on the weekend)"
    rf"|(?P<last>last|past|previous) (?:{_WEEKDAY})"
    rf"|(?P<wd_which>this coming |this |next |coming |on |(?:on )?the )?"
    rf"(?P<weekday>{_WEEKDAY}|tues?|thu(?:rs?)?|wed|fri)\b"
    rf"(?!s)(?: (?:after next|week))?"
    r"|(?P<wd_which2>this |next |on )(?P<weekday2>mon|sat|sun)\b"
    rf"|(?:on )?the (?P<nth>\d{{1,2}}){_ORDINAL}\b(?! of (?:every|each))"
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


def count(words: str) -> int:
    """A count in digits or words: "3", "three", "a", "a couple of"."""
    words = words.lower().strip()
    return int(words) if words.isdigit() else _NUMBERS[words]


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
        return _next_nth(today, int(nth)), 0.9
    if match["dm_day"] or match["md_day"]:
        month = _month_number(match["dm_month"] or match["md_month"])
        day = int(match["dm_day"] or match["md_day"])
        if year := match["dm_year"] or match["md_year"]:
            return date(int(year), month, day), 0.9
        return _next_date(today, month, day), 0.9
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
        return _month_end(today, 1 if later else 0), 0.6
    if match["month_end"]:
        return _month_end(today, 0), 0.6
    if name := match["end_month"]:  # "by the end of June": this year's, or next year's
        return _month_end(_next_date(today, _month_number(name), 1), 0), 0.75
    if match["in_n"] or match["n_from"]:
        n = count(match["n"] or match["n_from"])
        unit = (match["unit"] or match["from_unit"]).lower()
        if unit == "month":
            return _add_months(today, n), 0.6
        days = {"day": 1, "week": 7, "fortnight": 14}[unit] * n
        return today + timedelta(days=days), 0.9
    if match["in_fortnight"]:
        return today + timedelta(days=14), 0.9
    if unit := match["week_unit"]:
        unit = unit.lower()
        if unit == "month":
            return _add_months(today.replace(day=1), 1), 0.5
        monday = today + timedelta(days=7 - today.weekday())
        return (monday + timedelta(days=5) if unit == "weekend" else monday), 0.6
    if match["weekend"]:
        return today + timedelta(days=(5 - today.weekday()) % 7), 0.75
    if match["last"]:
        return today, 0.0
    if weekday := match["weekday"] or match["weekday2"]:
        return _weekday(today, weekday, match), 0.75
    if nth := match["nth"]:
        return _next_nth(today, int(nth)), 0.9
    return None


def _weekday(today: date, name: str, match: re.Match[str]) -> date:
    """The day "<which> <weekday>" means: "this Friday" may be today, "on Friday" said on
    a Friday is a week away, and "next Friday" is the Friday of next week."""
    target = _weekday_number(name)
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


def _weekday_number(name: str) -> int:
    """Monday 0 to Sunday 6, of a weekday's name or its short form ("thurs", "tue")."""
    return [d[:2] for d in _WEEKDAYS].index(name[:2].lower())


def _next_date(today: date, month: int, day: int) -> date:
    """The next <month> <day> on or after today (a leap day may be years ahead)."""
    for year in range(today.year, today.year + 9):
        with suppress(ValueError):  # no such day that month: the next
            if (when := date(year, month, day)) >= today:
                return when
    raise ValueError(f"no {month}-{day}")


def _next_nth(today: date, nth: int) -> date:
    """The next Nth of a month on or after today: this month's unless it has passed."""
    first = today.replace(day=1)
    for ahead_months in range(13):
        month = _add_months(first, ahead_months)
        with suppress(ValueError):  # no such day that month: the next
            if (when := month.replace(day=nth)) >= today:
                return when
    raise ValueError(f"no day {nth}")


def _add_months(day: date, n: int) -> date:
    months = day.year * 12 + day.month - 1 + n
    year, month = months // 12, months % 12 + 1
    last = (_month_end(date(year, month, 1), 0)).day
    return date(year, month, min(day.day, last))


def _month_end(day: date, later: int) -> date:
    months = day.year * 12 + day.month + later  # the month after the one meant, 0-based
    return date(months // 12, months % 12 + 1, 1) - timedelta(days=1)


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


# -- routines: what comes back ------------------------------------------------------------------
_EVERY: Final = re.compile(
    rf"\b(?:(?:every|each) (?P<other>other |second |2nd )?(?:week on )?(?P<weekday>{_WEEKDAY})"
    rf"(?:,? (?:and|&) (?P<weekday_too>{_WEEKDAY}))?"
    rf"|(?:on )?(?P<plural>{_WEEKDAY})s\b(?:,? (?:and|&) (?P<plural_too>{_WEEKDAY})s\b)?"
    rf"|(?:on )?the (?P<nth>\d{{1,2}}){_ORDINAL}? of (?:every|each) month"
    rf"|(?:on )?(?:the )?(?P<ord>first|second|third|fourth|last|1st|2nd|3rd|4th) "
    rf"(?P<ord_day>{_WEEKDAY}) (?:of|in) (?:every|each|the|a) month"
    rf"|(?:every|each) month on the (?P<nth2>\d{{1,2}}){_ORDINAL}?"
    r"|(?P<daily>every (?:day|morning|evening|night)|daily)"
    r"|(?P<weekly>every week|weekly))",
    re.IGNORECASE,
)


_ORDINALS: Final = ("fir", "sec", "thi", "fou", "1st", "2nd", "3rd", "4th")


def _next_ordinal(today: date, weekday: int, ordinal: int) -> date:
    """The next "first Tuesday" (``ordinal`` 1, or -1 for the last) of a month, on or
    after today."""
    for ahead_months in range(3):
        month = _add_months(today.replace(day=1), ahead_months)
        if ordinal > 0:
            day = month + timedelta(days=(weekday - month.weekday()) % 7 + 7 * (ordinal - 1))
        else:
            last = _month_end(month, 0)
            day = last - timedelta(days=(last.weekday() - weekday) % 7)
        if day >= today:
            return day
    raise ValueError("no such day")  # pragma: no cover - every month has each weekday


@dataclass(frozen=True, slots=True)
class Recurrence:
    """A routine: every (or every other) weekday, the Nth of every month, or every day.

    ``first`` is its first time on or after the day it was said, from which every other
    week counts.
    """

    first: date
    step_days: int | None  # 1, 7 or 14; None for monthly
    nth: int | None = None  # the day of the month, for monthly
    # or the weekday (0 Monday) and which of the month's it is (1 to 4; -1 the last)
    weekday: int | None = None
    ordinal: int | None = None
    more: tuple[date, ...] = ()  # the first times of its other weekdays ("Mondays and Thursdays")

    def next(self, today: date) -> date:
        """Its next time on or after ``today``."""
        if self.nth is not None:
            return _next_nth(max(today, self.first), self.nth)
        if self.weekday is not None and self.ordinal is not None:
            return _next_ordinal(max(today, self.first), self.weekday, self.ordinal)
        step = self.step_days
        assert step is not None

        def after(first: date) -> date:
            behind = max(0, (today - first).days)
            return first + timedelta(days=-(-behind // step) * step)

        return min(after(first) for first in (self.first, *self.more))


def recurrence(text: str, said: datetime | date) -> Recurrence | None:
    """The routine ``text`` states, if any: "every Thursday", "every other Thursday",
    "on Mondays", "on Mondays and Thursdays", "the 1st of every month", "every month on
    the 15th", "the first Tuesday of every month", "every day", "every week" (on the day
    said); resolved against the day ``said``."""
    if not (match := _EVERY.search(text)):
        return None
    try:
        return _recurrence(match, said.date() if isinstance(said, datetime) else said)
    except (ValueError, OverflowError):  # no next time before the calendar ends
        return None


def _recurrence(match: re.Match[str], today: date) -> Recurrence | None:
    if nth := match["nth"] or match["nth2"]:
        if not 1 <= int(nth) <= 31:
            return None
        return Recurrence(first=_next_nth(today, int(nth)), step_days=None, nth=int(nth))
    if which := match["ord"]:
        ordinal = -1 if which.lower() == "last" else _ORDINALS.index(which.lower()[:3]) % 4 + 1
        weekday = _weekday_number(match["ord_day"])
        first = _next_ordinal(today, weekday, ordinal)
        return Recurrence(first, None, weekday=weekday, ordinal=ordinal)
    if match["daily"]:
        return Recurrence(first=today, step_days=1)
    if match["weekly"]:
        return Recurrence(first=today, step_days=7)
    days = [match["weekday"] or match["plural"], match["weekday_too"] or match["plural_too"]]
    firsts = [
        today + timedelta(days=(_weekday_number(day) - today.weekday()) % 7) for day in days if day
    ]
    return Recurrence(firsts[0], 14 if match["other"] else 7, more=tuple(firsts[1:]))


# -- moves: how far a plan moved ----------------------------------------------------------------
_SHIFT: Final = re.compile(
    rf"\b(?:(?:back|forward|up|out|on|delayed|postponed|pushed|moved) )?(?:by )?(?P<n>{_NUMBER})"
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
