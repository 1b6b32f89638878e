"""The entities benchmark: an owner's turns retained, then who is who on the entity pages
compared with what a person reading the same turns would know.

A file (``bench/entities/*.json``: ``{"name", "version": 1, "scenarios": [...]}``) holds
scenarios, each with its owner's name (``speaker``), its ``turns`` (a string, said by the
owner, or ``{"speaker", "text"}``, said by someone else in the chat) and what is
``expect``-ed. Each scenario has an owner of its own; its turns are retained through the
engine one message each, two days apart, then names are asked of
:meth:`~hindsight.Hindsight.entity`. Per file:

- **merge recall**: pairs of names within a ``same`` group that find one page, of all
  such pairs (a name not found leaves its pairs unmerged);
- **split accuracy**: ``apart`` pairs that find two different pages, of all of them (the
  proxy of merge precision: namesakes kept apart);
- **lookup accuracy**: ``lookups`` whose name (or role) finds the page of the expected
  entity: the expected name is one of its names, or finds that same page;
- **relation recall**: ``related`` pairs whose pages are linked (either lists one of the
  other's names among its related), of all of them;
- **false finds**: ``unknown`` names that found a page, with their share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path
from typing import Any, Final

from hindsight.bench import suite
from hindsight.bench.suite import share
from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.embed import registry as embedders
from hindsight.engine import Hindsight
from hindsight.entities import Entity
from hindsight.errors import NotFoundError, ValidationError

START: Final = datetime(2026, 3, 2, 9, tzinfo=UTC)  # the first turn; the others two days apart
_EXPECT: Final = frozenset({"same", "apart", "lookups", "related", "unknown"})


@dataclass(frozen=True, slots=True)
class Expect:
    same: tuple[tuple[str, ...], ...] = ()
    apart: tuple[tuple[str, str], ...] = ()
    lookups: tuple[tuple[str, str], ...] = ()
    related: tuple[tuple[str, str], ...] = ()
    unknown: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    speaker: str
    turns: tuple[tuple[str, str], ...]  # (speaker, text)
    expect: Expect


def load(path: Path) -> tuple[str, list[Scenario]]:
    """A file's name and scenarios, each field checked (a ValidationError names the first
    that is wrong)."""
    data = suite.read(path, "scenarios")
    scenarios: list[Scenario] = []
    for i, raw in enumerate(data["scenarios"]):
        scenario = _scenario(raw, f"{path}: scenarios[{i}]")
        if any(s.id == scenario.id for s in scenarios):
            raise ValidationError(f"{path}: scenarios[{i}] repeats the id {scenario.id!r}")
        scenarios.append(scenario)
    return str(data.get("name", path.stem)), scenarios


def _text(value: object, at: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{at} must be a non-empty string")
    return value


def _names(value: object, at: str, *, least: int = 0, most: int | None = None) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) < least or len(value) > (most or len(value)):
        size = f"{least} " if least == most else f"{least} or more " if least else ""
        raise ValidationError(f"{at} must be a list of {size}names")
    return tuple(_text(v, f"{at}[{j}]") for j, v in enumerate(value))


def _scenario(raw: object, at: str) -> Scenario:
    if not isinstance(raw, dict):
        raise ValidationError(f"{at} must be an object")
    speaker = _text(raw.get("speaker"), f"{at}.speaker")
    turns = raw.get("turns")
    if not isinstance(turns, list) or not turns:
        raise ValidationError(f"{at}.turns must be a non-empty list")
    said = []
    for j, turn in enumerate(turns):
        if isinstance(turn, dict):
            said.append(
                (
                    _text(turn.get("speaker"), f"{at}.turns[{j}].speaker"),
                    _text(turn.get("text"), f"{at}.turns[{j}].text"),
                )
            )
        else:
            said.append((speaker, _text(turn, f"{at}.turns[{j}]")))
    return Scenario(
        id=_text(raw.get("id"), f"{at}.id"),
        speaker=speaker,
        turns=tuple(said),
        expect=_expect(raw.get("expect"), f"{at}.expect"),
    )


def _expect(raw: object, at: str) -> Expect:
    if not isinstance(raw, dict):
        raise ValidationError(f"{at} must be an object")
    if unknown_keys := sorted(set(raw) - _EXPECT):
        raise ValidationError(f"{at} has unknown keys {unknown_keys}: use {sorted(_EXPECT)}")

    def items(key: str) -> list[Any]:
        value = raw.get(key, [])
        if not isinstance(value, list):
            raise ValidationError(f"{at}.{key} must be a list")
        return value

    def pairs(key: str) -> tuple[tuple[str, str], ...]:
        found = [_names(p, f"{at}.{key}[{j}]", least=2, most=2) for j, p in enumerate(items(key))]
        return tuple((a, b) for a, b in found)

    lookups = raw.get("lookups", {})
    if not isinstance(lookups, dict):
        raise ValidationError(f"{at}.lookups must be an object of names asked -> names")
    return Expect(
        same=tuple(_names(g, f"{at}.same[{j}]", least=2) for j, g in enumerate(items("same"))),
        apart=pairs("apart"),
        lookups=tuple(
            (_text(k, f"{at}.lookups key"), _text(v, f"{at}.lookups[{k!r}]"))
            for k, v in lookups.items()
        ),
        related=pairs("related"),
        unknown=_names(items("unknown"), f"{at}.unknown"),
    )


@dataclass(slots=True)
class Tally:
    scenarios: int = 0
    scenarios_right: int = 0
    merge_pairs: int = 0
    merged: int = 0
    apart_pairs: int = 0
    split: int = 0
    lookups: int = 0
    lookups_right: int = 0
    relations: int = 0
    related: int = 0
    unknown: int = 0
    false_finds: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenarios": self.scenarios,
            "scenarios_right": self.scenarios_right,
            "merge_pairs": self.merge_pairs,
            "merged": self.merged,
            "merge_recall": share(self.merged, self.merge_pairs),
            "apart_pairs": self.apart_pairs,
            "split": self.split,
            "split_accuracy": share(self.split, self.apart_pairs),
            "lookups": self.lookups,
            "lookups_right": self.lookups_right,
            "lookup_accuracy": share(self.lookups_right, self.lookups),
            "relations": self.relations,
            "related": self.related,
            "relation_recall": share(self.related, self.relations),
            "unknown": self.unknown,
            "false_finds": self.false_finds,
            "false_find_rate": share(self.false_finds, self.unknown),
        }


def run(
    settings: Settings,
    scenarios: Sequence[Scenario],
    *,
    embedder: Embeddings | None = None,
    details: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Every scenario through one engine, an owner each."""
    embedder = embedder or embedders.create(settings.embedding_provider, settings)
    tally = Tally()
    with Hindsight(settings, embedder=embedder) as hs:
        for number, scenario in enumerate(scenarios):
            _score(hs, f"user:entities-{number}", scenario, tally)
            if progress is not None:
                progress(1)
    report = tally.as_dict()
    return {**report, "misses": tally.misses} if details else report


