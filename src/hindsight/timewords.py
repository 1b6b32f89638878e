"""The dates a text refers to relative to when it was said, as words a search can match.

People say "yesterday" and "last Friday"; later questions name the day ("What did Sam
do on December 4, 2023?"). The keyword index holds, beside a memory's own date, the
dates its text points to, resolved against when it was said: "I went there yesterday",
said on 5 December 2023, is also indexed under "4 December 2023".
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Final, Literal

Precision = Literal["day", "month", "year"]

__all__ = ["date_words", "referred_dates"]

_WEEKDAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
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
    "last year" the year. Dates the words of ``said`` itself already name are left out.
    """
    own = {date_words(said), date_words(said, precision="month"), str(said.year)}
    found: list[str] = []
    for match in _REFERENCE.finditer(text):
        when, precision = _resolve(match, said)
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
