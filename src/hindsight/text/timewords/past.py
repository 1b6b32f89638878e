"""Times past: the dates a text points back to, resolved against when it was said.

"I went there yesterday", said on 5 December 2023, points to 4 December 2023:
:func:`referred_dates` gives the words the keyword index holds for it, and
:func:`pinned` rewrites a statement's trailing "last week" as the week it meant.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Final, Literal

from hindsight.text.timewords.vocabulary import COUNTS, WEEKDAYS

Precision = Literal["day", "month", "year"]

_REFERENCE: Final = re.compile(
    r"\b(?:(?P<day_before>the day before yesterday)|(?P<yesterday>yesterday|last night)"
    rf"|last (?P<weekday>{'|'.join(WEEKDAYS)}|weekend)"
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
            when, precision = resolve(match, said)
        except (ValueError, OverflowError):
            continue
        words = date_words(when, precision=precision)
        if words not in own and words not in found:
            found.append(words)
    return found


def resolve(match: re.Match[str], said: datetime) -> tuple[datetime, Precision]:
    """The time a day, week, month or year reference means (a match of the day
    references' groups: ``day_before``, ``yesterday``, ``weekday``, ``count`` and
    ``unit``, ``period``), said at ``said``, and how precisely it names it."""
    if match["day_before"]:
        return said - timedelta(days=2), "day"
    if match["yesterday"]:
        return said - timedelta(days=1), "day"
    if weekday := match["weekday"]:
        target = 5 if weekday.lower() == "weekend" else WEEKDAYS.index(weekday.lower())
        back = (said.weekday() - target) % 7 or 7  # the latest such day before today
        return said - timedelta(days=back), "day"
    if count := match["count"]:
        n = int(count) if count.isdigit() else COUNTS[count.lower()]
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
    rf"|last (?:{'|'.join(WEEKDAYS)}|weekend|week|month|year)"
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
            back = int(words[0]) if words[0].isdigit() else COUNTS[words[0]]
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
    return f"on {date_words(resolve(reference, day)[0])}"
