"""What every request body and parameter of the REST API shares: strict JSON
bodies (:class:`In`), the rules owners, sessions and kinds follow, strict query
strings, and the error body."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from fastapi import Path, Query
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from hindsight import validate
from hindsight.models import (
    Kind,
    Status,
)

Role = Literal["user", "assistant", "tool", "system"]
TIME_HELP: Final = "An ISO 8601 date or time, e.g. 2024-05-01 or 2024-05-01T14:30:00Z."
OWNER_RULE: Final[dict[str, Any]] = {
    "pattern": f"^{validate.OWNER_RE.pattern}$",
    "examples": ["user:alice"],
}
SESSION_RULE: Final[dict[str, Any]] = {
    "pattern": f"^{validate.SESSION_RE.pattern}$",
    "examples": ["s1"],
}
OWNER_HELP: Final = "Whose memory, as namespace:name, e.g. user:alice."


def one_of(enum: type[StrEnum], *, nullable: bool = False) -> dict[str, Any]:
    values: list[str | None] = [member.value for member in enum]
    return {"enum": [*values, None] if nullable else values}


def owner_field() -> Any:
    return Field(description=OWNER_HELP, json_schema_extra=OWNER_RULE)


def session_field(description: str = "The session.") -> Any:
    return Field(default=None, description=description, json_schema_extra=SESSION_RULE)


KIND_RULE: Final = one_of(Kind)
STATUS_RULE: Final = one_of(Status)
OwnerQuery = Annotated[str, Query(description=OWNER_HELP, json_schema_extra=OWNER_RULE)]
SessionPath = Annotated[str, Path(description="The session.", json_schema_extra=SESSION_RULE)]


# -- query strings: text parsed strictly (after Query(...) in Annotated, so the schema holds) --
_DIGITS: Final = re.compile(r"-?[0-9]+")


def _whole_number(value: object) -> object:
    if isinstance(value, str) and not _DIGITS.fullmatch(value):
        raise PydanticCustomError("int_parsing", "Input should be an integer, in digits")
    return value


def _truth(value: object) -> object:
    if isinstance(value, str):
        if value.lower() not in ("true", "false"):
            raise PydanticCustomError("bool_parsing", "Input should be true or false")
        return value.lower() == "true"
    return value


WHOLE: Final = BeforeValidator(_whole_number)
"""An integer query parameter: ``Annotated[int, Query(...), WHOLE]`` (not ``5.0``, ``1_000``)."""
TRUTH: Final = BeforeValidator(_truth)
"""A boolean query parameter: ``Annotated[bool, Query(...), TRUTH]`` (not ``yes`` or ``1``)."""
QueryBool = Annotated[bool, Query(), TRUTH]


class In(BaseModel):
    """A request body: unknown fields are an error, so a typo is not silently ignored, and
    types are strict, so a value of the wrong JSON type is refused, not coerced.

    Infinity and NaN (which Python's JSON reader accepts) are refused as numbers.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)


# -- errors -----------------------------------------------------------------------------------
class ErrorDetail(BaseModel):
    type: str = Field(description="The error class, e.g. ValidationError or NotFoundError.")
    message: str = Field(description="What was wrong, naming the argument.")


class ErrorBody(BaseModel):
    error: ErrorDetail
