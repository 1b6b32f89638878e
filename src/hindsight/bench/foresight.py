"""The foresight benchmark: dated turns retained, then what lies ahead compared with what
a person expects.

A file (``bench/foresight/*.json``: ``{"name", "version": 1, "scenarios": [...]}``)
holds scenarios, each with ``turns`` (``text``, ``observed_at``, and a ``role``: by
default ``user``), a ``now``, ``days`` and
the ``expect``-ed items (``content``: a word of it, ``due``: an ISO date or null,
``kind``), and optionally the users' ``timezone`` (default UTC). Each scenario has an
owner of its own; its turns are retained through the engine, then
:meth:`~hindsight.Hindsight.foresee` is asked as at ``now``. An expected item is
**found** by the first listed item not yet matched whose content holds its word (any
case); per file:

- **hit rate**: expected items found, of those expected;
- **due accuracy**: found items listed on the expected day (or both undated), of those
  found; **kind accuracy** likewise for the kind;
- **false items**: listed items no expected item matched (a past, cancelled, done or
  far item listed, or one made of nothing), with their share of all listed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from hindsight.bench.suite import share
from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.embed import registry as embedders
from hindsight.engine import Hindsight
from hindsight.errors import ValidationError
from hindsight.foresight import Item


@dataclass(frozen=True, slots=True)
class Expected:
    content: str
    due: date | None
    kind: str


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    turns: tuple[tuple[str, str, str], ...]  # (text, observed_at, role)
    now: str
    days: int
    expect: tuple[Expected, ...]
    timezone: str = "UTC"


def load(path: Path) -> tuple[str, list[Scenario]]:
    """A file's name and scenarios, each field checked (a ValidationError names the first
    that is wrong)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return str(data.get("name", path.stem)), [_scenario(s) for s in data["scenarios"]]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationError(f"{path}: not a readable JSON file: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValidationError(f"{path}: not a foresight scenario file: {exc!r}") from None


def _scenario(raw: Mapping[str, Any]) -> Scenario:
    return Scenario(
        id=str(raw["id"]),
        turns=tuple(
            (str(t["text"]), str(t["observed_at"]), str(t.get("role", "user")))
            for t in raw["turns"]
        ),
        now=str(raw["now"]),
        days=int(raw["days"]),
        expect=tuple(
            Expected(
                str(e["content"]),
                None if e["due"] is None else date.fromisoformat(e["due"]),
                str(e["kind"]),
            )
            for e in raw["expect"]
        ),
        timezone=str(raw.get("timezone", "UTC")),
    )


@dataclass(slots=True)
class Tally:
    expected: int = 0
    found: int = 0
    due_right: int = 0
    kind_right: int = 0
    listed: int = 0
    false: int = 0
    scenarios: int = 0
    scenarios_right: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenarios": self.scenarios,
            "scenarios_right": self.scenarios_right,
            "expected": self.expected,
            "found": self.found,
            "listed": self.listed,
            "hit_rate": share(self.found, self.expected),
            "due_accuracy": share(self.due_right, self.found),
            "kind_accuracy": share(self.kind_right, self.found),
            "false_items": self.false,
            "false_rate": share(self.false, self.listed),
        }


def run(
    settings: Settings,
    scenarios: Sequence[Scenario],
    *,
    embedder: Embeddings | None = None,
    details: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Every scenario through the engine: one store, an engine per time zone."""
    embedder = embedder or embedders.create(settings.embedding_provider, settings)
    tally = Tally()
    zones = sorted({s.timezone for s in scenarios})
    for zone in zones:
        with Hindsight(settings.model_copy(update={"timezone": zone}), embedder=embedder) as hs:
            for number, scenario in enumerate(scenarios):
                if scenario.timezone == zone:
                    _score(hs, f"user:foresight-{number}", scenario, tally)
                    if progress is not None:
                        progress(1)
    report = tally.as_dict()
    return {**report, "misses": tally.misses} if details else report


def _score(hs: Hindsight, owner: str, scenario: Scenario, tally: Tally) -> None:
    for text, at, role in scenario.turns:
        hs.retain(owner, messages=[{"role": role, "content": text}], observed_at=at)
    listed = hs.foresee(owner, now=scenario.now, days=scenario.days)
    left = list(listed)
    wrong: list[dict[str, Any]] = []
    for want in scenario.expect:
        got = next((i for i in left if want.content.lower() in i.content.lower()), None)
        if got is None:
            wrong.append({"expected": want.content, "found": None})
            continue
        left.remove(got)
        due_right = _day(got) == want.due
        tally.found += 1
        tally.due_right += due_right
        tally.kind_right += got.kind == want.kind
        if not due_right or got.kind != want.kind:
            wrong.append({"expected": want.content, "found": _shown(got)})
    tally.expected += len(scenario.expect)
    tally.listed += len(listed)
    tally.false += len(left)
    tally.scenarios += 1
    tally.scenarios_right += not wrong and not left
    if wrong or left:
        tally.misses.append({"id": scenario.id, "wrong": wrong, "false": [_shown(i) for i in left]})


def _day(item: Item) -> date | None:
    return item.due.date() if isinstance(item.due, datetime) else item.due


def _shown(item: Item) -> dict[str, Any]:
    day = _day(item)
    return {
        "content": item.content,
        "due": None if day is None else day.isoformat(),
        "kind": item.kind,
    }


def table(name: str, report: Mapping[str, Any]) -> list[str]:
    """The report for people: one figure a line."""

    def pct(key: str) -> str:
        value = report[key]
        return "-" if value is None else f"{value:.0%}"

    found, expected, listed = report["found"], report["expected"], report["listed"]
    lines = [
        f"{name}: {report['scenarios']} scenarios, {report['scenarios_right']} exactly right",
        f"  hit rate       {pct('hit_rate'):>5}  ({found} of {expected} expected)",
        f"  due accuracy   {pct('due_accuracy'):>5}  (of those found)",
        f"  kind accuracy  {pct('kind_accuracy'):>5}  (of those found)",
        f"  false items    {report['false_items']:>5}  ({pct('false_rate')} of {listed} listed)",
    ]
    for miss in report.get("misses", []):
        lines.append(f"  - {miss['id']}: wrong {miss['wrong']} false {miss['false']}")
    return lines
