"""One recall request, declared once: the library, the REST schema and the client take
its fields, defaults and help from :class:`RecallRequest`."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import get_type_hints

import pytest

from hindsight import Hindsight, Kind, RecallRequest, ValidationError
from hindsight.api.schemas import RecallIn
from hindsight.recall.request import RecallOptions, help_of


def test_the_options_are_the_requests_fields_beside_owners_and_query() -> None:
    fields = {f.name: f for f in dataclasses.fields(RecallRequest)}
    hints = get_type_hints(RecallRequest)
    options = get_type_hints(RecallOptions)
    assert set(options) == set(fields) - {"owners", "query"}
    for name, annotation in options.items():
        assert annotation == hints[name], name


def test_the_rest_body_has_the_requests_fields_defaults_and_help() -> None:
    schema = RecallIn.model_json_schema()
    for f in dataclasses.fields(RecallRequest):
        prop = schema["properties"][f.name]
        assert prop["description"] == help_of(f.name)
        if f.default is dataclasses.MISSING:
            assert f.name in schema["required"]
        else:
            assert prop["default"] == f.default
    assert schema["properties"]["k"]["maximum"] == 1_000
    assert schema["additionalProperties"] is False


def test_a_request_given_whole_answers_as_its_arguments_do(hs: Hindsight) -> None:
    hs.retain("user:a", "I live in Lisbon and I keep bees.", kind=Kind.FACT)
    hs.retain("user:a", "My sister plays the cello.", kind=Kind.FACT)
    request = RecallRequest(owners="user:a", query="where do I live?", k=1)
    by_request = [r.memory.id for r in hs.recall(request)]
    by_arguments = [r.memory.id for r in hs.recall("user:a", "where do I live?", k=1)]
    assert by_request == by_arguments and len(by_request) == 1


def test_a_request_with_more_arguments_is_refused(hs: Hindsight) -> None:
    request = RecallRequest(owners="user:a", query="bees")
    with pytest.raises(TypeError, match="RecallRequest alone"):
        hs.recall(request, "bees")  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        hs.recall("user:a", "bees", top=3)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"k": 0}, "k"),
        ({"include_history": "yes"}, "include_history"),
        ({"expand": 1}, "expand"),
        ({"kinds": ["feeling"]}, "kind"),
        ({"since": "last tuesday"}, "since"),
        ({"min_confidence": 2}, "min_confidence"),
    ],
)
def test_a_bad_option_is_named(hs: Hindsight, options: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        hs.recall(RecallRequest(owners="user:a", query="bees", **options))  # type: ignore[arg-type]


def test_owners_of_a_wrong_type_are_a_validation_error(hs: Hindsight) -> None:
    with pytest.raises(ValidationError, match="owners"):
        hs.recall(RecallRequest(owners=7, query="bees"))  # type: ignore[arg-type]


def test_the_json_form_is_what_the_rest_body_takes() -> None:
    request = RecallRequest(
        owners=("user:a", "shared:team"),
        query="bees",
        kinds=[Kind.FACT],
        since=datetime(2024, 5, 1, tzinfo=UTC),
    )
    body = request.to_json()
    assert body["owners"] == ["user:a", "shared:team"]
    assert body["kinds"] == ["fact"] and body["since"] == "2024-05-01T00:00:00+00:00"
    assert RecallRequest(**RecallIn.model_validate(body).model_dump()) == dataclasses.replace(
        request, owners=["user:a", "shared:team"], kinds=["fact"], since=body["since"]
    )
