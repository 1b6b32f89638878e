"""What the console's pages share: the owner picker and its form, a memory's link, a
clipped text, the paragraph that shows a problem, and which owners the caller may read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from hindsight.console.call import Call
from hindsight.console.markup import Html, button, form, link, select, tag, url
from hindsight.errors import HindsightError
from hindsight.models import Memory

_CLIP: Final = 160


def problem(exc: HindsightError) -> Html:
    return tag("p", str(exc), class_="error", role="alert")


def clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _CLIP else text[: _CLIP - 1] + "\u2026"


def memory_link(m: Memory) -> Html:
    return link(clip(m.content), url("/ui/memory", id=m.id))


async def readable_owners(call: Call) -> list[str]:
    """The owners whose memories the caller may read."""
    return await call.run(call.hs.owners)


def owner_picker(owners: Sequence[str], chosen: str | None) -> Html:
    return select("Owner", "owner", list(owners), chosen)


def owner_form(call: Call, path: str, owners: Sequence[str], chosen: str | None) -> Html:
    """A form that shows ``path`` for one of ``owners``."""
    return form(
        path,
        call.csrf,
        owner_picker(owners, chosen),
        button("Show"),
        method="get",
        class_="filters",
    )


def reads_all(call: Call) -> bool:
    """Whether the caller's key reads every owner (else it is asked about its own)."""
    return "*" in (*call.hs.principal.read, *call.hs.principal.write)
