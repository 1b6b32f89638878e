"""Entity pages on every interface: the JSON shapes, the CLI (and its wiki export), REST,
MCP and the Python clients, over a real engine on SQLite."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight import Hindsight, Settings
from hindsight.embed import Embeddings
from hindsight.entities import Entity, Fact, Related, wiki
from hindsight.views import entity, entity_from, entity_summary, entity_summary_from

OWNER = "user:alice"
TWO = "user:two"  # an owner who knows two people called Bart
UNCLE = ["My uncle Bartholomew lives in Gdańsk.", "Uncle Bart called me on Sunday."]
BARTS = [
    "My uncle Bart lives in Gdańsk.",
    "Bart from accounting sent the report.",
    "Bart from accounting lives in Kraków.",
]
LINK = re.compile(r"(?<!\\)\]\(([^)]*)\)")  # a link's target; an escaped bracket is text


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("entities")


@pytest.fixture(scope="module")
def engine(home: Path, embedder: Embeddings) -> Iterator[Hindsight]:
    with Hindsight(Settings(home=home, sqlite_synchronous="OFF"), embedder=embedder) as hs:
        for text in UNCLE:
            hs.retain(OWNER, text)
        for text in BARTS:
            hs.retain(TWO, text)
        yield hs


def _links(page: str) -> list[str]:
    return LINK.findall(page)


# -- the JSON shapes ---------------------------------------------------------------------
PAGE = Entity(
    "Bartholomew",
    "person",
    ("Bart", "Uncle Bart"),
    (Fact("My uncle Bartholomew lives in Gdańsk.", "m_1"),),
    (Related("Gdańsk", "lives in"),),
)


def test_a_page_and_a_listed_entity_as_json_and_back() -> None:
    assert entity(PAGE) == {
        "name": "Bartholomew",
        "kind": "person",
        "aliases": ["Bart", "Uncle Bart"],
        "facts": [{"content": "My uncle Bartholomew lives in Gdańsk.", "memory_id": "m_1"}],
        "related": [{"name": "Gdańsk", "relation": "lives in"}],
    }
    assert entity_from(json.loads(json.dumps(entity(PAGE)))) == PAGE
    assert entity_summary(PAGE) == {
        "name": "Bartholomew",
        "aliases": ["Bart", "Uncle Bart"],
        "kind": "person",
    }
    assert entity_summary_from(entity_summary(PAGE)) == dataclasses.replace(
        PAGE, facts=(), related=()
    )


# -- the wiki, rendered ------------------------------------------------------------------
def _entity(name: str, *related: str) -> Entity:
    facts = (Fact(f"{name} was here.", "m_1"),)
    return Entity(name, "person", (), facts, tuple(Related(r, "knows") for r in related))


def test_every_link_of_the_wiki_is_a_page_of_it() -> None:
    pages = wiki.pages([_entity("Ana", "Bart"), _entity("Bart", "Ana", "Nobody")], title="T")
    assert set(pages) == {"index.md", "ana.md", "bart.md"}
    assert _links(pages["index.md"]) == ["ana.md", "bart.md"]
    assert _links(pages["ana.md"]) == ["bart.md", "index.md"]
    assert "- knows: Nobody" in pages["bart.md"]  # no page: named, not linked
    for page in pages.values():
        assert all(target in pages for target in _links(page))


def test_a_name_two_entities_share_links_to_the_one_that_links_back() -> None:
    uncle = _entity("Bart", "Gdańsk")
    colleague = _entity("Bart", "Kraków")
    pages = wiki.pages([colleague, uncle, _entity("Gdańsk", "Bart"), _entity("Kraków", "Bart")])
    assert _links(pages["gdansk.md"])[0] == "bart-2.md"
    assert _links(pages["krakow.md"])[0] == "bart.md"


def test_memory_text_is_shown_not_followed() -> None:
    sneaky = Entity(
        "Eve",
        "person",
        ("<b>Evil</b>",),
        (Fact("Eve says [click](http://x.example) ![i](y.png)\n# heading", "m_9"),),
        (),
    )
    page = wiki.pages([sneaky])["eve.md"]
    assert _links(page) == ["index.md"]
    assert "<b>" not in page and "\n# heading" not in page
    assert r"Eve says \[click\](http://x.example) !\[i\](y.png) \# heading (`m_9`)" in page


@pytest.mark.parametrize(
    ("name", "file"),
    [
        ("Gdańsk Lions", "gdansk-lions.md"),
        ("Zoë O'Brien", "zoe-o-brien.md"),
        ("東京", "entity.md"),
        ("Index", "index-2.md"),
        ("CON", "con-2.md"),
        ("../etc/passwd", "etc-passwd.md"),
        ("x" * 200, "x" * 60 + ".md"),
    ],
)
def test_file_names_are_safe_anywhere(name: str, file: str) -> None:
    assert set(wiki.pages([_entity(name)])) == {"index.md", file}


@given(st.lists(st.text(min_size=1, max_size=80), max_size=12))
def test_any_names_make_distinct_safe_files_whose_links_resolve(names: list[str]) -> None:
    entities = [_entity(n, *names[:3]) for n in names]
    pages = wiki.pages(entities)
    assert len(pages) == len(entities) + 1
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9-]*\.md", f) and len(f) <= 63 for f in pages)
    for page in pages.values():
        assert all(target in pages for target in _links(page))
