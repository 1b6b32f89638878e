"""A real HTTP server on loopback that speaks OpenAI's ``/embeddings`` protocol and
answers with the bundled MiniLM's vectors: the HTTP embedding path end to end.

It can be stopped and started again on the same port (an outage), answer slowly, or
answer from a script (malformed answers, errors), and records what it was sent.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from llm_servers import FakeLLM, Reply, Seen, _handler

if TYPE_CHECKING:
    from hindsight import Settings
    from hindsight.embed import Embeddings

MODEL = "all-minilm"


class EmbeddingServer:
    """OpenAI's embeddings protocol over the bundled model; ``url`` ends in ``/v1``."""

    def __init__(self, embedder: Embeddings, *, key: str | None = None) -> None:
        self.embedder = embedder
        self.key = key
        self.fake = FakeLLM()  # the script, the requests seen
        self.fake.respond = self._answer
        self.delay = 0.0
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def seen(self) -> list[Seen]:
        return self.fake.seen

    def script(self, *replies: Reply) -> None:
        self.fake.script(*replies)

    def start(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler(self.fake))
        server.daemon_threads = True
        server.block_on_close = False
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.start()

    def stop(self) -> None:
        """Down: the port refuses connections until :meth:`start`."""
        if self._server is not None and self._thread is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join()
            self._server = None

    def _answer(self, seen: Seen) -> Reply:
        if not seen.path.endswith("/embeddings"):
            return Reply({"error": {"message": "not found"}}, 404)
        if self.key is not None and seen.headers.get("authorization") != f"Bearer {self.key}":
            return Reply({"error": {"message": "invalid api key"}}, 401)
        texts = seen.body["input"]
        texts = [texts] if isinstance(texts, str) else texts
        vectors = self.embedder.encode_documents(texts)
        # the items come back in reverse: a client must place them by their index
        data: list[dict[str, Any]] = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in vectors[i]]}
            for i in reversed(range(len(texts)))
        ]
        body = {
            "object": "list",
            "data": data,
            "model": seen.body["model"],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }
        # no keep-alive: a stopped server answers nothing, not even on an open connection
        return Reply(body, delay=self.delay, headers={"connection": "close"})


@contextlib.contextmanager
def embedding_server(embedder: Embeddings, *, key: str | None = None) -> Iterator[EmbeddingServer]:
    """An :class:`EmbeddingServer` running for the block."""
    server = EmbeddingServer(embedder, key=key)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def over_http(settings: Settings, server: EmbeddingServer, **more: Any) -> Settings:
    """``settings`` with ``server`` as the embedding model: quick retries, no worker
    thread (a test runs the queue), and ``more``."""
    return settings.model_copy(
        update={
            "embedding_provider": "openai",
            "embedding_base_url": server.url,
            "embedding_model": MODEL,
            "embedding_retry_base_seconds": 0.0,
            "embedding_max_retries": 1,
            "embedding_timeout_seconds": 5.0,
            "embedding_down_seconds": 0.0,
            "llm_worker": False,
            **more,
        }
    )
