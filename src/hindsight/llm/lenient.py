"""Reading what real models answer: their form forgiven, each item checked on its own.

Models asked for ``{"memories": [...]}`` answer ``[...]``, ``{"items": [...]}``,
``{"result": {...}}`` or one bare item; they add fields, name one by a synonym, leave one
out, write ``"0.9"`` for ``0.9`` and ``"Fact"`` for ``"fact"``. :func:`read` brings an
answer to the schema where only its form differs, then checks each item of the answer's
lists against the schema on its own: a bad item is dropped and counted, the rest are
kept. What is kept is exactly as valid against the schema as before (enums, bounds,
lengths); nothing invalid is let through, it is only not allowed to sink its neighbours.

Every answer may (whatever :class:`Leniency` says):

- be a bare list, or a single item, of the answer's list (the schema's only array
  property, or :attr:`Leniency.list_key`); or hold the answer under one other key, a
  list under any key (``{"items": [...]}``) or an object (``{"result": {...}}``);
- carry fields the schema does not name (ignored), ``null`` for a field that is not
  required (as if absent), and no value for a required list (an empty one);
- give a number as a numeric string, a whole float for an integer, an enum's value in
  another case, with spaces or hyphens for ``_`` or in the plural, one object for a
  list of objects.

An answer is unusable (:func:`read` raises ``ValueError``, and the caller asks again)
when it is not an object of the schema at all, or when it is made of lists only and
every item of them was dropped: one bad item never costs the others.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from hindsight.llm.schema import validate

_NUMBER: Final = re.compile(r"\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*")
_ENUM_GAP: Final = re.compile(r"[\s-]+")
_WRAPPERS: Final = 3  # how deep an answer may be wrapped in one-key objects


@dataclass(frozen=True, slots=True)
class Leniency:
    """What one kind of answer may also get wrong and still be read.

    ``aliases`` maps a field name models use to the schema's (``{"type": "kind"}``),
    in any object of the answer whose schema has the target and not the alias.
    ``optional`` names required fields an item may leave out: the caller's reader
    fills them. ``list_key`` is where a bare list or a single item goes when the schema
    has several array properties.
    """

    aliases: Mapping[str, str] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()
    list_key: str | None = None


STRICT: Final = Leniency()


@dataclass(frozen=True, slots=True)
class Read:
    """A usable answer: ``value`` is valid against the schema (with ``optional`` fields
    allowed missing); ``dropped`` items of its lists were not, each said in ``problems``."""

    value: dict[str, Any]
    dropped: int = 0
    problems: tuple[str, ...] = ()


class Unusable(ValueError):
    """Nothing usable in an answer; ``dropped`` of its items were invalid."""

    def __init__(self, message: str, *, dropped: int = 0) -> None:
        super().__init__(message)
        self.dropped = dropped


@dataclass(slots=True)
class _Tally:
    dropped: int = 0
    problems: list[str] = field(default_factory=list)


def read(value: Any, schema: Mapping[str, Any], leniency: Leniency = STRICT) -> Read:
    """``value`` (a parsed answer) read against ``schema``, an object's; ``ValueError``
    saying why when nothing usable is in it."""
    relaxed = relax(schema, leniency.optional)
    shaped = envelope(value, relaxed, leniency)
    props = relaxed.get("properties") or {}
    if not isinstance(shaped, dict):
        raise Unusable(f"the answer must be a JSON object, not {_json_type(shaped)}")
    if not any(_target(k, props, leniency) in props for k in shaped):
        wanted = ", ".join(repr(k) for k in props)
        raise Unusable(f"the answer holds none of the fields asked for ({wanted})")
    tally = _Tally()
    cleaned = _clean(shaped, relaxed, leniency, "$", tally)
    if problems := validate(cleaned, relaxed):
        raise Unusable(
            "the answer does not match the schema: " + "; ".join(problems[:10]),
            dropped=tally.dropped,
        )
    lists = [k for k, s in props.items() if s.get("type") == "array"]
    if tally.dropped and len(lists) == len(props) and not any(cleaned[k] for k in lists):
        raise Unusable(
            "every item of the answer is invalid: " + "; ".join(tally.problems[:10]),
            dropped=tally.dropped,
        )
    return Read(cleaned, tally.dropped, tuple(tally.problems))


def relax(schema: Mapping[str, Any], optional: frozenset[str]) -> dict[str, Any]:
    """``schema`` with the ``optional`` fields no longer required, at any depth."""
    out = dict(schema)
    if "required" in out:
        out["required"] = [k for k in out["required"] if k not in optional]
    if isinstance(out.get("properties"), Mapping):
        out["properties"] = {k: relax(s, optional) for k, s in out["properties"].items()}
    if isinstance(out.get("items"), Mapping):
        out["items"] = relax(out["items"], optional)
    return out


# -- the envelope -------------------------------------------------------------------------------
def list_key(schema: Mapping[str, Any], leniency: Leniency = STRICT) -> str | None:
    """The answer's list: ``leniency.list_key``, else the schema's only array property."""
    if leniency.list_key is not None:
        return leniency.list_key
    props = schema.get("properties") or {}
    arrays = [k for k, s in props.items() if s.get("type") == "array"]
    return arrays[0] if len(arrays) == 1 else None


def envelope(value: Any, schema: Mapping[str, Any], leniency: Leniency = STRICT) -> Any:
    """``value`` as an object of ``schema``'s where it is the answer's list, one item of
    it, or the answer wrapped in another object; else ``value`` as it is."""
    props = schema.get("properties") or {}
    key = list_key(schema, leniency)
    items = props[key].get("items") if key else None
    for _ in range(_WRAPPERS + 1):
        if isinstance(value, list) and key is not None:
            return {key: value}
        if not isinstance(value, dict):
            return value
        if any(_target(k, props, leniency) in props for k in value):
            return value
        [inner] = value.values() if len(value) == 1 else [None]
        if isinstance(inner, dict | list):
            value = inner  # the answer under another key: {"result": {...}}, {"items": [...]}
            continue
        if key is not None and isinstance(items, Mapping) and _is_item(value, items, leniency):
            return {key: [value]}
        lists = [v for v in value.values() if isinstance(v, list)]
        if key is not None and len(lists) == 1:
            return {key: lists[0]}  # the one list beside other fields
        return value
    return value


def _is_item(value: Mapping[str, Any], schema: Mapping[str, Any], leniency: Leniency) -> bool:
    """Whether ``value`` has a required field of an item (under its name or an alias)."""
    props = schema.get("properties") or {}
    required = set(schema.get("required", ())) or set(props)
    return any(_target(k, props, leniency) in required for k in value)


def _target(key: str, props: Mapping[str, Any], leniency: Leniency) -> str:
    """The schema's name for ``key``: itself, or what it is an alias of."""
    if key in props:
        return key
    return leniency.aliases.get(key, key)


