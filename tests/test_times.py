"""Every time input on every interface: a validation error or a time that works, even at
the calendar's ends and with any offset (9999-12-31T23:59:59-14:00 once raised OverflowError)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from hindsight import Hindsight, Settings, ValidationError, validate
from hindsight.api import create_app
from hindsight.cli import cli

OWNER = "user:alice"
ENDS = [
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59.999999",
    "0001-01-01",
    "9998-12-31T23:59:59-23:59",
]


@given(
    st.datetimes(timezones=st.just(None) | st.timezones()),
    st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1),
)
def test_any_time_with_any_offset_is_accepted_or_refused_cleanly(
    when: datetime, minutes: int
) -> None:
    for value in (when, when.replace(tzinfo=timezone(timedelta(minutes=minutes))).isoformat()):
        try:
            utc = validate.timestamp(value, field="since")
        except ValidationError as exc:
            assert "must lie between" in str(exc)
            continue
        assert utc is not None and utc.tzinfo is UTC
        assert validate.EARLIEST <= utc <= validate.LATEST
        for hours in (-24, 24):  # shown in any zone: still in the calendar
            (utc + timedelta(hours=hours)).astimezone(timezone(timedelta(hours=-hours // 2)))


@pytest.mark.embedded
def test_the_library_refuses_them_and_keeps_the_store(hs: Hindsight) -> None:
    hs.retain(OWNER, "I live in Lisbon.")
    before = list(hs.export(OWNER))
    for when in ENDS:
        for call, kwargs in (
            (hs.retain, {"content": "x", "observed_at": when}),
            (hs.retain, {"messages": [{"content": "x", "observed_at": when}]}),
            (hs.recall, {"query": "bees", "since": when}),
            (hs.recall, {"query": "bees", "until": when}),
            (hs.forget, {"since": when}),
            (hs.reflect, {"since": when}),
        ):
            owner = {"owner": OWNER} if call == hs.forget else {}
            args = () if owner else (OWNER,)
            with pytest.raises(ValidationError, match="must lie between"):
                call(*args, **owner, **kwargs)
    assert list(hs.export(OWNER)) == before and len(before) == 2


@pytest.fixture
def api(hs: Hindsight) -> Iterator[TestClient]:
    with TestClient(create_app(hs, mcp=False), base_url="http://127.0.0.1") as client:
        yield client


@pytest.mark.embedded
@pytest.mark.parametrize("when", ENDS)
def test_every_rest_route_with_a_time_answers_400(api: TestClient, when: str) -> None:
    record = {"id": "m_1", "owner": OWNER, "kind": "fact", "content": "x", "confidence": 0.5}
    turn = {"content": "x", "observed_at": when}
    calls = [
        ("POST", "/v1/memories", {"owner": OWNER, "content": "x", "observed_at": when}),
        (
            "POST",
            "/v1/memories",
            {"owner": OWNER, "messages": [turn]},
        ),
        ("POST", "/v1/recall", {"owners": [OWNER], "query": "x", "since": when}),
        ("POST", "/v1/recall", {"owners": [OWNER], "query": "x", "until": when}),
        ("POST", "/v1/forget", {"owner": OWNER, "since": when}),
        ("POST", "/v1/reflect", {"owner": OWNER, "until": when}),
        ("POST", "/v1/import", {"records": [{**record, "observed_at": when}]}),
    ]
    for method, path, body in calls:
        answer = api.request(method, path, json=body)
        assert answer.status_code == 400, (path, answer.text)
        assert answer.json()["error"]["type"] == "ValidationError"


@pytest.mark.embedded
@pytest.mark.parametrize("when", ENDS[:2])
def test_the_cli_says_so_in_one_line(settings: Settings, tmp_path: Path, when: str) -> None:
    runner = CliRunner()
    home = ["--home", str(settings.home)]
    for args in (
        ["retain", "--owner", OWNER, "--observed-at", when, "I keep bees."],
        ["recall", "--owner", OWNER, "--since", when, "bees"],
        ["forget", "--owner", OWNER, "--since", when, "--yes"],
    ):
        result = runner.invoke(cli, [*home, *args])
        assert result.exit_code == 2, (args, result.output)
        assert "must lie between" in result.output and "Traceback" not in result.output
