"""Time in words: the dates a text points to, and the span of time a query asks about.

People say "yesterday" and "last Friday"; later questions name the day ("What did Sam
do on December 4, 2023?"). The keyword index holds, beside a memory's own date, the
dates its text points to, resolved against when it was said: "I went there yesterday",
said on 5 December 2023, is also indexed under "4 December 2023".

A query that names a time ("in May 2023", "last week", "three days ago") asks for what
happened then: :func:`asked_period` turns it into a :class:`Period`, resolved against
the time of the query in the asker's time zone (at 9 pm in New York, "today" is not yet
tomorrow in UTC), which recall uses to favour memories from that span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Final, Literal

Precision = Literal["day", "month", "year"]

__all__ = ["Period", "asked_period", "date_words", "pinned", "referred_dates"]

_WEEKDAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS: Final = (
    *("january", "february", "march", "april", "may", "june", "july", "august"),
    *("september", "october", "november", "december"),
)
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
