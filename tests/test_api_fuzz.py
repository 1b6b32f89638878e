"""Fuzz the REST API from its own OpenAPI schema (schemathesis, in-process over ASGI).

Each operation gets generated requests, valid and invalid; none may answer 5xx, and
every answer must match the schema (status code, content type, body). The request
timeout is short, so a call that hung would be a 503 and fail here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, note, settings
from schemathesis import BaseSchema, Case, CheckFunction, GenerationMode
from schemathesis.openapi import from_asgi
from schemathesis.specs.openapi.checks import positive_data_acceptance

from hindsight import Hindsight, Settings
from hindsight.access import KeyRing
from hindsight.api import create_app
from hindsight.embed import Embeddings

EXAMPLES = 8  # per operation and mode: about ten seconds over the whole API on two cores
KEY = "fuzz-key-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}
# The schema states each field's own rules; rules across fields ("content or messages,
# not both"), or on content ("not blank"), leave schema-valid requests the library refuses.
UNCHECKED: list[CheckFunction] = [positive_data_acceptance]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Embeddings) -> Iterator[FastAPI]:
    home = tmp_path_factory.mktemp("fuzz")
    config = Settings(home=home, sqlite_synchronous="OFF", request_timeout_seconds=10)
    keys = KeyRing.parse({"keys": [{"name": "fuzz", "key": KEY, "write": ["*"]}]})
    with Hindsight(config, embedder=embedder) as hs:
        hs.retain("user:alice", "I live in Paris and I love jazz.", session_id="s1")
        hs.observe("user:alice", "s2", "I am planning a trip to Rome.")
        yield create_app(hs, keyring=keys, mcp=False)


@pytest.fixture(scope="module")
def api_schema(app: FastAPI) -> BaseSchema:
    return from_asgi("/openapi.json", app)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_operation_fails_or_strays_from_its_schema(
    app: FastAPI, api_schema: BaseSchema, mode: GenerationMode
) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]  # type: ignore[union-attr]
    assert len(operations) >= 20
    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not (
            operation.body or any(True for _ in operation.iter_parameters())
        ):
            continue  # nothing to get wrong: /health, /ready, /metrics

        @given(case=operation.as_strategy(mode))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,  # the same examples each run, so a failure reproduces
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: Case[Any]) -> None:
            note(f"{case.method} {case.formatted_path}")
            response = case.call_and_validate(headers=AUTH, excluded_checks=UNCHECKED)
            assert response.status_code < 500, response.text

        check()
    # every operation was really called (the server counts requests per operation id)
    called = {
        sample.labels["operation"]
        for metric in app.state.metrics.registry.collect()
        for sample in metric.samples
        if sample.name == "hindsight_http_requests_total"
    }
    assert {op.definition.raw["operationId"] for op in operations} <= called