def _score(hs: Hindsight, owner: str, scenario: Scenario, tally: Tally) -> None:
    for n, (speaker, text) in enumerate(scenario.turns):
        message = {"role": "user", "content": text, "speaker": speaker}
        hs.retain(owner, messages=[message], observed_at=START + timedelta(days=2 * n))
    pages: dict[str, Entity | None] = {}

    def page(name: str) -> Entity | None:
        if name not in pages:
            try:
                pages[name] = hs.entity(owner, name)
            except NotFoundError:
                pages[name] = None
        return pages[name]

    def shown(name: str) -> str | None:
        found = page(name)
        return None if found is None else found.name

    expect = scenario.expect
    miss: dict[str, list[Any]] = {}
    for group in expect.same:
        for a, b in combinations(group, 2):
            tally.merge_pairs += 1
            if page(a) is not None and page(a) == page(b):
                tally.merged += 1
            else:
                miss.setdefault("not_merged", []).append({a: shown(a), b: shown(b)})
    for a, b in expect.apart:
        tally.apart_pairs += 1
        if page(a) is not None and page(b) is not None and page(a) != page(b):
            tally.split += 1
        else:
            miss.setdefault("not_apart", []).append({a: shown(a), b: shown(b)})
    for asked, want in expect.lookups:
        tally.lookups += 1
        found = page(asked)
        if found is not None and (_called(found, want) or page(want) == found):
            tally.lookups_right += 1
        else:
            miss.setdefault("lookups", []).append(
                {"asked": asked, "want": want, "found": shown(asked)}
            )
    for a, b in expect.related:
        tally.relations += 1
        first, second = page(a), page(b)
        if first is not None and second is not None and _linked(first, second):
            tally.related += 1
        else:
            miss.setdefault("not_related", []).append({a: shown(a), b: shown(b)})
    for name in expect.unknown:
        tally.unknown += 1
        if page(name) is not None:
            tally.false_finds += 1
            miss.setdefault("false_finds", []).append({name: shown(name)})
    tally.scenarios += 1
    tally.scenarios_right += not miss
    if miss:
        tally.misses.append({"id": scenario.id, **miss})


def _called(entity: Entity, name: str) -> bool:
    return name.casefold() in {n.casefold() for n in entity.names()}


def _linked(a: Entity, b: Entity) -> bool:
    return any(_called(b, r.name) for r in a.related) or any(_called(a, r.name) for r in b.related)


def table(name: str, report: Mapping[str, Any]) -> list[str]:
    """The report for people: one figure a line."""

    def pct(key: str) -> str:
        value = report[key]
        return "-" if value is None else f"{value:.0%}"

    lines = [
        f"{name}: {report['scenarios']} scenarios, {report['scenarios_right']} exactly right",
        f"  merge recall     {pct('merge_recall'):>5}  "
        f"({report['merged']} of {report['merge_pairs']} pairs of one entity's names)",
        f"  split accuracy   {pct('split_accuracy'):>5}  "
        f"({report['split']} of {report['apart_pairs']} pairs of different entities)",
        f"  lookup accuracy  {pct('lookup_accuracy'):>5}  "
        f"({report['lookups_right']} of {report['lookups']} names and roles asked)",
        f"  relation recall  {pct('relation_recall'):>5}  "
        f"({report['related']} of {report['relations']} links)",
        f"  false finds      {report['false_finds']:>5}  "
        f"({pct('false_find_rate')} of {report['unknown']} names never said)",
    ]
    for miss in report.get("misses", []):
        rest = {k: v for k, v in miss.items() if k != "id"}
        lines.append(f"  - {miss['id']}: {rest}")
    return lines
