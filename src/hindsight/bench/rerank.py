"""``hindsight bench rerank``: what the rerank step costs a recall, against loopback servers.

The store holds ``n`` generated memories of one owner (``bench scale``'s text, imported
in bulk). The same ``queries`` questions are asked with no reranker (the baseline),
then with ``http`` (a rerank server on loopback, in this process, that answers in the
Cohere/Jina/vLLM shape and scores a document by the words it shares with the query) and
``llm`` (an OpenAI-protocol chat server on loopback that answers scores the same way).
The recall cache is off. Reported: each recall's time (p50/p95), the rerank step's own
(p50/p95, from each recall's explanation) and, for ``llm``, the tokens per recall the
server reported. The servers answer at once: this is hindsight's side of the cost (the
request, the answer read, the blend), not a model's. What a real cross-encoder or LLM
adds in quality cannot be measured offline without one: not reported.
"""

from __future__ import annotations

import contextlib
import json
import re
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hindsight.bench.scale import OWNER, sentences
from hindsight.config import Settings
from hindsight.engine import Hindsight

_BATCH = 2_000
_WORD = re.compile(r"\w+")


@dataclass(slots=True)
class RerankResult:
    n: int
    queries: int
    candidates: int
    recall_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # by reranker
    rerank_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    tokens_per_recall: float = 0.0  # llm: prompt + completion, mean
    fell_back: dict[str, int] = field(default_factory=dict)  # recalls not reranked

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def _overlap(query: str, documents: list[str]) -> list[int]:
    asked = set(_WORD.findall(query.lower()))
    return [len(asked & set(_WORD.findall(d.lower()))) for d in documents]


def _handler() -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # as real servers do: no 40 ms delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            if self.path.endswith("/rerank"):
                scores = _overlap(body["query"], body["documents"])
                order = sorted(range(len(scores)), key=lambda i: -scores[i])
                answer: Any = {
                    "results": [{"index": i, "relevance_score": scores[i]} for i in order]
                }
            else:  # chat completions: the llm reranker's prompt
                prompt = body["messages"][-1]["content"]
                query = prompt.split("\n", 1)[0]
                passages = re.findall(r"^\[\d+\] (.*)$", prompt, re.MULTILINE)
                text = json.dumps({"scores": _overlap(query, passages)})
                answer = {
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                    "usage": {
                        "prompt_tokens": len(prompt) // 4,
                        "completion_tokens": len(text) // 3,
                    },
                }
                answer["choices"][0]["finish_reason"] = "stop"
            payload = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextlib.contextmanager
def loopback() -> Iterator[str]:
    """A rerank and chat server on a free loopback port, for the block; its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler())
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _fill(hs: Hindsight, n: int, progress: Callable[[int], None] | None) -> None:
    base = datetime(2024, 1, 1, tzinfo=UTC)
    pending: list[dict[str, Any]] = []
    for i, text in enumerate(sentences(n)):
        pending.append(
            {
                "id": f"b_{i:09d}",
                "owner": OWNER,
                "kind": "fact",
                "content": text,
                "observed_at": (base + timedelta(minutes=i)).isoformat(),
            }
        )
        if len(pending) == _BATCH or i == n - 1:
            hs.import_records(pending)
            if progress:
                progress(len(pending))
            pending = []


def run(
    settings: Settings,
    n: int,
    *,
    queries: int = 200,
    progress: Callable[[int], None] | None = None,
) -> RerankResult:
    """Build a store of ``n`` memories, then time ``queries`` recalls per reranker."""
    plain = settings.model_copy(update={"recall_cache_seconds": 0, "reranker": "none"})
    asked = [f"what about {text.split(' (note')[0]}?" for text in sentences(queries, seed=5)]
    result = RerankResult(n=n, queries=len(asked), candidates=settings.rerank_candidates)
    with Hindsight(plain) as hs:
        _fill(hs, n, progress)
    with loopback() as url:
        configs = {
            "none": plain,
            "http": plain.model_copy(update={"reranker": "http", "rerank_base_url": url}),
            "llm": plain.model_copy(
                update={
                    "reranker": "llm",
                    "llm_provider": "openai",
                    "llm_base_url": url,
                    "llm_model": "bench",
                    "llm_worker": False,
                    "llm_extract": False,
                    "llm_assess": False,
                    "llm_max_retries": 0,
                }
            ),
        }
        for name, config in configs.items():
            with Hindsight(config) as hs:
                hs.recall(OWNER, "warm up the index")
                times, steps, tokens, fell = [], [], [], 0
                for query in asked:
                    start = time.perf_counter()
                    found = hs.recall(OWNER, query, k=10)
                    times.append((time.perf_counter() - start) * 1000)
                    info = found[0].explanation.rerank if found else None
                    if info is not None:
                        steps.append(float(info["ms"]))
                        tokens.append(int(info.get("tokens", 0)))
                        fell += not info["applied"]
                result.recall_ms[name] = {"p50": _p(times, 0.5), "p95": _p(times, 0.95)}
                if steps:
                    result.rerank_ms[name] = {"p50": _p(steps, 0.5), "p95": _p(steps, 0.95)}
                    result.fell_back[name] = fell
                if name == "llm" and tokens:
                    result.tokens_per_recall = round(statistics.fmean(tokens), 1)
    return result
