"""Structured output: a JSON object valid against a schema, or an error; never junk.

:func:`ask` sends the schema as the provider's structured-output format first
(OpenAI's ``response_format: json_schema``; Anthropic's forced tool). A server that
rejects schemas (a 400 naming ``response_format`` or ``json_schema``) is asked again in
JSON mode with the schema in the prompt, and the provider remembers it. The answer is
cleaned (reasoning blocks such as ``<think>...</think>``, also unterminated, and code
fences), parsed, checked for a schema echoed back instead of filled, and read
(:func:`hindsight.llm.lenient.read`): its form forgiven (a bare list, a wrapper object,
synonyms, extra fields), each item of its lists validated on its own (:func:`validate`,
the subset of JSON Schema that :func:`check_schema` accepts), the bad ones dropped and
counted. An answer with nothing usable in it (not JSON, not the schema's object, every
item bad) is sent back once, quoting the error; a second one raises
:class:`~hindsight.errors.LLMOutputError`. A cut-off answer is never parsed.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hindsight.errors import (
    LLMError,
    LLMOutputError,
    LLMRequestError,
    LLMTruncatedError,
    ValidationError,
)
from hindsight.llm.lenient import STRICT, Leniency, Read, Unusable, read
from hindsight.llm.messages import Completer, Completion, CompletionRequest, Format, Message, Usage
from hindsight.llm.schema import check_schema, validate

__all__ = [
    "Leniency",
    "Structured",
    "ask",
    "check_answer",
    "check_schema",
    "echoes_schema",
    "parse_json",
    "schema_prompt",
    "strip_reasoning",
    "validate",
]

_log = logging.getLogger("hindsight.llm")

_REASONING: Final = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_OPEN: Final = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_CLOSE: Final = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE: Final = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
# what a 400 says when the server does not take a schema as the answer's format
_SCHEMA_REJECTED: Final = re.compile(r"response_format|json_schema|tool", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Structured:
    """A valid answer: ``value`` passed the schema (but for fields the call's
    :class:`Leniency` lets its reader fill), its bad items dropped. ``usage`` and
    ``retries`` add up every call it took; ``attempts`` is 1, or 2 after a retry that
    quoted an error; ``format`` is how it was asked for; ``dropped`` counts the items of
    its lists left out as invalid (see :mod:`hindsight.llm.lenient`), in every answer
    it took."""

    value: dict[str, Any]
    usage: Usage
    retries: int
    attempts: int
    format: Format
    dropped: int = 0


# -- cleaning and parsing ---------------------------------------------------------------------
def strip_reasoning(text: str) -> str:
    """``text`` without reasoning blocks: closed ones, a closing tag whose opening the
    server dropped (everything before it), and an unterminated one (its tag only: the
    JSON is looked for in what follows)."""
    text = _REASONING.sub("", text)
    if closing := list(_CLOSE.finditer(text)):
        text = text[closing[-1].end() :]
    if opening := _OPEN.search(text):
        text = text[opening.end() :]
    return text.strip()


def _json_spans(text: str) -> list[str]:
    """Top-level ``{...}`` and ``[...]`` spans of ``text`` (string-aware)."""
    spans, depth, start, in_string, escaped = [], 0, -1, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and depth:
            in_string = True
        elif ch in "{[":
            if depth == 0:
                start = i
            depth += 1
        elif ch in "}]" and depth:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def parse_json(text: str) -> Any:
    """The JSON value in a model's answer: reasoning and code fences stripped; where
    prose surrounds it, the largest span that parses. Raises ``ValueError``."""
    cleaned = strip_reasoning(text)
    if fence := _FENCE.search(cleaned):
        cleaned = fence.group(1).strip()
    try:
        return json.loads(cleaned)
    except ValueError:
        pass
    parsed = []
    for span in _json_spans(cleaned):
        try:
            parsed.append((len(span), json.loads(span)))
        except ValueError:
            continue
    if not parsed:
        raise ValueError("the answer holds no JSON value")
    return max(parsed, key=lambda p: p[0])[1]


def echoes_schema(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` is the schema (or a schema) rather than an instance of it."""
    if not isinstance(value, dict):
        return False
    if value == dict(schema) or "$schema" in value:
        return True
    own = set((schema.get("properties") or {}).keys())
    looks = "type" in value and isinstance(value.get("properties"), dict)
    return looks and not {"type", "properties"} <= own


def check_answer(
    text: str, schema: Mapping[str, Any], leniency: Leniency = STRICT
) -> dict[str, Any]:
    """The answer as a valid object (its bad items dropped), or ``ValueError`` saying
    what is wrong with it."""
    return _read(text, schema, leniency).value


