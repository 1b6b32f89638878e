"""A recall as asked: one typed object, :class:`RecallRequest`, built once at each
interface (the library's keyword arguments, the REST body, the MCP tool, the CLI's
options, the client's call) and passed down; and :class:`RecallPlan`, the request
checked, which the recall cache and the search read.

The fields, their defaults, help and bounds are declared here only: the REST schema
and the MCP tool take theirs from :func:`help_of` and :func:`bounds_of`, and
:class:`RecallOptions` (the keyword arguments' types) is pinned to the fields by a test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any, Final, TypedDict

from hindsight import validate
from hindsight.errors import ValidationError
from hindsight.models import MAX_K, Kind
from hindsight.store import Filter

#: Owner weights in a recall lie in this range, so a score is always a finite number.
MIN_OWNER_WEIGHT: Final = 0.001
MAX_OWNER_WEIGHT: Final = 1_000.0

#: Whose memories: one owner, several, or owners with weights.
Owners = str | Sequence[str] | Mapping[str, float]


def _about(help: str, **bounds: float) -> dict[str, Any]:
    """A field's metadata: its help text and the bounds the REST schema states."""
    return {"help": help, **bounds}


@dataclass(frozen=True, kw_only=True)
class RecallRequest:
    """A recall: whose memories (``owners``), what (``query``), and how."""

    owners: Owners = field(
        metadata=_about(
            'One owner, a list, or weights such as {"user:alice": 1, "shared:team": 0.5}.'
        )
    )
    query: str = field(metadata=_about("What to find: a question, or a topic."))
    k: int = field(
        default=10, metadata=_about("How many results at most.", minimum=1, maximum=MAX_K)
    )
    kinds: Sequence[Kind | str] | None = field(
        default=None, metadata=_about("Only memories of these kinds.")
    )
    since: datetime | str | None = field(
        default=None,
        metadata=_about(
            "Only memories observed at or after this time: an ISO 8601 date or time, e.g. "
            "2024-05-01 or 2024-05-01T14:30:00Z."
        ),
    )
    until: datetime | str | None = field(
        default=None,
        metadata=_about("Only memories observed before this time (ISO 8601, as since)."),
    )
    min_confidence: float | None = field(
        default=None,
        metadata=_about(
            "Only memories at least this confident (as decayed).",
            minimum=0,
            maximum=1,
        ),
    )
    token_budget: int | None = field(
        default=None, metadata=_about("Fit the results' contents in this many tokens.")
    )
    include_history: bool = field(default=False, metadata=_about("Include superseded memories."))
    timezone: str | None = field(
        default=None,
        metadata=_about(
            "The asker's time zone, for the days that 'yesterday' or 'on 8 May' in the query "
            "mean: an IANA name such as 'America/New_York', or an offset such as '-05:00'; by "
            "default the server's setting (UTC unless set).",
        ),
    )
    expand: bool | None = field(
        default=None,
        metadata=_about(
            "Let the LLM split the query into sub-queries searched beside it (with an LLM "
            "configured; by default the llm_expand setting).",
        ),
    )

    def to_json(self) -> dict[str, Any]:
        """The request as a JSON object (the REST API's body)."""
        body = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        owners = self.owners
        body["owners"] = owners if isinstance(owners, str | Mapping) else list(owners)
        if self.kinds is not None:
            body["kinds"] = [str(x) for x in self.kinds]
        for name in ("since", "until"):
            if isinstance(body[name], datetime):
                body[name] = body[name].isoformat()
        return body

    def plan(self, *, max_chars: int, zone: tzinfo) -> RecallPlan:
        """This request checked (:class:`ValidationError` naming what is wrong), with
        ``zone`` the time zone when it names none."""
        weights = owner_weights(self.owners)
        query = validate.text(self.query, field="query", limit=max_chars)
        k = validate.positive(self.k, field="k", maximum=MAX_K)
        budget = self.token_budget
        if budget is not None:
            budget = validate.positive(budget, field="token_budget", maximum=10**7)
        if not isinstance(self.include_history, bool):
            raise ValidationError("include_history must be true or false")
        if self.expand is not None and not isinstance(self.expand, bool):
            raise ValidationError("expand must be true or false")
        flt = Filter(
            owners=list(weights),
            kinds=[validate.choice(Kind, x, field="kind") for x in self.kinds]
            if self.kinds
            else None,
            since=validate.timestamp(self.since, field="since"),
            until=validate.timestamp(self.until, field="until"),
            min_confidence=None
            if self.min_confidence is None
            else validate.confidence(self.min_confidence, field="min_confidence"),
            current_only=not self.include_history,
        )
        return RecallPlan(
            filter=flt,
            query=query,
            k=k,
            weights=weights,
            zone=zone if self.timezone is None else validate.time_zone(self.timezone),
            token_budget=budget,
            expand=self.expand,
        )


class RecallOptions(TypedDict, total=False):
    """The keyword arguments of a recall beside ``owners`` and ``query``: the other
    fields of :class:`RecallRequest`, for typing ``**options``."""

    k: int
    kinds: Sequence[Kind | str] | None
    since: datetime | str | None
    until: datetime | str | None
    min_confidence: float | None
    token_budget: int | None
    include_history: bool
    timezone: str | None
    expand: bool | None


@dataclass(frozen=True)
class RecallPlan:
    """A recall request checked: what the recall cache keys on and the search runs."""

    filter: Filter
    query: str
    k: int
    weights: dict[str, float]
    zone: tzinfo
    token_budget: int | None
    expand: bool | None = None
    #: sub-queries an LLM split the query into, searched beside it
    extra: tuple[str, ...] = ()


def request_of(
    owners: Owners | RecallRequest, query: str | None, options: RecallOptions
) -> RecallRequest:
    """The request a call made: one given whole, or built from its arguments."""
    if isinstance(owners, RecallRequest):
        if query is not None or options:
            raise TypeError("give a RecallRequest alone, or owners, a query and options")
        return owners
    if query is None:
        raise TypeError("recall needs a query")
    return RecallRequest(owners=owners, query=query, **options)


def help_of(name: str) -> str:
    """The help text of a field of :class:`RecallRequest`."""
    return str(_FIELDS[name].metadata["help"])


def bounds_of(name: str) -> dict[str, float]:
    """The bounds (``minimum``, ``maximum``) a field of :class:`RecallRequest` states."""
    return {k: v for k, v in _FIELDS[name].metadata.items() if k != "help"}


def default_of(name: str) -> Any:
    """The default of a field of :class:`RecallRequest`."""
    return _FIELDS[name].default


_FIELDS: Final = {f.name: f for f in dataclasses.fields(RecallRequest)}


def owner_weights(owners: Owners) -> dict[str, float]:
    """Each owner searched with its weight (1 unless given), checked."""
    if isinstance(owners, str):
        return {validate.owner(owners): 1.0}
    if isinstance(owners, Mapping):
        weights = {}
        for name, weight in owners.items():
            if (
                isinstance(weight, bool)
                or not isinstance(weight, int | float)
                or not MIN_OWNER_WEIGHT <= weight <= MAX_OWNER_WEIGHT
            ):
                raise ValidationError(
                    f"weight of owner {name!r} must be a number from "
                    f"{MIN_OWNER_WEIGHT:g} to {MAX_OWNER_WEIGHT:g}"
                )
            weights[validate.owner(name)] = float(weight)
    elif isinstance(owners, Iterable):
        weights = {validate.owner(name): 1.0 for name in owners}
    else:
        raise ValidationError("owners must be an owner, a list of owners, or owner weights")
    if not weights:
        raise ValidationError("give at least one owner")
    return weights
