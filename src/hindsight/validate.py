"""Checks on what users hand us; each failure is a ValidationError that says what was wrong."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from enum import StrEnum
from typing import Any, Final, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hindsight.errors import ValidationError

OWNER_RE = re.compile(r"[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}")
SESSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}")
ZONE_RE = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*")  # "America/New_York"
OFFSET_RE = re.compile(r"([+-])(\d{2}):(\d{2})")  # "+05:30"

E = TypeVar("E", bound=StrEnum)


def owner(value: object) -> str:
    if not isinstance(value, str) or not OWNER_RE.fullmatch(value):
        raise ValidationError(
            f"invalid owner {value!r}: expected 'namespace:name' such as 'user:alice', "
            "'agent:planner' or 'shared:team-a' (lower-case namespace; name of letters, "
            "digits and ._@+-, at most 128 characters)"
        )
    return value


def session_id(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not SESSION_RE.fullmatch(value):
        raise ValidationError(
            f"invalid session id {value!r}: letters, digits and ._:@+-, at most 128 characters"
        )
    return value


# Format and control characters (zero-width spaces and joiners, BOMs) and separators:
# text of nothing but these shows nothing and says nothing.
_INVISIBLE: Final = frozenset({"Cf", "Cc", "Zs", "Zl", "Zp"})


def text(value: object, *, field: str = "content", limit: int) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{field} must be a string, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(f"{field} is not valid UTF-8 text") from None
    if "\x00" in value:
        raise ValidationError(f"{field} contains a NUL character")
    stripped = value.strip()
    if not stripped or all(unicodedata.category(c) in _INVISIBLE for c in stripped):
        raise ValidationError(f"{field} is empty")
    if len(stripped) > limit:
        raise ValidationError(f"{field} is {len(stripped)} characters; the limit is {limit}")
    return stripped


REQUEST_ID_RE: Final = re.compile(r"[\x21-\x7e]{1,128}")


def request_id(value: object) -> str:
    """An idempotency key: 1 to 128 printable ASCII characters, no spaces."""
    if not isinstance(value, str) or not REQUEST_ID_RE.fullmatch(value):
        raise ValidationError(
            "request_id must be 1 to 128 printable ASCII characters without spaces"
        )
    return value


def choice(enum: type[E], value: object, *, field: str) -> E:
    known = ", ".join(m.value for m in enum)
    if not isinstance(value, str):
        raise ValidationError(f"invalid {field} {value!r}: expected one of {known}")
    try:
        return enum(value)
    except ValueError:
        raise ValidationError(f"invalid {field} {value!r}: expected one of {known}") from None


#: The times hindsight accepts: the calendar less a year at each end, so a time can be
#: shown in any time zone and moved by a day or a year without leaving it.
EARLIEST: Final = datetime(2, 1, 1, tzinfo=UTC)
LATEST: Final = datetime(9998, 12, 31, 23, 59, 59, tzinfo=UTC)


def timestamp(value: object, *, field: str) -> datetime | None:
    """Accept a datetime or an ISO 8601 string; naive times are taken as UTC."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValidationError(
                f"invalid {field} {value!r}: expected an ISO 8601 date or time, "
                "e.g. 2024-05-01 or 2024-05-01T14:30:00Z"
            ) from None
    if not isinstance(value, datetime):
        raise ValidationError(f"{field} must be a datetime or ISO 8601 string")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        utc: datetime | None = value.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:59-14:00 is past the calendar's end in UTC
        utc = None
    if utc is None or not EARLIEST <= utc <= LATEST:
        raise ValidationError(
            f"{field} must lie between {EARLIEST.date()} and {LATEST.date()} (UTC)"
        )
    return utc


def expiry(value: object, *, now: datetime, field: str = "expires_at") -> datetime | None:
    """A memory's expiry: a time with its zone (a naive one is ambiguous here: an early
    forget is not undone), after ``now``; None for none."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            raise ValidationError(
                f"invalid {field} {value!r}: expected an ISO 8601 time with its zone, "
                "e.g. 2027-05-01T00:00:00Z or 2027-05-01T09:00:00+02:00"
            )
        value = parsed
    if isinstance(value, datetime) and value.tzinfo is None:
        raise ValidationError(f"{field} must name its time zone (a naive time is ambiguous)")
    when = timestamp(value, field=field)
    assert when is not None
    if when <= now:
        raise ValidationError(
            f"{field} ({when.isoformat()}) must lie in the future (now: {now.isoformat()}); "
            "to remove a memory now, forget it"
        )
    return when


def time_zone(value: object, *, field: str = "timezone") -> tzinfo:
    """An IANA time zone name ("Europe/Berlin", "UTC") or a UTC offset ("-05:00")."""
    hint = "expected an IANA name such as 'Europe/Berlin' or 'UTC', or an offset such as '-05:00'"
    if isinstance(value, str) and (offset := OFFSET_RE.fullmatch(value)):
        sign, hours, minutes = offset.groups()
        if int(hours) <= 23 and int(minutes) <= 59:
            delta = timedelta(hours=int(hours), minutes=int(minutes))
            return timezone(-delta if sign == "-" else delta)
    elif isinstance(value, str) and len(value) <= 64 and ZONE_RE.fullmatch(value):
        try:
            return ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    raise ValidationError(f"invalid {field} {value!r}: {hint}")


def confidence(value: object, *, field: str = "confidence") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValidationError(f"{field} must be a number between 0 and 1, not {value!r}")
    return float(value)


def metadata(value: object, *, limit: int) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError("metadata must be a JSON object")
    try:
        encoded = json.dumps(dict(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"metadata is not JSON-serialisable: {exc}") from None
    if len(encoded.encode("utf-8")) > limit:
        raise ValidationError(f"metadata is larger than {limit} bytes as JSON")
    result: dict[str, Any] = json.loads(encoded)
    return result


def positive(value: object, *, field: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise ValidationError(f"{field} must be an integer between 1 and {maximum}")
    return value


def offset(value: object) -> int:
    """A page's offset: an integer from 0 to 2**62 - 1."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**62:
        raise ValidationError("offset must be an integer from 0 to 2**62 - 1")
    return value
