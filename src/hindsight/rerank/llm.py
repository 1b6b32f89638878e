"""The configured LLM as the reranker: the seed's "lightweight LLM".

The model is shown the query and the numbered candidates (each cut to
:data:`MAX_CHARS`) and asked for a score from 0 to 10 for each. Its answer is read
leniently, since real models wrap, rename and abbreviate: JSON in a fenced block or
among prose; ``{"scores": [...]}`` in the candidates' order, or a list of
``{"index", "score"}`` objects (any of the usual names for either), or an object keyed
by number, or an order (``{"ranking": [3, 1, 2]}``); failing JSON, lines such as
``1: 8``. A candidate the answer leaves out scores below every one it scores; an answer
that scores none is an error (recall keeps its own order). Every call is accounted for
the owner as the operation ``rerank`` (the model ``llm_models["rerank"]``, else
``llm_model``): its tokens show in usage and count against the daily budget.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from hindsight.errors import RerankError
from hindsight.llm.base import Message
from hindsight.rerank.base import Ranking, Reranker, checked

if TYPE_CHECKING:
    from hindsight.llm.meter import Meter

MAX_CHARS: Final = 600  # of each candidate shown to the model
SYSTEM: Final = (
    "You rank passages from a person's long-term memory by how well each helps answer a "
    "question. Score every numbered passage from 0 (unrelated) to 10 (answers it). Answer "
    'with JSON only: {"scores": [score of passage 1, score of passage 2, ...]}.'
)
_INDEX_NAMES: Final = ("index", "id", "passage", "candidate", "number", "n", "doc", "document")
_SCORE_NAMES: Final = ("score", "relevance_score", "relevance", "rating", "value")
_ORDER_NAMES: Final = ("ranking", "order", "ranked", "rank")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_LINE = re.compile(r"(?:^|\n)\s*(?:passage\s*)?\[?#?(\d+)\]?\s*[:=)\-\]]\s*(-?\d+(?:\.\d+)?)")


class LLMReranker(Reranker):
    name = "llm"

    def __init__(self) -> None:
        self._meter: Meter | None = None

    def use_llm(self, meter: Meter) -> None:
        self._meter = meter

    def score(self, query: str, documents: Sequence[str]) -> Sequence[float]:
        return self.rank(query, documents, owner="").scores

    def rank(self, query: str, documents: Sequence[str], *, owner: str) -> Ranking:
        if self._meter is None:
            raise RerankError("the llm reranker was given no LLM")
        numbered = "\n".join(
            f"[{i}] {' '.join(text.split())[:MAX_CHARS]}" for i, text in enumerate(documents, 1)
        )
        messages = (
            Message("system", SYSTEM),
            Message("user", f"Question: {query}\n\nPassages:\n{numbered}"),
        )
        answer = self._meter.complete(
            owner, "rerank", messages, max_tokens=40 + 8 * len(documents)
        )  # an LLMError is the caller's to catch (accounted by the meter)
        if answer.truncated:
            raise RerankError("the LLM's ranking was cut off")
        scores = read_scores(answer.text, len(documents))
        return Ranking(checked(scores, len(documents)), answer.usage.total_tokens)


def read_scores(text: str, count: int) -> list[float]:
    """Each of ``count`` candidates' score from what the model answered (see the module)."""
    found: dict[int, float] = {}
    for data in _json_values(text):
        found = _from_json(data, count)
        if found:
            break
    else:
        found = {int(i) - 1: float(s) for i, s in _LINE.findall(text) if 1 <= int(i) <= count}
    if not found:
        raise RerankError(f"the LLM's ranking could not be read: {text[:120]!r}")
    floor = min(found.values()) - 1.0
    return [found.get(i, floor) for i in range(count)]


def _json_values(text: str) -> list[Any]:
    """The JSON values in ``text``: the whole, fenced blocks, the outermost brackets."""
    candidates = [text, *_FENCE.findall(text)]
    for left, right in ("{}", "[]"):
        start, end = text.find(left), text.rfind(right)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    values = []
    for candidate in candidates:
        try:
            values.append(json.loads(candidate))
        except ValueError:
            continue
    return values


def _from_json(data: Any, count: int) -> dict[int, float]:
    if isinstance(data, Mapping):
        for name in _ORDER_NAMES:
            if isinstance(data.get(name), list):
                return _from_order(data[name], count)
        if _numbered(data):
            return _zero_based({int(k): v for k, v in data.items()}, count)
        for value in data.values():
            if isinstance(value, list | Mapping) and (found := _from_json(value, count)):
                return found
        return {}
    if not isinstance(data, list):
        return {}
    if data and all(isinstance(item, Mapping) for item in data):
        pairs = {}
        for item in data:
            index = next((item[n] for n in _INDEX_NAMES if _number(item.get(n))), None)
            score = next((item[n] for n in _SCORE_NAMES if _number(item.get(n))), None)
            if index is not None and score is not None:
                pairs[int(index)] = score
        return _zero_based(pairs, count)
    if len(data) == count and all(_number(v) for v in data):
        return {i: float(v) for i, v in enumerate(data)}
    return {}


def _from_order(order: list[Any], count: int) -> dict[int, float]:
    """An order of candidate numbers, best first: the first scores highest."""
    ids = [int(v) for v in order if _number(v) and int(v) == v]
    positions = _zero_based({i: float(len(ids) - rank) for rank, i in enumerate(ids)}, count)
    return positions


def _zero_based(pairs: Mapping[int, Any], count: int) -> dict[int, float]:
    """Numbered pairs as 0-based indices: 1-based (as asked) unless 0 is among them and
    ``count`` is not."""
    shift = 0 if 0 in pairs and count not in pairs else 1
    return {i - shift: float(v) for i, v in pairs.items() if 0 <= i - shift < count and _number(v)}


def _numbered(data: Mapping[str, Any]) -> bool:
    return bool(data) and all(str(k).strip().isdigit() and _number(v) for k, v in data.items())


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
