"""What the scenario benchmarks (``bench guard``, ``foresight``, ``entities``) share: a
suite file read and checked, and a share of a count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hindsight.errors import ValidationError


def read(path: Path, key: str) -> dict[str, Any]:
    """A suite file, ``{"name", "version": 1, key: [...]}``; a ValidationError says what
    is wrong with it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationError(f"{path}: not a readable JSON file: {exc}") from None
    if (
        not isinstance(data, dict)
        or data.get("version") != 1
        or not isinstance(data.get(key), list)
    ):
        raise ValidationError(f'{path}: expected {{"name", "version": 1, "{key}": [...]}}')
    return data


def share(n: int, of: int) -> float | None:
    """``n`` of ``of``, to three places; None of nothing."""
    return None if of == 0 else round(n / of, 3)
