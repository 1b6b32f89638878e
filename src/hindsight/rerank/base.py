"""The reranker seam: one required method, :meth:`Reranker.score`, and the rest on top.

A reranker reads a query beside each candidate text and says how relevant each is (a
cross-encoder, a hosted rerank endpoint, an LLM asked to judge). Its scores are on its
own scale; only their order and spread among one recall's candidates are used
(:func:`hindsight.rerank.blend`). Providers register by name in :data:`registry`,
built-ins the same way a plugin would (entry points ``reranker.<name>``).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hindsight.errors import RerankError
from hindsight.registry import Registry

if TYPE_CHECKING:
    from hindsight.llm.meter import Meter


@dataclass(frozen=True, slots=True)
class Ranking:
    """A reranker's answer: one score per document, in the documents' order, and the
    LLM tokens it took (prompt and completion; 0 for a model that is not an LLM)."""

    scores: tuple[float, ...]
    tokens: int = 0


class Reranker(abc.ABC):
    """Scores documents for a query; higher is more relevant."""

    #: Named in each result's explanation.
    name: str = "reranker"

    @abc.abstractmethod
    def score(self, query: str, documents: Sequence[str]) -> Sequence[float]:
        """One relevance score per document, in order; raise
        :class:`~hindsight.errors.RerankError` (or any error: recall catches it) when
        there is none to give."""

    def rank(self, query: str, documents: Sequence[str], *, owner: str) -> Ranking:
        """:meth:`score`, checked: as many finite numbers as documents. ``owner`` is whose
        memories these are, for a reranker that accounts its work per owner (the LLM)."""
        return Ranking(checked(self.score(query, documents), len(documents)))

    def use_llm(self, meter: Meter) -> None:  # noqa: B027 - a hook: only the LLM's uses it
        """Given the engine's LLM (every call accounted per owner) when the engine is made."""

    def close(self) -> None:  # noqa: B027 - a hook: providers with connections close them
        """Release connections; the reranker is not used after."""


def checked(scores: Sequence[float], count: int) -> tuple[float, ...]:
    """``scores`` as floats, if there are ``count`` of them and each is a finite number."""
    if len(scores) != count:
        raise RerankError(f"the reranker gave {len(scores)} scores for {count} documents")
    out = []
    for value in scores:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RerankError(f"the reranker gave a score that is not a number: {value!r}")
        if not math.isfinite(value):
            raise RerankError(f"the reranker gave a score that is not finite: {value!r}")
        out.append(float(value))
    return tuple(out)


registry: Registry[Reranker | None] = Registry("reranker", "HINDSIGHT_RERANKER")
"""Rerankers by name; ``none`` makes None (no rerank step)."""
