"""Structured output: a JSON object valid against a schema, or an error; never junk.

:func:`ask` sends the schema as the provider's structured-output format first
(OpenAI's ``response_format: json_schema``; Anthropic's forced tool). A server that
rejects schemas (a 400 naming ``response_format`` or ``json_schema``) is asked again in
JSON mode with the schema in the prompt, and the provider remembers it. The answer is
cleaned (reasoning blocks such as ``<think>...</think>``, also unterminated, and code
fences), parsed, checked for a schema echoed back instead of filled, and validated
(:func:`validate`, the subset of JSON Schema that :func:`check_schema` accepts). A
failure is sent back once, quoting the error; a second failure raises
:class:`~hindsight.errors.LLMOutputError`. A cut-off answer is never parsed.
"""

from __future__ import annotations

import json
import math
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
from hindsight.llm.base import LLM, Completion, CompletionRequest, Format, Message, Usage

_TYPES: Final = {"object", "array", "string", "number", "integer", "boolean", "null"}
_KEYWORDS: Final = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "description",
        "title",
        "$schema",
    }
)
_REASONING: Final = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_OPEN: Final = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_CLOSE: Final = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE: Final = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
# what a 400 says when the server does not take a schema as the answer's format
_SCHEMA_REJECTED: Final = re.compile(r"response_format|json_schema|tool", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Structured:
    """A valid answer: ``value`` passed the schema. ``usage`` and ``retries`` add up
    every call it took; ``attempts`` is 1, or 2 after a retry that quoted an error;
    ``format`` is how it was asked for."""

    value: dict[str, Any]
    usage: Usage
    retries: int
    attempts: int
    format: Format


# -- the schema subset ------------------------------------------------------------------------
def check_schema(schema: Mapping[str, Any], path: str = "$") -> None:
    """Refuse a schema outside the subset :func:`validate` checks (a keyword it would
    silently ignore is a check that never runs)."""
    if not isinstance(schema, Mapping):
        raise ValidationError(f"schema at {path} must be an object")
    if unknown := sorted(set(schema) - _KEYWORDS):
        raise ValidationError(f"schema at {path} uses unsupported keywords: {unknown}")
    types = schema.get("type")
    for t in types if isinstance(types, list) else [types]:
        if t is not None and t not in _TYPES:
            raise ValidationError(f"schema at {path} has unknown type {t!r}")
    for key, sub in (schema.get("properties") or {}).items():
        check_schema(sub, f"{path}.{key}")
    if isinstance(schema.get("items"), Mapping):
        check_schema(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), Mapping):
        raise ValidationError(f"schema at {path}: additionalProperties must be true or false")


def _is(value: Any, t: str) -> bool:
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return {
        "object": dict,
        "array": list,
        "string": str,
        "boolean": bool,
        "null": type(None),
    }[t] is type(value)


def validate(value: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (the :func:`check_schema` subset), each with
    its JSON path; ``[]`` when it is valid."""
    types = schema.get("type")
    if types is not None:
        allowed = types if isinstance(types, list) else [types]
        if not any(_is(value, t) for t in allowed):
            return [f"{path}: expected {' or '.join(allowed)}, got {type(value).__name__}"]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            problems.append(f"{path}: {value!r} is not a finite number")
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path}: {value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path}: {value} is above the maximum {schema['maximum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            problems.append(f"{path}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{path}: longer than {schema['maxLength']} characters")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            problems.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{path}: more than {schema['maxItems']} items")
        if isinstance(schema.get("items"), Mapping):
            for i, item in enumerate(value):
                problems += validate(item, schema["items"], f"{path}[{i}]")
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        problems += [f"{path}: missing {k!r}" for k in schema.get("required", ()) if k not in value]
        for key, item in value.items():
            if key in properties:
                problems += validate(item, properties[key], f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                problems.append(f"{path}: unexpected property {key!r}")
    return problems


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


def check_answer(text: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The answer as a valid object, or ``ValueError`` saying what is wrong with it."""
    try:
        value = parse_json(text)
    except ValueError as exc:
        raise ValueError(f"the answer is not JSON: {exc}") from None
    if echoes_schema(value, schema):
        raise ValueError(
            "the answer repeats the JSON schema; answer with an object that fills it in"
        )
    if problems := validate(value, schema):
        raise ValueError("the answer does not match the schema: " + "; ".join(problems[:10]))
    if not isinstance(value, dict):
        raise ValueError("the answer must be a JSON object")
    return value


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


def _send(llm: LLM, request: CompletionRequest) -> tuple[Completion, Format]:
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
    llm: LLM,
    messages: Sequence[Message],
    schema: Mapping[str, Any],
    *,
    name: str = "answer",
    model: str | None = None,
    max_tokens: int = 1_024,
    temperature: float = 0.0,
) -> Structured:
    """A JSON object from ``llm`` valid against ``schema``; see the module's docstring.

    Tokens and retries of a call that fails are on the error (``prompt_tokens``,
    ``completion_tokens``, ``retries``), so what was spent is still counted.
    """
    check_schema(schema)
    if schema.get("type") != "object":
        raise ValidationError("a structured answer's schema must be of type object")
    conversation = list(messages)
    usage, retries = Usage(), 0
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
            value = check_answer(answer.text, schema)
        except ValueError as problem:
            if attempt == 2:
                raise _spent(
                    LLMOutputError(f"dropped after a retry: {problem}"), usage, retries
                ) from None
            # once more, with the model's answer and what is wrong with it
            conversation += [
                Message("assistant", answer.text[:4_000]),
                Message("user", f"{problem}. Answer again with the corrected JSON object only."),
            ]
            continue
        return Structured(value, usage, retries, attempt, fmt)
    raise AssertionError("unreachable: the second attempt returns or raises")


def _spent(exc: LLMError, usage: Usage, retries: int) -> LLMError:
    exc.prompt_tokens += usage.prompt_tokens
    exc.completion_tokens += usage.completion_tokens
    exc.retries += retries
    return exc
