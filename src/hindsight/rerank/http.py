"""A rerank endpoint over HTTP: the shape Cohere, Jina, Text Embeddings Inference and
vLLM serve.

``POST {base}/rerank`` with ``{"model", "query", "documents": [texts], "top_n"}`` (no
``model`` when none is set: TEI serves one model and needs none), a key as
``Authorization: Bearer``. The answer is ``{"results": [{"index", "relevance_score"}]}``
(Cohere, Jina, vLLM), or TEI's bare list ``[{"index", "score"}]``; a document the
answer leaves out scores below every one it ranks. One try, within the rerank timeout:
recall has no time to retry, and falls back to its own order instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from hindsight.errors import MissingExtraError, RerankError
from hindsight.rerank.base import Reranker

_MAX_MESSAGE: Final = 200


class HTTPReranker(Reranker):
    name = "http"

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 2.0,
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise MissingExtraError("llm", "httpx") from None
        self.base_url = base_url.rstrip("/")
        self.model = model
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)
        self._errors: tuple[type[Exception], ...] = (httpx.HTTPError,)

    def __repr__(self) -> str:  # never the headers: they hold the key
        return f"HTTPReranker(base_url={self.base_url!r}, model={self.model!r})"

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        body: dict[str, Any] = {
            "query": query,
            "documents": list(documents),
            "top_n": len(documents),
        }
        if self.model:
            body["model"] = self.model
        try:
            response = self._client.post("/rerank", json=body)
        except self._errors as exc:
            raise RerankError(
                f"cannot reach {self.base_url}/rerank: {type(exc).__name__}"
            ) from None
        if response.status_code >= 400:
            text = response.text[:_MAX_MESSAGE] or response.reason_phrase
            raise RerankError(f"{self.base_url}/rerank answered {response.status_code}: {text}")
        try:
            data = response.json()
        except ValueError:
            raise RerankError(f"{self.base_url}/rerank answered without JSON") from None
        return scores_from(data, len(documents))

    def close(self) -> None:
        self._client.close()


def scores_from(data: Any, count: int) -> list[float]:
    """The score of each of ``count`` documents from a rerank answer (either shape)."""
    items = data.get("results") if isinstance(data, dict) else data
    if not isinstance(items, list) or (count and not items):
        raise RerankError("the rerank answer holds no results list")
    found: dict[int, float] = {}
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        value = None
        if isinstance(item, dict):
            value = item.get("relevance_score", item.get("score"))
        if (
            isinstance(index, bool)
            or not isinstance(index, int)
            or not 0 <= index < count
            or index in found
        ):
            raise RerankError(f"the rerank answer has a result of no valid index: {item!r:.80}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RerankError(f"the rerank answer has a result of no score: {item!r:.80}")
        if not math.isfinite(value):
            raise RerankError(f"the rerank answer has a score that is not finite: {value!r}")
        found[index] = float(value)
    floor = min(found.values()) - 1.0  # a document left out ranks below every one ranked
    return [found.get(i, floor) for i in range(count)]
