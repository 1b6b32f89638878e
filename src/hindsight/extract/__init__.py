"""Memory extractors. ``registry.create(name, settings)`` builds one by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindsight.extract.base import (
    EXTRACTABLE_KINDS,
    Extracted,
    Extractor,
    registry,
)
from hindsight.extract.heuristic import HeuristicExtractor, events, triggers
from hindsight.registry import Options, no_options

if TYPE_CHECKING:
    from hindsight.config import Settings

DEFAULT_EXTRACTOR = "heuristic"


def _heuristic(settings: Settings, options: Options) -> Extractor:
    no_options("extractor", DEFAULT_EXTRACTOR, options)
    return HeuristicExtractor()


registry.register(DEFAULT_EXTRACTOR, _heuristic)

__all__ = [
    "DEFAULT_EXTRACTOR",
    "EXTRACTABLE_KINDS",
    "Extracted",
    "Extractor",
    "events",
    "registry",
    "triggers",
]
