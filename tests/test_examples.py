"""Every example in examples/ runs offline, as the README says, against the real framework."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))
# the framework each example needs; crewAI lives in an environment of its own
NEEDS = {"crewai_memory.py": "crewai"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_the_example_runs_offline(example: Path, tmp_path: Path) -> None:
    needed = NEEDS.get(example.name)
    if needed and importlib.util.find_spec(needed) is None:
        if os.environ.get("HINDSIGHT_TEST_CREWAI"):
            pytest.fail(f"{needed} is not installed")
        pytest.skip(f"{needed} runs in its own environment (scripts/check-crewai)")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "HINDSIGHT_HOME": str(tmp_path),
        "CREWAI_TRACING_ENABLED": "false",
        "CREWAI_DISABLE_TELEMETRY": "true",
    }
    done = subprocess.run(
        [sys.executable, str(example)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip(), "the example printed nothing"
