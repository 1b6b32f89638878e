"""Real HTTP servers on loopback that speak the OpenAI and Anthropic protocols.

Each answers from a script of :class:`Reply` objects, in order, and records every
request it was sent (path, headers, JSON body) so a test can check its shape.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

    from hindsight import Hindsight, Settings
    from hindsight.embed import Embeddings


@dataclass
class Reply:
    """What the server does with one request: answer ``body`` with ``status`` (after
    ``delay`` seconds), or ``drop`` the connection without a word."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


def openai_answer(
    content: str | None,
    *,
    finish: str = "stop",
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    model: str = "m",
) -> Reply:
    return Reply(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def anthropic_answer(
    *,
    text: str | None = None,
    tool: tuple[str, Any] | None = None,
    stop: str = "end_turn",
    input_tokens: int = 13,
    output_tokens: int = 5,
) -> Reply:
    content: list[dict[str, Any]] = [{"type": "thinking", "thinking": "hmm {not json"}]
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool is not None:
        content.append({"type": "tool_use", "id": "tu_1", "name": tool[0], "input": tool[1]})
    return Reply(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": content,
            "stop_reason": stop,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
    )


def configured(settings: Settings, server: FakeLLM, **more: Any) -> Settings:
    """``settings`` with ``server`` as an OpenAI-protocol provider of model "m": no
    retries inside a call, no worker thread (a test runs the queue), and ``more``."""
    return settings.model_copy(
        update={
            "llm_provider": "openai",
            "llm_base_url": server.url + "/v1",
            "llm_model": "m",
            "llm_retry_base_seconds": 0.0,
            "llm_max_retries": 0,
            "llm_worker": False,
            **more,
        }
    )


def error(status: int, message: str, **headers: str) -> Reply:
    return Reply({"error": {"message": message, "type": "invalid_request_error"}}, status, headers)


class FakeLLM:
    """The server's script and what it saw; ``url`` is its base URL."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.seen: list[Seen] = []
        self.url = ""
        self._lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        # once the script is spent: a reply made from each request, if set
        self.respond: Callable[[Seen], Reply] | None = None

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def _next(self, seen: Seen) -> Reply:
        with self._lock:
            if self.replies:
                return self.replies.popleft()
        if self.respond is not None:  # answers made from the request itself
            return self.respond(seen)
        return error(500, "no reply scripted")


def _handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            seen = Seen(self.path, headers, json.loads(raw or b"null"))
            with fake._lock:
                fake.seen.append(seen)
                fake.in_flight += 1
                fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
            reply = fake._next(seen)
            time.sleep(reply.delay)
            with fake._lock:  # before answering: a call after this one starts after it
                fake.in_flight -= 1
            self._answer(reply)

        def _answer(self, reply: Reply) -> None:
            if reply.drop:  # dies mid-call: the connection closes with no answer
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(2)
                return
            payload = (
                reply.body.encode()
                if isinstance(reply.body, str)
                else json.dumps(reply.body).encode()
            )
            with contextlib.suppress(OSError):  # the client may have given up (a timeout)
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

    return Handler


@contextlib.contextmanager
def fake_llm() -> Iterator[FakeLLM]:
    """A fake LLM server on a free loopback port, in a thread, for the block."""
    fake = FakeLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    server.block_on_close = False
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextlib.contextmanager
def engines(
    settings: Settings,
    server: FakeLLM,
    embedder: Embeddings,
    clock: Callable[[], datetime],
    **defaults: Any,
) -> Iterator[Callable[..., Hindsight]]:
    """A maker of engines with ``server`` as their model (``configured``, ``defaults``
    under what each call gives), all closed on exit."""
    from hindsight import Hindsight

    made: list[Hindsight] = []

    def make(**more: Any) -> Hindsight:
        engine = Hindsight(
            configured(settings, server, **{**defaults, **more}), embedder=embedder, clock=clock
        )
        made.append(engine)
        return engine

    try:
        yield make
    finally:
        for engine in made:
            engine.close()
