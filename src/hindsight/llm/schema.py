"""The subset of JSON Schema that structured output checks: :func:`check_schema` refuses
a schema outside it (a keyword it would silently ignore is a check that never runs),
:func:`validate` says every way a value breaks one."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from hindsight.errors import ValidationError

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
