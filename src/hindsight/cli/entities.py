"""Who and what an owner's memories name: ``entities`` (the list), ``entity`` (one page)
and ``wiki export`` (every page as linked Markdown)."""

from __future__ import annotations

from pathlib import Path

import click

from hindsight import views
from hindsight.cli.base import App, cell, echo, emit_json, json_option, owner_option, short
from hindsight.cli.group import cli
from hindsight.entities import wiki


@cli.command()
@owner_option
@json_option
@click.pass_obj
def entities(app: App, owner: str, as_json: bool) -> None:
    """List the people, places, organisations, pets and projects OWNER's memories name.

    Most spoken of first, each with its kind and the other names it goes by; see one
    with 'hindsight entity'.
    """
    found = app.engine.entities(owner)
    if as_json:
        emit_json({"entities": [views.entity_summary(e) for e in found]})
        return
    if not found:
        echo("no entities")
    width = min(30, max((len(cell(e.name)) for e in found), default=0))
    for e in found:
        aliases = short(", ".join(e.aliases), 60)
        line = f"{short(e.name, 30):<{width}}  {e.kind:<12}  {len(e.facts):>3} fact(s)  {aliases}"
        echo(line.rstrip())


@cli.command()
@owner_option
@json_option
@click.argument("name")
@click.pass_obj
def entity(app: App, owner: str, as_json: bool, name: str) -> None:
    """Show the page of the entity OWNER's memories call NAME.

    NAME may be any name it goes by, in any case, or a role such as 'my uncle'. The
    page lists what was said of it (oldest first, with each memory's id) and what it
    is linked with. An unknown name exits 3.
    """
    e = app.engine.entity(owner, name)
    if as_json:
        emit_json(views.entity(e))
        return
    echo(f"{cell(e.name)} ({e.kind})")
    if e.aliases:
        echo(f"also called: {cell(', '.join(e.aliases))}")
    if e.roles:
        echo(f"roles: {cell(', '.join(e.roles))}")
    echo("\nfacts:")
    for f in e.facts:
        echo(f"  {f.memory_id}  {short(f.content, 100)}")
    if e.related:
        echo("\nrelated:")
        width = max(len(r.relation) for r in e.related)
        for r in e.related:
            echo(f"  {cell(r.relation):<{width}}  {cell(r.name)}")


@cli.group("wiki")
def wiki_group() -> None:
    """An owner's entities as a wiki of linked Markdown pages."""


@wiki_group.command("export")
@owner_option
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.pass_obj
def wiki_export(app: App, owner: str, directory: Path) -> None:
    """Write a Markdown page per entity of OWNER, and index.md, into DIRECTORY.

    Each page has the entity's kind, names, facts (with each memory's id) and links
    to the pages of the entities it is related to; DIRECTORY is made if missing, and
    pages of the same names in it are replaced.
    """
    found = app.engine.entities(owner)
    wiki.write(directory, wiki.pages(found, title=f"Entities of {owner}"))
    echo(f"wrote {len(found)} entity page(s) and {wiki.INDEX} to {directory}")