def _read(text: str, schema: Mapping[str, Any], leniency: Leniency) -> Read:
    try:
        value = parse_json(text)
    except ValueError as exc:
        raise ValueError(f"the answer is not JSON: {exc}") from None
    if echoes_schema(value, schema):
        raise ValueError(
            "the answer repeats the JSON schema; answer with an object that fills it in"
        )
    return read(value, schema, leniency)


# -- asking -----------------------------------------------------------------------------------
def schema_prompt(schema: Mapping[str, Any]) -> str:
    return (
        "Answer with one JSON object, and nothing else, that is valid against this JSON "
        "schema (fill it in; do not repeat it):\n" + json.dumps(schema, indent=1)
    )


def _request(
    messages: Sequence[Message],
    schema: Mapping[str, Any],
    *,
    name: str,
    fmt: Format,
    model: str | None,
    max_tokens: int,
    temperature: float,
) -> CompletionRequest:
    if fmt == "json_object":  # the schema travels in the prompt
        messages = [Message("system", schema_prompt(schema)), *messages]
    return CompletionRequest(
        tuple(messages),
        model=model,
        max_tokens=max_tokens,
        temperature=temperature,
        schema=schema,
        schema_name=name,
        format=fmt,
    )


def _send(llm: Completer, request: CompletionRequest) -> tuple[Completion, Format]:
    """Send; where the server rejects the schema format, again in JSON mode."""
    try:
        return llm.complete(request), request.format
    except LLMRequestError as exc:
        if request.format != "json_schema" or exc.status not in (400, 422):
            raise
        if not _SCHEMA_REJECTED.search(str(exc)):
            raise
        system = Message("system", schema_prompt(request.schema or {}))
        fallback = CompletionRequest(
            (system, *request.messages),
            model=request.model,
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            schema=request.schema,
            schema_name=request.schema_name,
            format="json_object",
        )
        answer = llm.complete(fallback)
        # remembered once JSON mode worked: later calls go straight to it
        llm.json_schema = False
        return (
            Completion(
                answer.text,
                answer.finish_reason,
                answer.usage,
                answer.model,
                answer.retries + exc.retries,
            ),
            "json_object",
        )


def ask(
    llm: Completer,
    messages: Sequence[Message],
    schema: Mapping[str, Any],
    *,
    name: str = "answer",
    model: str | None = None,
    max_tokens: int = 1_024,
    temperature: float = 0.0,
    leniency: Leniency = STRICT,
) -> Structured:
    """A JSON object from ``llm`` valid against ``schema``; see the module's docstring.
    ``leniency`` says what else this kind of answer may get wrong (synonyms of its
    fields, fields its reader fills).

    Tokens, retries and dropped items of a call that fails are on the error
    (``prompt_tokens``, ``completion_tokens``, ``retries``, ``dropped_items``), so what
    was spent is still counted.
    """
    check_schema(schema)
    if schema.get("type") != "object":
        raise ValidationError("a structured answer's schema must be of type object")
    conversation = list(messages)
    usage, retries, dropped = Usage(), 0, 0
    fmt: Format = "json_schema" if llm.json_schema else "json_object"
    for attempt in (1, 2):
        request = _request(
            conversation,
            schema,
            name=name,
            fmt=fmt,
            model=model,
            max_tokens=max_tokens,
            temperature=temperature,
        )
        try:
            answer, fmt = _send(llm, request)
        except LLMError as exc:
            raise _spent(exc, usage, retries) from exc
        usage, retries = usage + answer.usage, retries + answer.retries
        if answer.truncated:
            raise _spent(
                LLMTruncatedError(f"the answer was cut off at {max_tokens} tokens: dropped"),
                usage,
                retries,
            )
        try:
            got = _read(answer.text, schema, leniency)
        except ValueError as problem:
            dropped += problem.dropped if isinstance(problem, Unusable) else 0
            if attempt == 2:
                failure = LLMOutputError(f"dropped after a retry: {problem}")
                failure.dropped_items = dropped
                raise _spent(failure, usage, retries) from None
            # once more, with the model's answer and what is wrong with it
            conversation += [
                Message("assistant", answer.text[:4_000]),
                Message("user", f"{problem}. Answer again with the corrected JSON object only."),
            ]
            continue
        if got.dropped:
            _log.warning(
                "%s: %d item(s) of the answer dropped as invalid: %s",
                name,
                got.dropped,
                "; ".join(got.problems[:5]),
            )
        return Structured(got.value, usage, retries, attempt, fmt, dropped + got.dropped)
    raise AssertionError("unreachable: the second attempt returns or raises")


def _spent(exc: LLMError, usage: Usage, retries: int) -> LLMError:
    exc.prompt_tokens += usage.prompt_tokens
    exc.completion_tokens += usage.completion_tokens
    exc.retries += retries
    return exc