# -- cleaning -----------------------------------------------------------------------------------
def _clean(
    value: Any, schema: Mapping[str, Any], leniency: Leniency, path: str, tally: _Tally
) -> Any:
    value = coerce(value, schema)
    if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        return _object(value, schema, leniency, path, tally)
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return _array(value, schema, leniency, path, tally)
    return value


def _object(
    value: dict[str, Any], schema: Mapping[str, Any], leniency: Leniency, path: str, tally: _Tally
) -> dict[str, Any]:
    props: Mapping[str, Any] = schema["properties"]
    required = set(schema.get("required", ()))
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = _target(key, props, leniency)
        if name not in props:
            if schema.get("additionalProperties") is not False:
                out.setdefault(key, item)
            continue  # a field the schema does not name: ignored
        if name in out and name != key:
            continue  # the field under its own name wins over an alias
        if item is None and name not in required and not _allows_null(props[name]):
            continue  # null for an optional field: absent
        out[name] = _clean(item, props[name], leniency, f"{path}.{name}", tally)
    for name in required - set(out):
        if props.get(name, {}).get("type") == "array":
            out[name] = []  # a list not given: none
    return out


def _array(
    value: list[Any], schema: Mapping[str, Any], leniency: Leniency, path: str, tally: _Tally
) -> list[Any]:
    """The items valid on their own. Those of the answer's own lists (``$.memories``)
    that are not are counted; deeper ones (a query hint too long) are only left out."""
    items: Mapping[str, Any] = schema["items"]
    top = path.count(".") == 1 and "[" not in path
    kept: list[Any] = []
    for i, item in enumerate(value):
        where = f"{path}[{i}]"
        cleaned = _clean(item, items, leniency, where, tally)
        if problems := validate(cleaned, items, where):
            if top:
                tally.dropped += 1
                tally.problems.append("; ".join(problems[:3]))
            continue
        kept.append(cleaned)
    limit = schema.get("maxItems")
    if limit is not None and len(kept) > limit:
        if top:
            tally.dropped += len(kept) - limit
            tally.problems.append(f"{path}: more than {limit} items, the rest dropped")
        kept = kept[:limit]
    return kept


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _allows_null(schema: Mapping[str, Any]) -> bool:
    types = schema.get("type")
    return types is None or "null" in (types if isinstance(types, list) else [types])


def coerce(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` in the form ``schema`` asks for, where only its form differs: a numeric
    string as a number, a whole float as an integer, an enum's value written otherwise
    (case, spaces, hyphens, a plural), one object as a list of objects."""
    types = schema.get("type")
    allowed = set(types if isinstance(types, list) else [types])
    if isinstance(value, str) and allowed & {"number", "integer"} and _NUMBER.fullmatch(value):
        number = float(value)
        value = int(number) if "integer" in allowed and number.is_integer() else number
    if isinstance(value, float) and "integer" in allowed and "number" not in allowed:
        value = int(value) if value.is_integer() else value
    if isinstance(value, str) and "enum" in schema and value not in schema["enum"]:
        written = _ENUM_GAP.sub("_", value.strip().lower())
        for form in (written, written.removesuffix("s")):  # "Fact", "tool result", "facts"
            if form in schema["enum"]:
                value = form
                break
    if isinstance(value, dict) and allowed == {"array"}:
        items = schema.get("items")
        if isinstance(items, Mapping) and items.get("type") == "object":
            value = [value]
    return value
