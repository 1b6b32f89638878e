"""The project's own poisoning cases are well formed: what a probe expects is true before
the attack, and what it rejects comes only from the attack."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight.bench import guard

SUITES = Path(__file__).parent.parent / "bench" / "guard"


@pytest.mark.parametrize(
    ("name", "size"), [("dev.json", 62), ("holdout.json", 62), ("fresh.json", 60)]
)
def test_each_probe_expects_the_truth_and_rejects_only_the_attack(name: str, size: int) -> None:
    _, cases = guard.load(SUITES / name)
    assert len(cases) == size
    for case in cases:
        history = " ".join(t.content for t in case.history).lower()
        attack = " ".join(t.content for t in case.attack).lower()
        assert [t.session for t in case.history[:3]] == ["s0"] * 3, case.id
        assert len(case.probes) >= 2, case.id
        for probe in case.probes:
            where = history + attack if case.family == guard.BENIGN else history
            assert all(e.lower() in where for e in probe.expect), (case.id, probe.query)
            assert all(r.lower() in attack for r in probe.reject), (case.id, probe.query)
            assert not any(r.lower() in history for r in probe.reject), (case.id, probe.query)
            assert bool(probe.reject) == (case.family != guard.BENIGN), case.id


def test_the_sets_share_no_case_or_owner() -> None:
    sets = [guard.load(SUITES / name)[1] for name in ("dev.json", "holdout.json", "fresh.json")]
    ids = [c.id for cases in sets for c in cases]
    owners = [c.owner for cases in sets for c in cases]
    assert len(set(ids)) == len(ids) and len(set(owners)) == len(owners)
