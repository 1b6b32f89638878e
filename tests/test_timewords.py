"""Relative dates in a text, resolved against when it was said, and found by date."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight import Hindsight
from hindsight.store import Filter
from hindsight.timewords import referred_dates

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


def test_a_question_naming_the_day_finds_the_turn_that_said_yesterday(hs: Hindsight) -> None:
    owner = "user:tw"
    hs.retain(owner, "I attended a cooking class yesterday.", observed_at=SAID)
    hs.retain(owner, "I attended a pottery class today.", observed_at=SAID)
    hits = hs.store.keyword_search(Filter(owners=[owner]), "attended class 4 December", 10)
    assert "cooking" in hs.get(hits[0][0]).content


WORDS = "last this week weekend month year yesterday night the day before ago days weeks"
WORDS += " a two 3 99 friday sunday , ."


@given(
    text=st.lists(st.sampled_from(WORDS.split())).map(" ".join),
    said=st.datetimes(
        min_value=datetime(1971, 1, 1), max_value=datetime(2200, 12, 31), timezones=st.just(UTC)
    ),
)
def test_any_text_at_any_date_resolves_without_error(text: str, said: datetime) -> None:
    for words in referred_dates(text, said):
        assert words and words not in (str(said.year), f"{said:%B %Y}")
