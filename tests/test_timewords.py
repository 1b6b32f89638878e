"""Relative dates in a text, resolved against when it was said, and found by date; the
span of time a query names, and recall favouring memories from then."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight import Hindsight, Settings, validate
from hindsight.embed import Embeddings
from hindsight.errors import ValidationError
from hindsight.store import Filter
from hindsight.text.timewords import Period, asked_period, pinned, referred_dates

SAID = datetime(2023, 12, 5, 14, 30, tzinfo=UTC)  # a Tuesday


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("I went there yesterday.", ["4 December 2023"]),
        (
            "Last night was fun; the day before yesterday too",
            ["4 December 2023", "3 December 2023"],
        ),
        ("We met last Friday", ["1 December 2023"]),
        ("last Tuesday", ["28 November 2023"]),  # said on a Tuesday: a week back
        ("over the last weekend", ["2 December 2023"]),
        ("3 days ago, and two days ago", ["2 December 2023", "3 December 2023"]),
        ("last week and two weeks ago", ["November 2023"]),  # one entry per date
        ("last month", ["November 2023"]),
        ("last year", ["2022"]),
        ("today, this week, the other day, last-minute", []),  # nothing to resolve
        ("yesterday yesterday", ["4 December 2023"]),
    ],
)
def test_relative_dates_resolve_against_when_they_were_said(text: str, dates: list[str]) -> None:
    assert referred_dates(text, SAID) == dates


def test_month_and_year_boundaries_and_the_own_date() -> None:
    first = datetime(2024, 3, 1, tzinfo=UTC)
    assert referred_dates("yesterday, last month", first) == ["29 February 2024", "February 2024"]
    new_year = datetime(2024, 1, 1, tzinfo=UTC)
    assert referred_dates("yesterday", new_year) == ["31 December 2023"]
    # a week before 20 December is still December 2023: the memory's own date says it
    assert referred_dates("last week", datetime(2023, 12, 20, tzinfo=UTC)) == []


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        (
            "Sam went to a pride parade last week",
            "Sam went to a pride parade in the week of 27 November 2023",
        ),
        ("Sam built a website yesterday.", "Sam built a website on 4 December 2023."),
        ("Sam ran, the day before yesterday!", "Sam ran on 3 December 2023!"),
        ("Sam went hiking last Friday", "Sam went hiking on 1 December 2023"),
        ("Sam went hiking last Tuesday", "Sam went hiking on 28 November 2023"),
        ("Sam camped last weekend", "Sam camped on the weekend of 2 December 2023"),
        ("Sam painted this morning", "Sam painted on 5 December 2023"),
        ("Sam met Ada this week", "Sam met Ada in the week of 4 December 2023"),
        ("Sam swam three days ago", "Sam swam on 2 December 2023"),
        ("Sam moved two months ago", "Sam moved in October 2023"),
        ("Sam moved 12 months ago", "Sam moved in December 2022"),
        ("Sam graduated last year", "Sam graduated in 2022"),
        # nothing to pin: no time, a vague one, or one not at the end
        ("Sam started a course recently", "Sam started a course recently"),
        ("Sam cooked last summer", "Sam cooked last summer"),
        ("Sam left a few days ago", "Sam left a few days ago"),
        ("Yesterday Sam left", "Yesterday Sam left"),
        ("yesterday", "yesterday"),
    ],
)
def test_a_relative_time_at_the_end_is_pinned_to_its_date(text: str, meant: str) -> None:
    assert pinned(text, SAID) == meant


def test_a_retained_experience_keeps_the_date_it_meant(hs: Hindsight) -> None:
    kept = hs.retain("user:tw", "I went to a cooking class yesterday.", observed_at=SAID)
    assert [hs.get(mid).content for mid in kept.created] == [
        "User went to a cooking class on 4 December 2023"
    ]


@pytest.mark.backends
def test_a_turn_is_dated_in_the_users_time_zone(settings: Settings, embedder: Embeddings) -> None:
    evening = datetime(2023, 12, 5, 3, 0, tzinfo=UTC)  # 19:00 on 4 December in Los Angeles
    owner = "user:la"
    west = settings.model_copy(update={"timezone": "America/Los_Angeles"})
    with Hindsight(west, embedder=embedder) as hs:
        kept = hs.retain(owner, "I attended a cooking class yesterday.", observed_at=evening)
        assert hs.get(kept.created[0]).content == "User attended a cooking class on 3 December 2023"
        (text,) = hs.store.db.read(  # what the keyword index reads of the turn
            "SELECT d.text FROM keyword_docs d JOIN memories m ON m.rowid = d.key WHERE m.id = ?",
            [kept.episodes[0]],
        )[0]
        # its own day and the day it means, in Los Angeles; not the UTC day
        assert "4 December 2023" in text and "3 December 2023" in text
        assert "5 December 2023" not in text
        assert hs.get(kept.episodes[0]).observed_at == evening  # stored as the instant it was


def test_a_question_naming_the_day_finds_the_turn_that_said_yesterday(hs: Hindsight) -> None:
    owner = "user:tw"
    hs.retain(owner, "I attended a cooking class yesterday.", observed_at=SAID)
    hs.retain(owner, "I attended a pottery class today.", observed_at=SAID)
    hits = hs.store.keyword_search(Filter(owners=[owner]), "attended class 4 December", 10)
    assert "cooking" in hs.get(hits[0][0]).content


WORDS = "last this week weekend month year yesterday night the day before ago days weeks"
WORDS += " a two 3 99 friday sunday , . in on of may feb. 31 2023 1999 0 past months years today"
WORDS += " 0000 9999 december 1st"


def _span(period: Period | None) -> tuple[str, str] | int | None:
    if period is None or period.month is not None:
        return period and period.month
    assert period.start is not None and period.end is not None
    return f"{period.start:%Y-%m-%d}", f"{period.end:%Y-%m-%d}"


@pytest.mark.parametrize(
    ("query", "span"),
    [
        ("What did Caroline do on 8 May, 2023?", ("2023-05-08", "2023-05-09")),
        ("the talk on May 8th, 2023", ("2023-05-08", "2023-05-09")),
        ("What did Caroline do in May 2023?", ("2023-05-01", "2023-06-01")),
        ("in early June of 2021", ("2021-06-01", "2021-07-01")),
        ("Mar. 2021", ("2021-03-01", "2021-04-01")),
        ("December 2023", ("2023-12-01", "2024-01-01")),
        ("in May", 5),  # any year's May
        ("in 2022", ("2022-01-01", "2023-01-01")),
        ("What did I eat yesterday?", ("2023-12-04", "2023-12-05")),
        ("today", ("2023-12-05", "2023-12-06")),
        ("last Friday", ("2023-12-01", "2023-12-02")),
        ("over the last weekend", ("2023-12-02", "2023-12-04")),
        ("three days ago", ("2023-12-02", "2023-12-03")),
        ("2 weeks ago", ("2023-11-20", "2023-11-27")),  # the calendar week, Monday first
        ("last week", ("2023-11-27", "2023-12-04")),
        ("this week", ("2023-12-04", "2023-12-11")),
        ("in the past week", ("2023-11-28", "2023-12-06")),
        ("the past 10 days", ("2023-11-25", "2023-12-06")),
        ("a month ago", ("2023-11-01", "2023-12-01")),
        ("this month", ("2023-12-01", "2024-01-01")),
        ("last year", ("2022-01-01", "2023-01-01")),
        ("two years ago", ("2021-01-01", "2022-01-01")),
        # a date named outright wins over a relative one
        ("last week, as mentioned on November 6, 2023", ("2023-11-06", "2023-11-07")),
        ("in the last week of August 2023", ("2023-08-01", "2023-09-01")),
        ("31 February 2023", None),  # no such day
        ("in May 0000, or 31 December 9999", None),  # no such year, or its end
        ("may I ask what you recommend?", None),
        ("What is my favourite colour?", None),
    ],
)
def test_the_span_a_query_names(query: str, span: tuple[str, str] | int | None) -> None:
    assert _span(asked_period(query, SAID)) == span


def test_a_period_holds_its_start_not_its_end() -> None:
    may = asked_period("in May 2023", SAID)
    assert may is not None
    assert datetime(2023, 5, 1, tzinfo=UTC) in may
    assert datetime(2023, 6, 1, tzinfo=UTC) not in may
    assert datetime(2021, 5, 9, tzinfo=UTC) in Period(month=5)
    assert "2023-05-02" not in may  # only datetimes are in a period


NEW_YORK = ZoneInfo("America/New_York")


def _utc(period: Period | None) -> tuple[datetime, datetime]:
    assert period is not None and period.start is not None and period.end is not None
    return period.start.astimezone(UTC), period.end.astimezone(UTC)


def test_days_are_the_askers_days() -> None:
    # 9 pm on 9 March in New York is already 10 March in UTC
    evening = datetime(2024, 3, 10, 2, 0, tzinfo=UTC)
    assert _utc(asked_period("what did I do today?", evening, NEW_YORK)) == (
        datetime(2024, 3, 9, 5, tzinfo=UTC),
        datetime(2024, 3, 10, 5, tzinfo=UTC),
    )
    assert _utc(asked_period("today", evening)) == (
        datetime(2024, 3, 10, tzinfo=UTC),
        datetime(2024, 3, 11, tzinfo=UTC),
    )
    # the day the clocks go forward has 23 hours; a named day starts at local midnight
    assert _utc(asked_period("on March 10, 2024", evening, NEW_YORK)) == (
        datetime(2024, 3, 10, 5, tzinfo=UTC),
        datetime(2024, 3, 11, 4, tzinfo=UTC),
    )
    tokyo = asked_period("in May 2023", evening, ZoneInfo("Asia/Tokyo"))
    assert _utc(tokyo)[0] == datetime(2023, 4, 30, 15, tzinfo=UTC)
    assert _utc(asked_period("last year", evening, timezone(timedelta(hours=5, minutes=30)))) == (
        datetime(2022, 12, 31, 18, 30, tzinfo=UTC),
        datetime(2023, 12, 31, 18, 30, tzinfo=UTC),
    )
    # "in May" of any year: 30 April 20:00 UTC is already May in Tokyo
    may = asked_period("in May", evening, ZoneInfo("Asia/Tokyo"))
    assert may is not None and may.month == 5
    assert datetime(2021, 4, 30, 20, tzinfo=UTC) in may
    assert datetime(2021, 4, 30, 20, tzinfo=UTC) not in Period(month=5)


def test_recall_takes_the_askers_time_zone(
    hs: Hindsight, settings: Settings, embedder: Embeddings
) -> None:
    owner = "user:tz"
    # 20:00 UTC on 30 April is 05:00 on 1 May in Tokyo
    hs.retain(owner, "I went hiking in the Alps.", observed_at="2023-04-30T20:00:00Z")
    query = "Where did I go hiking in May 2023?"
    (utc,) = hs.recall(owner, query, k=1)
    (tokyo,) = hs.recall(owner, query, k=1, timezone="Asia/Tokyo")
    assert utc.explanation.boosts["time"] == 1.0
    assert tokyo.explanation.boosts["time"] == 2.0
    assert hs.recall(owner, query, k=1, timezone="+09:00")[0].explanation.boosts["time"] == 2.0
    with pytest.raises(ValidationError, match="invalid timezone 'Mars/Olympus'"):
        hs.recall(owner, query, timezone="Mars/Olympus")
    hs.close()  # the same store, opened with Tokyo as the default
    tokyo_settings = settings.model_copy(update={"timezone": "Asia/Tokyo"})
    with Hindsight(tokyo_settings, embedder=embedder) as there:
        assert there.recall(owner, query, k=1)[0].explanation.boosts["time"] == 2.0
        assert there.recall(owner, query, k=1, timezone="UTC")[0].explanation.boosts["time"] == 1.0


@pytest.mark.parametrize(
    "zone", ["Mars/Olympus", "America", "../../etc/passwd", "/etc/localtime", "+24:00", "", 5]
)
def test_an_unknown_time_zone_is_refused(zone: object) -> None:
    with pytest.raises(ValidationError, match="invalid timezone"):
        validate.time_zone(zone)
    with pytest.raises(ValueError, match="timezone"):
        Settings(timezone=zone)


def test_a_query_naming_a_time_favours_memories_from_then(hs: Hindsight) -> None:
    owner = "user:tq"
    may = hs.retain(owner, "I went hiking in the Alps.", observed_at="2023-05-14").episodes[0]
    june = hs.retain(owner, "I went hiking in the Alps.", observed_at="2023-06-20").episodes[0]
    plain = hs.recall(owner, "Where did I go hiking?", k=2, kinds=["episode"])
    assert all("time" not in r.explanation.boosts for r in plain)  # no time named
    for query, first in (("Where did I go hiking in May 2023?", may), ("hiking in June", june)):
        results = hs.recall(owner, query, k=2, kinds=["episode"])
        assert results[0].memory.id == first
        boosts = {r.memory.id: r.explanation.boosts["time"] for r in results}
        assert boosts[first] == 2.0
        assert set(boosts.values()) == {1.0, 2.0}


@given(
    text=st.lists(st.sampled_from(WORDS.split())).map(" ".join),
    said=st.sampled_from([datetime.min, datetime.max]).map(lambda d: d.replace(tzinfo=UTC))
    | st.datetimes(timezones=st.just(UTC)),  # the calendar's first and last days, and between
)
def test_dates_at_the_ends_of_the_calendar_are_left_alone(text: str, said: datetime) -> None:
    referred_dates(text, said)
    once = pinned(f"Sam went {text}", said)
    assert pinned(once, said) == once


@pytest.mark.backends
def test_a_turn_from_the_first_years_is_kept_as_it_is(hs: Hindsight) -> None:
    """Year 0 does not exist: "two years ago" in year 2 stays as it was said."""
    kept = hs.retain("user:old", "I went hiking two years ago.", observed_at="0002-01-02")
    assert [hs.get(mid).content for mid in kept.created] == ["User went hiking two years ago"]


@given(
    text=st.lists(st.sampled_from(WORDS.split())).map(" ".join),
    said=st.datetimes(
        min_value=datetime(1971, 1, 1), max_value=datetime(2200, 12, 31), timezones=st.just(UTC)
    ),
    zone=st.sampled_from(
        [UTC, NEW_YORK, ZoneInfo("Asia/Kolkata"), ZoneInfo("Pacific/Kiritimati"), timezone.min]
    ),
)
def test_any_text_at_any_date_resolves_without_error(
    text: str, said: datetime, zone: tzinfo
) -> None:
    for words in referred_dates(text, said):
        assert words and words not in (str(said.year), f"{said:%B %Y}")
    text_pinned = pinned(text, said)
    assert text_pinned == text or pinned(text_pinned, said) == text_pinned  # pinned once
    period = asked_period(text, said, zone)
    if period is not None and period.month is None:
        assert period.start is not None and period.end is not None
        assert period.start < period.end
