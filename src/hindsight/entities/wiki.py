"""An owner's entities as interlinked Markdown: a page per entity and an index.

:func:`pages` renders (pure: entities in, ``{filename: text}`` out) and :func:`write`
saves. File names are slugs of the entities' names, kept to lower-case ASCII letters,
digits and hyphens so that any file system takes them, and made unique: two entities
called "Bart" get ``bart.md`` and ``bart-2.md``, the one most spoken of first. What a
memory says is written as text, never as Markdown a viewer would follow (a link, an
image, HTML).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

from hindsight.entities.pages import Entity

INDEX: Final = "index.md"
_MAX_SLUG: Final = 60
# names Windows refuses for a file, with any extension
_RESERVED: Final = frozenset(
    {"con", "prn", "aux", "nul", *(f"{d}{n}" for d in ("com", "lpt") for n in range(1, 10))}
)
_INLINE: Final = re.compile(r"([\\`*_\[\]<>|~#])")
_BLOCK_START: Final = re.compile(r"^(\d+)([.)])|^([-+])")


def slug(name: str) -> str:
    """``name`` as a file name's stem: accents dropped, lower case, runs of anything but
    letters and digits one hyphen ("Gdańsk Lions" is ``gdansk-lions``)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    stem = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")
    return stem[:_MAX_SLUG].rstrip("-") or "entity"


def _file_names(entities: Sequence[Entity]) -> list[str]:
    taken = {INDEX.removesuffix(".md"), *_RESERVED}
    names = []
    for e in entities:
        stem = base = slug(e.name)
        n = 1
        while stem in taken:
            n += 1
            stem = f"{base[: _MAX_SLUG - len(str(n)) - 1].rstrip('-')}-{n}"
        taken.add(stem)
        names.append(f"{stem}.md")
    return names


def _text(text: str) -> str:
    """``text`` on one line, as Markdown shows it literally."""
    line = _INLINE.sub(r"\\\1", " ".join(text.split()))
    return _BLOCK_START.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", line)


def _targets(entities: Sequence[Entity], files: Sequence[str]) -> list[dict[str, str]]:
    """For each entity, the file of each entity it names as related. A name two entities
    share is the one that links back (Gdańsk is the home of the Bart who lives there)."""
    by_name: dict[str, list[int]] = {}
    for i, e in enumerate(entities):
        by_name.setdefault(e.name, []).append(i)
    out = []
    for e in entities:
        links = {}
        for r in e.related:
            found = by_name.get(r.name, [])
            back = [i for i in found if any(x.name == e.name for x in entities[i].related)]
            if found:
                links[r.name] = files[(back or found)[0]]
        out.append(links)
    return out


def _page(e: Entity, links: Mapping[str, str]) -> str:
    lines = [f"# {_text(e.name)}", "", f"- Kind: {_text(e.kind)}"]
    if e.aliases:
        lines.append(f"- Also called: {', '.join(_text(a) for a in e.aliases)}")
    if e.roles:
        lines.append(f"- Roles: {', '.join(_text(r) for r in e.roles)}")
    lines += ["", "## Facts", ""]
    lines += [f"- {_text(f.content)} (`{f.memory_id}`)" for f in e.facts] or ["None yet."]
    if e.related:
        lines += ["", "## Related", ""]
        for r in e.related:
            name = _text(r.name)
            target = f"[{name}]({links[r.name]})" if r.name in links else name
            lines.append(f"- {_text(r.relation)}: {target}")
    lines += ["", f"[All entities]({INDEX})", ""]
    return "\n".join(lines)


def _index(entities: Sequence[Entity], files: Sequence[str], title: str) -> str:
    lines = [f"# {_text(title)}", ""]
    for e, file in zip(entities, files, strict=True):
        roles = f" ({', '.join(_text(r) for r in e.roles)})" if e.roles else ""
        also = f", also called {', '.join(_text(a) for a in e.aliases)}" if e.aliases else ""
        lines.append(f"- [{_text(e.name)}]({file}): {_text(e.kind)}{roles}{also}")
    if not entities:
        lines.append("No entities yet.")
    return "\n".join([*lines, ""])


def pages(entities: Iterable[Entity], *, title: str = "Entities") -> dict[str, str]:
    """Every entity's page, by file name, and :data:`INDEX` listing them under ``title``;
    related entities are relative links to their pages."""
    listed = list(entities)
    files = _file_names(listed)
    out = {INDEX: _index(listed, files, title)}
    for e, file, links in zip(listed, files, _targets(listed, files), strict=True):
        out[file] = _page(e, links)
    return out


def write(directory: Path, rendered: Mapping[str, str]) -> None:
    """Save ``rendered`` pages into ``directory`` (made if missing), as UTF-8; a page of
    the same name is replaced, other files are left alone."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in rendered.items():
        (directory / name).write_text(text, encoding="utf-8", newline="\n")
