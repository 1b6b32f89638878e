"""Memory extractors. ``registry.create(name)`` builds one by name."""

from __future__ import annotations

from hindsight.extract.base import (
    EXTRACTABLE_KINDS,
    Extracted,
    Extractor,
    registry,
)

DEFAULT_EXTRACTOR = "heuristic"


def _heuristic() -> Extractor:
    from hindsight.extract.heuristic import HeuristicExtractor

    return HeuristicExtractor()


registry.register(DEFAULT_EXTRACTOR, _heuristic)

__all__ = [
    "DEFAULT_EXTRACTOR",
    "EXTRACTABLE_KINDS",
    "Extracted",
    "Extractor",
    "registry",
]
