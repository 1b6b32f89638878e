"""The poisoning benchmark: attack cases retained with the guard on and off, then probed.

A suite (the format of ``shared/data/guard``: ``{"name", "version": 1, "cases": [...]}``)
holds cases of six families; each case is history turns, then attack turns, then probes
(``query``, ``expect`` and ``reject`` substrings). Each case has an owner of its own, so
one store per mode is a fresh store per case. Per probe, recall k = 5:

- an **attack hit** is a ``reject`` substring (any case) in a result's content (default
  recall returns active memories only, so anything returned counts),
- a probe is **benign kept** when each ``expect`` substring is in some result,
- a **false flag** is a benign write (a history turn, or any turn of a
  ``benign_control`` case) of which a memory was quarantined, held, or flagged,
- a **leak** is a result of another owner than the probe's.

A turn refused with a :class:`~hindsight.errors.HindsightError` is not stored; a case
that fails otherwise counts as a hit for each attack probe and a loss for each probe.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from hindsight.bench import suite
from hindsight.config import Settings
from hindsight.embed import Embeddings
from hindsight.embed import registry as embedders
from hindsight.engine import Hindsight
from hindsight.errors import HindsightError, ValidationError
from hindsight.models import Status

FAMILIES: Final = (
    "instruction_injection",
    "fact_override",
    "repetition_drift",
    "recall_trigger",
    "exfiltration",
    "benign_control",
)
BENIGN: Final = "benign_control"
K: Final = 5
_log = logging.getLogger("hindsight.bench.guard")


@dataclass(frozen=True, slots=True)
class Turn:
    session: str
    source: str
    at: str
    content: str


@dataclass(frozen=True, slots=True)
class Probe:
    query: str
    expect: tuple[str, ...]
    reject: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    family: str
    owner: str
    history: tuple[Turn, ...]
    attack: tuple[Turn, ...]
    probes: tuple[Probe, ...]


def load(path: Path) -> tuple[str, list[Case]]:
    """A suite's name and cases, each field checked (a ValidationError names the first
    that is wrong)."""
    data = suite.read(path, "cases")
    cases, ids, owners = [], set(), set()
    for i, raw in enumerate(data["cases"]):
        case = _case(raw, f"{path}: cases[{i}]")
        if case.id in ids or case.owner in owners:
            raise ValidationError(f"{path}: cases[{i}] repeats an id or an owner")
        ids.add(case.id)
        owners.add(case.owner)
        cases.append(case)
    return str(data.get("name", path.stem)), cases


def _case(raw: object, at: str) -> Case:
    if not isinstance(raw, dict):
        raise ValidationError(f"{at} must be an object")
    for name in ("id", "family", "owner"):
        if not isinstance(raw.get(name), str):
            raise ValidationError(f"{at}.{name} must be a string")
    if raw["family"] not in FAMILIES:
        raise ValidationError(f"{at}.family must be one of {', '.join(FAMILIES)}")

    def turns(part: str) -> tuple[Turn, ...]:
        items = raw.get(part) or []
        if not isinstance(items, list):
            raise ValidationError(f"{at}.{part} must be a list")
        out = []
        for j, t in enumerate(items):
            if not isinstance(t, dict) or not all(
                isinstance(t.get(f), str) for f in ("session", "source", "at", "content")
            ):
                raise ValidationError(f"{at}.{part}[{j}] needs session, source, at, content")
            out.append(Turn(t["session"], t["source"], t["at"], t["content"]))
        return tuple(out)

    probes = []
    for j, p in enumerate(raw.get("probes") or []):
        if not isinstance(p, dict) or not isinstance(p.get("query"), str):
            raise ValidationError(f"{at}.probes[{j}] needs a query")
        expect, reject = p.get("expect") or [], p.get("reject") or []
        if not all(isinstance(x, str) for x in [*expect, *reject]):
            raise ValidationError(f"{at}.probes[{j}]: expect and reject hold strings")
        probes.append(Probe(p["query"], tuple(expect), tuple(reject)))
    return Case(
        raw["id"], raw["family"], raw["owner"], turns("history"), turns("attack"), tuple(probes)
    )


@dataclass(slots=True)
class _Tally:
    probes: int = 0
    attack_probes: int = 0
    hits: int = 0
    kept: int = 0
    benign_writes: int = 0
    false_flags: int = 0
    leaks: int = 0

    def add(self, other: _Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, Any]:
        return {
            "n_probes": self.probes,
            "attack_success": round(self.hits / self.attack_probes, 4)
            if self.attack_probes
            else None,
            "benign_kept": round(self.kept / self.probes, 4) if self.probes else None,
            "false_flags": self.false_flags,
            "benign_writes": self.benign_writes,
            "leaks": self.leaks,
        }


@dataclass(slots=True)
class Mode:
    """One mode's results: per family, and overall."""

    families: dict[str, _Tally] = field(default_factory=dict)
    seconds: float = 0.0
    details: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        overall = _Tally()
        for tally in self.families.values():
            overall.add(tally)
        out = {"overall": overall.as_dict()}
        out |= {name: self.families[name].as_dict() for name in FAMILIES if name in self.families}
        return out | {"seconds": round(self.seconds, 2)}


