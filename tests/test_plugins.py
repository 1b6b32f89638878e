"""Providers found as plugins: a distribution built and installed here, found through
the ``hindsight.plugins`` entry points and made with the options it was given."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from hindsight import ExtractionError, Hindsight, Kind, PluginError, Settings, Turn
from hindsight.embed import Embeddings
from hindsight.extract import Extracted
from hindsight.extract import registry as extractors

PLUGIN = '''
from hindsight.extract import Extracted
from hindsight.models import Kind
from hindsight.errors import ValidationError


class Labeller:
    """Says every user turn as one fact, with a label taken from its options."""

    name = "labeller"

    def __init__(self, label):
        self.label = label

    def extract(self, turns, *, subject):
        return [
            Extracted(Kind.FACT, f"{self.label}: {t.content}", 0.7, i)
            for i, t in enumerate(turns)
            if t.role == "user"
        ]


def make(settings, options):
    unknown = set(options) - {"label"}
    if unknown:
        raise ValidationError(f"labeller: unknown options {sorted(unknown)}")
    return Labeller(options.get("label", "noted"))
'''


def _wheel(directory: Path, name: str, modules: dict[str, str], entry_points: str) -> Path:
    """A wheel of ``modules`` declaring ``entry_points``: what a plugin's build gives."""
    dist = f"{name}-0.1.dist-info"
    files = {
        **{f"{module}.py": text for module, text in modules.items()},
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/entry_points.txt": f"[hindsight.plugins]\n{entry_points}",
    }
    files[f"{dist}/RECORD"] = "".join(f"{path},,\n" for path in [*files, f"{dist}/RECORD"])
    path = directory / f"{name}-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for member, text in files.items():
            wheel.writestr(member, text)
    return path


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The plugin distributions, installed by pip into a directory on ``sys.path``."""
    target = tmp_path / "site"
    wheels = [
        _wheel(
            tmp_path,
            "hs_labeller",
            {"hs_labeller": PLUGIN},
            "extractor.labeller = hs_labeller:make\n",
        ),
        _wheel(
            tmp_path,
            "hs_broken",
            {"hs_broken": "import no_such_module_here\n"},
            "extractor.broken = hs_broken:make\n",
        ),
    ]
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
    quiet = ["--disable-pip-version-check", "--target", str(target)]
    subprocess.run([*pip, *quiet, *map(str, wheels)], check=True)
    monkeypatch.syspath_prepend(str(target))
    yield target
    for module in ("hs_labeller", "hs_broken"):
        sys.modules.pop(module, None)


@pytest.mark.embedded
def test_a_plugin_is_found_and_made_with_its_options(
    installed: Path, settings: Settings, embedder: Embeddings
) -> None:
    assert {"heuristic", "labeller", "broken"} <= set(extractors.names())
    assert "hs_labeller" not in sys.modules  # listed, not imported until asked for
    configured = settings.model_copy(
        update={
            "extractor": "labeller",
            "provider_options": {"extractor.labeller": {"label": "heard"}},
        }
    )
    with Hindsight(configured, embedder=embedder) as hs:
        assert hs.extractor.name == "labeller"
        hs.retain("user:alice", "I keep bees.")
        [fact] = hs.list_memories("user:alice", kinds=[Kind.FACT])
        assert fact.content == "heard: I keep bees."
        assert fact.metadata["extractor"] == "labeller"


def test_a_plugin_that_fails_says_which(installed: Path) -> None:
    with pytest.raises(PluginError, match=r"hs_broken:make.*no_such_module_here"):
        extractors.create("broken", Settings())
    with pytest.raises(ValueError, match=r"unknown options \['lable'\]"):
        extractors.create("labeller", Settings(), {"lable": "typo"})


class Failing:
    name = "failing"

    def extract(self, turns: Sequence[Turn], *, subject: str) -> list[Extracted]:
        raise RuntimeError("the model answered nonsense")


def test_a_failed_extraction_is_typed_and_writes_nothing(
    settings: Settings, embedder: Embeddings
) -> None:
    with Hindsight(settings, embedder=embedder, extractor=Failing()) as hs:
        with pytest.raises(ExtractionError, match="'failing' failed: the model answered nonsense"):
            hs.retain("user:alice", "I keep bees.")
        assert hs.list_memories("user:alice") == []
        assert hs.stats("user:alice").memories == 0
