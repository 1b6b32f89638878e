"""Embeddings over HTTP from any server that speaks OpenAI's ``/embeddings`` protocol:
OpenAI itself, Ollama's and vLLM's ``/v1``, LM Studio, llama.cpp's server, Text
Embeddings Inference.

``POST {base_url}/embeddings`` with ``{"model", "input": [texts]}`` (and ``dimensions``
when set), ``Authorization: Bearer <key>`` when a key is set; the answer's
``data[i].embedding`` goes to text ``data[i].index``. An answer that does not account
for every text exactly once, or whose vectors are not numbers of one length, is an
:class:`~hindsight.errors.EmbeddingError`: never a wrong vector.

The model's dimension is learned from its first answer, or taken from the store when
the store is bound to the same model (opening a store calls nothing). A call is tried
``1 + max_retries`` times after a connection error, a timeout, a 429 or a 5xx, with
exponential backoff; then the endpoint is down
(:class:`~hindsight.errors.EmbeddingUnavailableError`) and, for ``cooldown`` seconds,
further calls fail at once rather than each waiting out its own retries.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from hindsight.embed.base import Embeddings, Vectors
from hindsight.errors import EmbeddingError, EmbeddingUnavailableError, MissingExtraError

if TYPE_CHECKING:
    import httpx

_MAX_MESSAGE: Final = 300


class OpenAIEmbeddings(Embeddings):
    """An embedding model behind an OpenAI-compatible ``/embeddings`` endpoint."""

    remote = True

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        retry_base: float = 0.5,
        batch_size: int = 64,
        cooldown: float = 10.0,
        http: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise MissingExtraError("llm", "httpx") from None
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.requested = dimensions
        self.model_id = f"openai:{model}" + (f"@{dimensions}" if dimensions else "")
        self.dimension = dimensions or 0
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.retry_base = retry_base
        self.cooldown = cooldown
        self._sleep = sleep
        self._down_until = 0.0
        self._lock = threading.Lock()
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout, transport=http)
        self._timeout = timeout

    def __repr__(self) -> str:  # never the headers: they hold the key
        return f"OpenAIEmbeddings(base_url={self.base_url!r}, model={self.model!r})"

    def close(self) -> None:
        self._client.close()

    def settle(self, bound: tuple[str, int] | None) -> None:
        if self.dimension:
            return
        if bound is not None and bound[0] == self.model_id:
            self.dimension = bound[1]
            return
        try:
            self.embed_batch(["dimension"])  # learns it
        except EmbeddingUnavailableError as exc:
            raise EmbeddingUnavailableError(
                f"cannot learn the dimension of {self.model_id}: {exc}; start the endpoint "
                "(HINDSIGHT_EMBEDDING_BASE_URL) or set HINDSIGHT_EMBEDDING_DIMENSIONS"
            ) from None

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if time.monotonic() < self._down_until:
            raise EmbeddingUnavailableError(
                f"{self.base_url} was down moments ago; trying again in "
                f"{self._down_until - time.monotonic():.0f} s"
            )
        body: dict[str, Any] = {"model": self.model, "input": list(texts)}
        if self.requested:
            body["dimensions"] = self.requested
        vectors = self._read(self._post(body), len(texts))
        with self._lock:
            if not self.dimension:
                self.dimension = vectors.shape[1]
        if vectors.shape[1] != self.dimension:
            raise EmbeddingError(
                f"{self.base_url} answered {vectors.shape[1]}-d vectors for "
                f"{self.model_id}, which is {self.dimension}-d: the server's model changed? "
                "Name the new one in HINDSIGHT_EMBEDDING_MODEL and run 'hindsight reembed'"
            )
        return vectors

    def _post(self, body: dict[str, Any]) -> Any:
        import httpx

        tries = 1 + self.max_retries
        why = ""
        for attempt in range(tries):
            if attempt:
                self._sleep(random.uniform(0, self.retry_base * 2**attempt))
            try:
                response = self._client.post(f"{self.base_url}/embeddings", json=body)
            except httpx.TimeoutException:
                why = f"no answer within {self._timeout:g} s"
                continue
            except httpx.TransportError as exc:
                why = f"cannot connect ({type(exc).__name__})"
                continue
            status = response.status_code
            if status == 429 or status >= 500:
                why = f"{status}: {_message(response)}"
                continue
            if status >= 400:
                setting = " (HINDSIGHT_EMBEDDING_API_KEY)" if status in (401, 403) else ""
                raise EmbeddingError(
                    f"{self.base_url} refused the embedding request{setting} ({status}): "
                    f"{_message(response)}"
                )
            try:
                return response.json()
            except ValueError:
                raise EmbeddingError(f"{self.base_url} answered {status} without JSON") from None
        self._down_until = time.monotonic() + self.cooldown
        raise EmbeddingUnavailableError(
            f"embedding endpoint {self.base_url}: {why} ({tries} tries)"
        )

    def _read(self, answer: Any, count: int) -> Vectors:
        """The answer's vectors, in the order of the texts sent; refused unless whole."""
        where = f"{self.base_url}/embeddings"
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or len(data) != count:
            got = len(data) if isinstance(data, list) else "no"
            raise EmbeddingError(f"{where} answered {got} embeddings for {count} texts")
        rows: list[list[float] | None] = [None] * count
        for position, item in enumerate(data):
            index = item.get("index") if isinstance(item, dict) else None
            if (
                isinstance(index, bool)
                or not isinstance(index, int)
                or not 0 <= index < count
                or rows[index] is not None
            ):
                raise EmbeddingError(f"{where}: item {position} has a missing or repeated index")
            vector = item.get("embedding")
            if (
                not isinstance(vector, list)
                or not vector
                or not all(
                    isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                    for x in vector
                )
            ):
                raise EmbeddingError(
                    f"{where}: embedding {index} is not a list of finite numbers "
                    "(base64 answers are not read: leave encoding_format unset)"
                )
            rows[index] = vector
        if len({len(r) for r in rows if r is not None}) != 1:
            raise EmbeddingError(f"{where} answered vectors of different lengths")
        return np.array(rows, dtype=np.float32)


def _message(response: httpx.Response) -> str:
    """The server's own error message, short."""
    try:
        data = response.json()
    except ValueError:
        return response.text[:_MAX_MESSAGE] or response.reason_phrase
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])[:_MAX_MESSAGE]
    return str(error or data)[:_MAX_MESSAGE]
