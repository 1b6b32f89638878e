"""Calendar arithmetic for times ahead: the next such date, months added, a month's end."""

from __future__ import annotations

from contextlib import suppress
from datetime import date, timedelta


def next_date(today: date, month: int, day: int) -> date:
    """The next <month> <day> on or after today (a leap day may be years ahead)."""
    for year in range(today.year, today.year + 9):
        with suppress(ValueError):  # no such day that month: the next
            if (when := date(year, month, day)) >= today:
                return when
    raise ValueError(f"no {month}-{day}")


def next_nth(today: date, nth: int) -> date:
    """The next Nth of a month on or after today: this month's unless it has passed."""
    first = today.replace(day=1)
    for ahead_months in range(13):
        month = add_months(first, ahead_months)
        with suppress(ValueError):  # no such day that month: the next
            if (when := month.replace(day=nth)) >= today:
                return when
    raise ValueError(f"no day {nth}")


def add_months(day: date, n: int) -> date:
    """``day`` ``n`` months later, on the month's last day where it has no such day."""
    months = day.year * 12 + day.month - 1 + n
    year, month = months // 12, months % 12 + 1
    last = (month_end(date(year, month, 1), 0)).day
    return date(year, month, min(day.day, last))


def month_end(day: date, later: int) -> date:
    """The last day of ``day``'s month, or of the month ``later`` months after it."""
    months = day.year * 12 + day.month + later  # the month after the one meant, 0-based
    return date(months // 12, months % 12 + 1, 1) - timedelta(days=1)
