"""The words of time: weekday and month names, counts in words, and reading them.

The tables and pattern pieces the readers of :mod:`hindsight.text.timewords` share, and
what a word means: a month's number ("Sept": 9), a weekday's ("thurs": 3), a count
("a couple of": 2).
"""

from __future__ import annotations

from typing import Final

WEEKDAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
"""The weekdays' names, Monday first, lower case."""
MONTHS: Final = (
    *("january", "february", "march", "april", "may", "june", "july", "august"),
    *("september", "october", "november", "december"),
)
"""The months' names, January first, lower case."""
# counts a time behind is given in: "a week ago", "three days ago"
COUNTS: Final = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


_MONTH_NAMES: Final = "|".join([*MONTHS, *(m[:3] for m in MONTHS)])


def named_month(group: str) -> str:
    """A pattern for a month's name or its first three letters, captured as ``group``."""
    return rf"(?P<{group}>{_MONTH_NAMES})\.?"


def month_number(name: str) -> int:
    """January 1 to December 12, of a month's name or its first three letters."""
    return [m[:3] for m in MONTHS].index(name[:3].lower()) + 1


_NUMBERS: Final = {
    **COUNTS,
    **{"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12},
    **{"thirteen": 13, "fourteen": 14, "fifteen": 15, "twenty": 20, "thirty": 30},
    **{"a couple of": 2, "a couple": 2, "a few": 3},
}
NUMBER: Final = r"\d{1,3}|a couple(?: of)?|a few|" + "|".join(
    sorted((n for n in _NUMBERS if not n.startswith("a ")), key=len, reverse=True)
)
ANY_WEEKDAY: Final = "|".join(WEEKDAYS)  # a pattern: any weekday's name
ORDINAL: Final = r"(?:st|nd|rd|th)"


def count(words: str) -> int:
    """A count in digits or words: "3", "three", "a", "a couple of"."""
    words = words.lower().strip()
    return int(words) if words.isdigit() else _NUMBERS[words]


def weekday_number(name: str) -> int:
    """Monday 0 to Sunday 6, of a weekday's name or its short form ("thurs", "tue")."""
    return [d[:2] for d in WEEKDAYS].index(name[:2].lower())
