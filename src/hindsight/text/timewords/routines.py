"""Routines: what comes back, "every other Thursday", "the 1st of every month".

:func:`recurrence` reads the routine a text states into a :class:`Recurrence`,
resolved against the day it was said, which knows its next time after any day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Final

from hindsight.text.timewords.dates import add_months, month_end, next_nth
from hindsight.text.timewords.vocabulary import ANY_WEEKDAY, ORDINAL, weekday_number

_EVERY: Final = re.compile(
    rf"\b(?:(?:every|each) (?P<other>other |second |2nd )?(?:week on )?(?P<weekday>{ANY_WEEKDAY})"
    rf"(?:,? (?:and|&) (?P<weekday_too>{ANY_WEEKDAY}))?"
    rf"|(?:on )?(?P<plural>{ANY_WEEKDAY})s\b(?:,? (?:and|&) (?P<plural_too>{ANY_WEEKDAY})s\b)?"
    rf"|(?:on )?the (?P<nth>\d{{1,2}}){ORDINAL}? of (?:every|each) month"
    rf"|(?:on )?(?:the )?(?P<ord>first|second|third|fourth|last|1st|2nd|3rd|4th) "
    rf"(?P<ord_day>{ANY_WEEKDAY}) (?:of|in) (?:every|each|the|a) month"
    rf"|(?:every|each) month on the (?P<nth2>\d{{1,2}}){ORDINAL}?"
    r"|(?P<daily>every (?:day|morning|evening|night)|daily)"
    r"|(?P<weekly>every week|weekly))",
    re.IGNORECASE,
)


_ORDINALS: Final = ("fir", "sec", "thi", "fou", "1st", "2nd", "3rd", "4th")


def _next_ordinal(today: date, weekday: int, ordinal: int) -> date:
    """The next "first Tuesday" (``ordinal`` 1, or -1 for the last) of a month, on or
    after today."""
    for ahead_months in range(3):
        month = add_months(today.replace(day=1), ahead_months)
        if ordinal > 0:
            day = month + timedelta(days=(weekday - month.weekday()) % 7 + 7 * (ordinal - 1))
        else:
            last = month_end(month, 0)
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
            return next_nth(max(today, self.first), self.nth)
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
        return Recurrence(first=next_nth(today, int(nth)), step_days=None, nth=int(nth))
    if which := match["ord"]:
        ordinal = -1 if which.lower() == "last" else _ORDINALS.index(which.lower()[:3]) % 4 + 1
        weekday = weekday_number(match["ord_day"])
        first = _next_ordinal(today, weekday, ordinal)
        return Recurrence(first, None, weekday=weekday, ordinal=ordinal)
    if match["daily"]:
        return Recurrence(first=today, step_days=1)
    if match["weekly"]:
        return Recurrence(first=today, step_days=7)
    days = [match["weekday"] or match["plural"], match["weekday_too"] or match["plural_too"]]
    firsts = [
        today + timedelta(days=(weekday_number(day) - today.weekday()) % 7) for day in days if day
    ]
    return Recurrence(firsts[0], 14 if match["other"] else 7, more=tuple(firsts[1:]))
