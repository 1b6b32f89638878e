"""Entity pages on every interface: the JSON shapes, the CLI (and its wiki export), REST,
MCP and the Python clients, over a real engine on SQLite."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client as McpClient
from servers import live_server

from hindsight import AsyncClient, Client, Hindsight, Settings
from hindsight.api import create_app
from hindsight.cli import cli
from hindsight.embed import Embeddings
from hindsight.entities import Entity, Fact, Related, wiki
from hindsight.errors import NotFoundError, ValidationError
from hindsight.mcpserver import create_server
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


# -- the CLI -----------------------------------------------------------------------------
def _run(home: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--home", str(home), *args])
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result.stdout if code == 0 else result.stderr


def test_the_cli_lists_and_shows_a_page_by_an_alias(engine: Hindsight, home: Path) -> None:
    listed = json.loads(_run(home, "entities", "--owner", OWNER, "--json"))
    assert listed["entities"][0] == {
        "name": "Bartholomew",
        "aliases": ["Bart", "Uncle Bart"],
        "kind": "person",
    }
    assert {"name": "Gdańsk", "aliases": [], "kind": "place"} in listed["entities"]
    text = _run(home, "entities", "--owner", OWNER)
    assert " ".join(text.splitlines()[0].split()) == "Bartholomew person 2 fact(s) Bart, Uncle Bart"

    page = json.loads(_run(home, "entity", "--owner", OWNER, "UNCLE BART", "--json"))
    assert page == entity(engine.entity(OWNER, "Bartholomew"))
    assert [f["content"] for f in page["facts"]] == UNCLE
    shown = _run(home, "entity", "--owner", OWNER, "my uncle")
    assert shown.startswith("Bartholomew (person)\nalso called: Bart, Uncle Bart\nroles: uncle\n")
    for fact in page["facts"]:
        assert f"  {fact['memory_id']}  {fact['content']}\n" in shown
    assert "related:\n  lives in  Gdańsk\n" in shown


def test_the_cli_refuses_an_unknown_or_empty_name(engine: Hindsight, home: Path) -> None:
    error = _run(home, "entity", "--owner", OWNER, "Nobody", code=3)
    assert error == "error: no entity called 'Nobody' for owner 'user:alice'\n"
    assert "name must be a non-empty string" in _run(home, "entity", "--owner", OWNER, " ", code=2)
    assert "invalid owner" in _run(home, "entities", "--owner", "alice", code=2)
    assert _run(home, "entities", "--owner", "user:nobody") == "no entities\n"


def test_the_wiki_export_writes_linked_pages(engine: Hindsight, home: Path, tmp_path: Path) -> None:
    out = tmp_path / "not" / "yet"
    said = _run(home, "wiki", "export", str(out), "--owner", TWO)
    files = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()}
    assert said == f"wrote {len(files) - 1} entity page(s) and index.md to {out}\n"
    assert {"index.md", "bart.md", "bart-2.md", "gdansk.md", "krakow.md"} <= set(files)
    assert files["bart.md"].startswith("# Bart\n") and files["bart-2.md"].startswith("# Bart\n")
    colleague, uncle = engine.entity(TWO, "Bart from accounting"), engine.entity(TWO, "my uncle")
    assert colleague.name == uncle.name == "Bart"
    assert "(`" + colleague.facts[0].memory_id + "`)" in files["bart.md"]
    assert "(`" + uncle.facts[0].memory_id + "`)" in files["bart-2.md"]
    assert "- home of: [Bart](bart-2.md)" in files["gdansk.md"]
    assert "- home of: [Bart](bart.md)" in files["krakow.md"]
    assert sorted(_links(files["index.md"])) == sorted(set(files) - {"index.md"})
    for text in files.values():
        for target in _links(text):
            assert (out / target).is_file(), target


# -- REST --------------------------------------------------------------------------------
def test_rest(engine: Hindsight) -> None:
    with TestClient(create_app(engine, mcp=False), base_url="http://127.0.0.1") as api:
        listed = api.get("/v1/entities", params={"owner": OWNER})
        assert listed.status_code == 200
        assert listed.json() == {"entities": [entity_summary(e) for e in engine.entities(OWNER)]}
        page = api.get("/v1/entities/uncle%20bart", params={"owner": OWNER})
        assert page.status_code == 200
        assert page.json() == entity(engine.entity(OWNER, "Bartholomew"))
        for name, status, kind in (
            ("Nobody", 404, "NotFoundError"),
            ("AC%2FDC", 404, "NotFoundError"),  # a slash is part of a name
            ("%20", 400, "ValidationError"),
        ):
            answer = api.get(f"/v1/entities/{name}", params={"owner": OWNER})
            assert answer.status_code == status
            assert answer.json()["error"]["type"] == kind
        missing = api.get("/v1/entities/Nobody", params={"owner": OWNER}).json()
        assert missing["error"]["message"] == "no entity called 'Nobody' for owner 'user:alice'"
        assert api.get("/v1/entities", params={"owner": "alice"}).status_code == 400
        assert api.get("/v1/entities/Bart").status_code == 422  # the owner is required


# -- MCP ---------------------------------------------------------------------------------
def test_mcp(engine: Hindsight) -> None:
    async def call(tool: str, **arguments: Any) -> Any:
        async with McpClient(create_server(engine)) as client:
            return await client.call_tool(tool, {"owner": OWNER, **arguments})

    listed = anyio.run(lambda: call("memory_entities"))
    assert not listed.is_error
    assert listed.structured_content == {
        "entities": [entity_summary(e) for e in engine.entities(OWNER)]
    }
    page = anyio.run(lambda: call("memory_entity", name="Uncle Bart"))
    assert not page.is_error
    assert page.structured_content == entity(engine.entity(OWNER, "Bartholomew"))
    unknown = anyio.run(lambda: call("memory_entity", name="Nobody"))
    assert unknown.is_error
    assert unknown.content[0].text == (
        "NotFoundError: no entity called 'Nobody' for owner 'user:alice'"
    )
    assert anyio.run(lambda: call("memory_entity")).is_error  # the name is required


# -- the Python clients ------------------------------------------------------------------
def test_the_clients(engine: Hindsight) -> None:
    # the wire carries a page's names, kind, facts and links (not its roles), a list's less
    listed = [
        dataclasses.replace(e, facts=(), related=(), roles=()) for e in engine.entities(OWNER)
    ]
    page = dataclasses.replace(engine.entity(OWNER, "Bartholomew"), roles=())
    with live_server(create_app(engine, mcp=False)) as url:
        with Client(url) as client:
            assert client.entities(OWNER) == listed
            assert client.entity(OWNER, "uncle bart") == page
            with pytest.raises(NotFoundError, match="no entity called 'AC/DC'"):
                client.entity(OWNER, "AC/DC")
            with pytest.raises(ValidationError, match="name must be a non-empty string"):
                client.entity(OWNER, "")

        async def remote() -> tuple[list[Entity], Entity]:
            async with AsyncClient(url) as client:
                with pytest.raises(NotFoundError):
                    await client.entity(OWNER, "Nobody")
                return await client.entities(OWNER), await client.entity(OWNER, "my uncle")

        assert anyio.run(remote) == (listed, page)
