"""The span of time a query asks about: "in May 2023", "last week", "three days ago".

:func:`asked_period` turns a query that names a time into a :class:`Period`, resolved
against the time of the query in the asker's time zone (at 9 pm in New York, "today"
is not yet tomorrow in UTC), which recall uses to favour memories from that span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Final

from hindsight.text.timewords.past import resolve
from hindsight.text.timewords.vocabulary import COUNTS, WEEKDAYS, month_number, named_month


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


_ASKED: Final = re.compile(
    rf"\b(?:(?P<mday>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? {named_month('m1')},? (?P<myear>\d{{4}})"
    rf"|{named_month('m2')} (?P<dday>\d{{1,2}})(?:st|nd|rd|th)?,? (?P<dyear>\d{{4}})"
    rf"|{named_month('m3')},?(?: of)? (?P<year>\d{{4}})"
    rf"|in (?:early |late |mid-?)?{named_month('m4')}(?:,?(?: of)? (?P<in_year>\d{{4}}))?"
    r"|in (?P<only_year>(?:19|20)\d{2})"
    r"|(?P<day_before>the day before yesterday)|(?P<yesterday>yesterday|last night)"
    r"|(?P<today>today|tonight|this morning|this afternoon|this evening)"
    rf"|(?:last|on) (?P<weekday>{'|'.join(WEEKDAYS)}|weekend)"
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
    number = month_number(match["m1"] or match["m2"] or match["m3"] or match["m4"])
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
        day = today if match["today"] else resolve(match, today)[0]
        weekend = (match["weekday"] or "").lower() == "weekend"
        return Period(day, day + timedelta(days=2 if weekend else 1))
    if count := match["count"] or match["span"]:
        n = int(count) if count.isdigit() else COUNTS[count.lower()]
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


def _month(year: int, month: int, zone: tzinfo) -> Period:
    start = datetime(year, month, 1, tzinfo=zone)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=zone)
    return Period(start, end)


def _year(year: int, zone: tzinfo) -> Period:
    return Period(datetime(year, 1, 1, tzinfo=zone), datetime(year + 1, 1, 1, tzinfo=zone))