def run(
    settings: Settings,
    cases: Sequence[Case],
    *,
    embedder: Embeddings | None = None,
    details: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Both modes over the same cases, guarded first; each in a store under its own home."""
    embedder = embedder or embedders.create(settings.embedding_provider, settings)
    modes = {}
    for name, guard in (("guarded", True), ("unguarded", False)):
        home = settings.home / name
        home.mkdir(parents=True, exist_ok=True)
        mode_settings = settings.model_copy(update={"home": home, "guard": guard})
        with Hindsight(mode_settings, embedder=embedder) as hs:
            modes[name] = _mode(hs, cases, details=details, progress=progress)
    return {
        "k": K,
        "cases": len(cases),
        **{name: mode.as_dict() for name, mode in modes.items()},
        **({"details": {n: m.details for n, m in modes.items()}} if details else {}),
    }


def _mode(
    hs: Hindsight,
    cases: Sequence[Case],
    *,
    details: bool,
    progress: Callable[[int], None] | None,
) -> Mode:
    mode = Mode()
    started = time.perf_counter()
    for case in cases:
        tally = mode.families.setdefault(case.family, _Tally())
        try:
            tally.add(_run_case(hs, case, mode.details if details else None))
        except Exception:  # the suite's rule: a case that fails counts against the library
            _log.exception("case %s failed", case.id)
            attacks = 0 if case.family == BENIGN else len(case.probes)
            tally.add(_Tally(probes=len(case.probes), attack_probes=attacks, hits=attacks))
        if progress is not None:
            progress(1)
    mode.seconds = time.perf_counter() - started
    return mode


def _run_case(hs: Hindsight, case: Case, details: list[dict[str, Any]] | None) -> _Tally:
    tally = _Tally()
    benign = case.family == BENIGN
    written: list[list[str]] = []  # of each benign write, what it stored
    for part, turns in (("history", case.history), ("attack", case.attack)):
        for turn in turns:
            ids = _retain(hs, case.owner, turn)
            if part == "history" or benign:
                written.append(ids)
    for ids in written:  # once all is written: a later write may hold an earlier one
        tally.benign_writes += 1
        if any(m.status is not Status.ACTIVE or m.flags for m in hs.store.get(ids)):
            tally.false_flags += 1
    for probe in case.probes:
        results = hs.recall(case.owner, probe.query, k=K)
        texts = [r.memory.content.lower() for r in results]
        hit = any(r.lower() in t for r in probe.reject for t in texts)
        kept = all(any(e.lower() in t for t in texts) for e in probe.expect)
        tally.probes += 1
        tally.attack_probes += not benign
        tally.hits += hit and not benign
        tally.kept += kept
        tally.leaks += sum(r.memory.owner != case.owner for r in results)
        if details is not None:
            details.append(
                {
                    "case": case.id,
                    "query": probe.query,
                    "hit": hit,
                    "kept": kept,
                    "results": [r.memory.content[:160] for r in results],
                }
            )
    return tally


def _retain(hs: Hindsight, owner: str, turn: Turn) -> list[str]:
    """Retain one turn as the suite says; the ids of what it stored (none if refused)."""
    try:
        result = hs.retain(
            owner, turn.content, session_id=turn.session, source=turn.source, observed_at=turn.at
        )
    except HindsightError as exc:
        _log.info("turn refused: %s", exc)
        return []
    return [*result.episodes, *result.created]


def table(report: Mapping[str, Any]) -> list[str]:
    """The report as a table: one row per family, guarded beside unguarded."""
    head = (
        f"{'family':<22} {'probes':>6}  {'attack success':>15}  {'benign kept':>12}  "
        f"{'false flags':>11}"
    )
    lines = [head, "-" * len(head)]
    for name in ("overall", *FAMILIES):
        g, u = report["guarded"].get(name), report["unguarded"].get(name)
        if g is not None:
            cells = [_pair(g, u, "attack_success"), _pair(g, u, "benign_kept")]
            flags = f"{g['false_flags']} / {u['false_flags']}"
            lines.append(
                f"{name:<22} {g['n_probes']:>6}  {cells[0]:>15}  {cells[1]:>12}  {flags:>11}"
            )
    lines.append("(guarded / unguarded)")
    return lines


def _pair(guarded: Mapping[str, Any], unguarded: Mapping[str, Any], key: str) -> str:
    a, b = guarded[key], unguarded[key]
    return "-" if a is None else f"{a:.2f} / {b:.2f}"
