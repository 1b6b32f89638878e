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

The reading is by concern: the words themselves in :mod:`.vocabulary`, times past in
:mod:`.past`, the spans queries ask about in :mod:`.periods`, plans' times ahead (and how
far a plan moved) in :mod:`.plans` over the calendar arithmetic of :mod:`.dates`, and
routines in :mod:`.routines`.
"""

from __future__ import annotations

from hindsight.text.timewords.past import date_words, pinned, referred_dates
from hindsight.text.timewords.periods import Period, asked_period
from hindsight.text.timewords.plans import Ahead, ahead, clock, shift
from hindsight.text.timewords.routines import Recurrence, recurrence
from hindsight.text.timewords.vocabulary import MONTHS, WEEKDAYS, count

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
