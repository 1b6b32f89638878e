"""Given names and whom they are given to: what tells a person's name from a place's,
"he" from "she", and a name from a misspelling of another.

The table is the first names of the 1990 United States Census (``data/given_names.txt``),
so it knows English and American names best; a name it lacks is no evidence of anything.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Final

__all__ = ["given_to", "is_given", "may_be"]

_HE: Final = "m"
_SHE: Final = "f"


@functools.cache
def _table() -> dict[str, str]:
    text = (resources.files("hindsight.entities") / "data" / "given_names.txt").read_text("utf-8")
    rows = (line.split() for line in text.splitlines() if line and not line.startswith("#"))
    return {name: to for name, to in rows}


def given_to(name: str) -> str:
    """Whom the given name ``name`` is given to: "m", "f", both ("mf"), or "" if the
    table does not know it."""
    return _table().get(name.lower().rstrip("."), "")


def is_given(name: str) -> bool:
    """Whether ``name`` is a given name the table knows."""
    return bool(given_to(name))


def may_be(pronoun: str, name: str) -> bool:
    """Whether "he" or "she" (``pronoun``) may stand for someone called ``name``: unless
    the name is given only to the other."""
    to = given_to(name.split()[0]) if name else ""
    wanted = _HE if pronoun.lower() in ("he", "his", "him") else _SHE
    return not to or wanted in to
