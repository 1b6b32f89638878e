"""Moving memories: ``export`` to JSON lines, ``import`` from them, and ``reembed``, which
carries the store's vectors over to a new embedding model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, BinaryIO

import click

from hindsight.cli.base import (
    HELD_NOTE,
    App,
    echo,
    emit_json,
    json_option,
    owner_option,
    request_id_option,
)
from hindsight.cli.group import cli
from hindsight.errors import ValidationError


@cli.command()
@owner_option
@click.pass_obj
def export(app: App, owner: str) -> None:
    """Write OWNER's memories to stdout as JSON lines, oldest first.

    The output is what 'hindsight import' reads; vectors are not exported.
    """
    hs = app.engine
    total = hs.stats(owner).memories
    with app.progress(hs.export(owner), length=total, label="exporting") as records:
        for record in records:
            emit_json(record)


@cli.command("import")
@request_id_option
@json_option
@click.argument("file", type=click.File("rb"))
@click.pass_obj
def import_(app: App, request_id: str | None, as_json: bool, file: BinaryIO) -> None:
    """Load memories from FILE of JSON lines ('-' for stdin); ids the owner holds are skipped.

    Every line is checked first: one bad line is an error naming it, and
    nothing is imported.
    """
    records = _read_json_lines(file)
    lines = [n for n, _ in records]
    at = 0  # which record the engine is checking, to name its line on error

    def feed() -> Iterator[dict[str, Any]]:
        nonlocal at
        for at, (_, record) in enumerate(records, start=1):  # noqa: B007
            yield record

    hs = app.engine
    try:
        with app.progress(feed(), length=len(records), label="importing") as items:
            counts = hs.import_records(items, request_id=request_id)
    except ValidationError as exc:
        prefix = f"record {at}: "
        if at and str(exc).startswith(prefix):
            raise ValidationError(f"line {lines[at - 1]}: {str(exc)[len(prefix) :]}") from None
        raise
    if as_json:
        emit_json(counts)
        return
    echo(f"imported {counts['imported']}, skipped {counts['skipped']} already known")
    if counts["held"]:
        echo(
            f"{counts['held']} of those imported held (quarantined or pending review): {HELD_NOTE}"
        )


@cli.command()
@json_option
@click.pass_obj
def reembed(app: App, as_json: bool) -> None:
    """Remake the store's vectors with the configured embedding model.

    Needed after the embedding model changes: a store refuses to open with a model other
    than the one that made its vectors. Resumes if interrupted.
    """
    from hindsight.jobs import reembed as run

    settings = app.settings()
    count = run(settings, progress=lambda done: app.note(f"re-embedded {done}"))
    if as_json:
        emit_json({"reembedded": count})
    else:
        echo(f"re-embedded {count} memories")


def _read_json_lines(stream: BinaryIO) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; any bad line is an error naming it."""
    records: list[tuple[int, dict[str, Any]]] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(stream, start=1):
        try:
            line = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValidationError(f"line {number} is not valid UTF-8") from None
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"line {number} is not valid JSON: {exc.msg} (column {exc.colno})"
            ) from None
        if not isinstance(record, dict):
            raise ValidationError(f"line {number} is not a JSON object")
        rid = record.get("id")
        if isinstance(rid, str):
            if rid in first_line:
                raise ValidationError(f"line {number} repeats id {rid!r} of line {first_line[rid]}")
            first_line[rid] = number
        records.append((number, record))
    return records
