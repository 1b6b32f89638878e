"""Query understanding: an LLM splits a hard question into the searches that answer it.

With ``recall(..., expand=True)`` (or ``llm_expand``) and an LLM configured, the model
is asked for up to :data:`MAX_QUERIES` short search queries, one per thing the answer
needs (a multi-hop question's hops), and the names of the people, places and things
to look for. Each is searched beside the question itself and fused with it
(:meth:`hindsight.recall.search.Search.recall`). A recall never waits on the model for more
than ``llm_expand_timeout_seconds``, and never fails because of it: on a timeout, an
error or an invalid answer it searches the question alone. Answers are kept per
question in the process (:data:`CACHE_SIZE`), so asking again costs no call.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, Final

from hindsight.errors import LLMError
from hindsight.llm import Leniency, Message

if TYPE_CHECKING:
    from hindsight.config import Settings
    from hindsight.llm.meter import Meter

_log = logging.getLogger("hindsight.recall.expand")
MAX_QUERIES: Final = 4
CACHE_SIZE: Final = 1_024
SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "queries": {
            "type": "array",
            "maxItems": MAX_QUERIES,
            "items": {"type": "string", "minLength": 2, "maxLength": 200},
        },
        "entities": {
            "type": "array",
            "maxItems": 8,
            "items": {"type": "string", "minLength": 1, "maxLength": 80},
        },
    },
    "required": ["queries", "entities"],
    "additionalProperties": False,
}
#: Other names models give the fields; a bare list is a list of queries.
LENIENCY: Final = Leniency(
    aliases={"searches": "queries", "sub_queries": "queries", "names": "entities"},
    list_key="queries",
)
SYSTEM: Final = (
    "You help search a person's long-term memory (their past conversations) for what "
    f"answers a question. Give up to {MAX_QUERIES} short search queries, each about one "
    "thing the answer needs: for a question that needs several facts (who, then what "
    "they did, then when), one query per fact; for a simple question, one query or none. "
    "Also name the people, places, organisations and things to look for. Do not answer "
    "the question."
)


class Expander:
    """Asks the LLM for a question's sub-queries, within a deadline, once per question."""

    def __init__(self, settings: Settings, meter: Meter) -> None:
        self.settings = settings
        self.meter = meter
        self._cache: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def expand(self, owner: str, query: str) -> tuple[str, ...]:
        """The searches to add to ``query``'s (none when the model cannot say in time)."""
        with self._lock:
            if query in self._cache:
                self._cache.move_to_end(query)
                return self._cache[query]
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=2, thread_name_prefix="hindsight-expand"
                )
            pool = self._pool
        messages = (Message("system", SYSTEM), Message("user", f"Question: {query}"))
        future = pool.submit(
            self.meter.structured,
            owner,
            "query",
            messages,
            SCHEMA,
            name="search",
            max_tokens=300,
            leniency=LENIENCY,
        )
        try:
            answer = future.result(timeout=self.settings.llm_expand_timeout_seconds)
        except FutureTimeout:
            _log.warning(
                "query expansion took over %gs: searching the question alone",
                self.settings.llm_expand_timeout_seconds,
            )
            return ()
        except LLMError as exc:  # accounted by the meter; the recall goes on without it
            _log.warning("query expansion failed: %s", exc)
            return ()
        extra = _searches(query, answer.value)
        with self._lock:
            self._cache[query] = extra
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return extra

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _searches(query: str, value: dict[str, Any]) -> tuple[str, ...]:
    """The sub-queries, then the entities as one search; the question itself, repeats
    and blanks left out."""
    seen = {" ".join(query.lower().split())}
    out: list[str] = []
    entities = " ".join(" ".join(e.split()) for e in value["entities"] if e.strip())
    for text in [*value["queries"][:MAX_QUERIES], entities]:
        text = " ".join(text.split())
        if text and text.lower() not in seen:
            seen.add(text.lower())
            out.append(text)
    return tuple(out)
