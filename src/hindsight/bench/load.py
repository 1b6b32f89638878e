"""``hindsight bench load``: requests/s and latency of running servers under N clients.

Each client sends one request at a time, as fast as answers come, for a fixed time:
mostly recalls, a share of retains (one message each, as a chat turn), over several
owners, to the given servers in turn (client ``i`` to server ``i mod len(urls)``). The
owners are seeded with a few notes each before timing starts, so recalls search
something. Latency is from sending a request to reading its whole answer; a request
that fails (a non-2xx answer, or no answer) counts as an error, by status.

The load runs in this process (asyncio, one connection per client): on a small machine
it takes CPU from the servers, which a report should say.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hindsight.bench.scale import QUERIES, sentences
from hindsight.errors import MissingExtraError, StoreError, ValidationError

if TYPE_CHECKING:
    import httpx

OWNER = "bench:load"
_SEED_NOTES = 20  # per owner, before timing
_SESSION_TURNS = 25


@dataclass(slots=True)
class _Tally:
    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)

    def summary(self, seconds: float) -> dict[str, Any]:
        done = len(self.latencies_ms)
        return {
            "requests": done,
            "requests_per_s": round(done / seconds, 1),
            "p50_ms": _p(self.latencies_ms, 0.50),
            "p95_ms": _p(self.latencies_ms, 0.95),
            "p99_ms": _p(self.latencies_ms, 0.99),
            "errors": sum(self.errors.values()),
        }


@dataclass(slots=True)
class LoadResult:
    urls: list[str]
    clients: int
    owners: int
    retain_share: float
    seconds: float
    total: _Tally = field(default_factory=_Tally)
    by_op: dict[str, _Tally] = field(default_factory=dict)
    per_second: list[int] = field(default_factory=list)  # answers in each second: stalls show

    def as_dict(self) -> dict[str, Any]:
        return {
            "urls": self.urls,
            "clients": self.clients,
            "owners": self.owners,
            "retain_share": self.retain_share,
            "seconds": round(self.seconds, 2),
            **self.total.summary(self.seconds),
            "errors_by_status": dict(sorted(self.total.errors.items())),
            "by_op": {op: t.summary(self.seconds) for op, t in sorted(self.by_op.items())},
            "per_second": self.per_second,
        }


def _p(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def owner_of(i: int) -> str:
    return f"{OWNER}-{i}"


def _retain_body(rng: random.Random, owners: int, client: int, n: int) -> dict[str, Any]:
    """One chat turn; a client's turns make conversations of up to ``_SESSION_TURNS``."""
    text = next(sentences(1, seed=rng.randrange(2**31)))
    session = f"load-{client}-{n // _SESSION_TURNS}"
    return {"owner": owner_of(rng.randrange(owners)), "content": text, "session_id": session}


def _recall_body(rng: random.Random, owners: int) -> dict[str, Any]:
    return {"owners": owner_of(rng.randrange(owners)), "query": rng.choice(QUERIES), "k": 10}


async def _seed(client: httpx.AsyncClient, url: str, owners: int) -> None:
    """A few notes per owner, so the timed recalls search something."""
    import httpx

    texts = list(sentences(owners * _SEED_NOTES, seed=3))
    for i in range(owners):
        mine = texts[i * _SEED_NOTES : (i + 1) * _SEED_NOTES]
        messages = [{"role": "user", "content": text} for text in mine]
        body = {"owner": owner_of(i), "messages": messages, "session_id": f"seed-{i}"}
        try:
            answer = await client.post(f"{url}/v1/memories", json=body)
        except httpx.HTTPError as exc:
            raise StoreError(f"cannot reach the hindsight server at {url}: {exc}") from None
        if answer.status_code >= 300:
            raise StoreError(f"seeding {url} failed: {answer.status_code} {answer.text[:200]}")


async def _client(
    http: httpx.AsyncClient,
    url: str,
    result: LoadResult,
    *,
    client: int,
    rng: random.Random,
    warm_until: float,
    end: float,
) -> None:
    import httpx

    n = 0
    while (now := time.perf_counter()) < end:
        n += 1
        if rng.random() < result.retain_share:
            op, path, body = "retain", "/v1/memories", _retain_body(rng, result.owners, client, n)
        else:
            op, path, body = "recall", "/v1/recall", _recall_body(rng, result.owners)
        start = now
        try:
            answer = await http.post(f"{url}{path}", json=body)
            await answer.aread()
            error = None if answer.status_code < 300 else str(answer.status_code)
        except httpx.HTTPError as exc:
            error = type(exc).__name__
        stop = time.perf_counter()
        if start < warm_until or stop > end:
            continue  # only requests wholly inside the timed window count
        tally = result.by_op.setdefault(op, _Tally())
        for t in (tally, result.total):
            if error is None:
                t.latencies_ms.append((stop - start) * 1000)
            else:
                t.errors[error] += 1
        if error is None:
            result.per_second[min(len(result.per_second) - 1, int(stop - warm_until))] += 1


async def _run(
    result: LoadResult, *, api_key: str | None, warmup: float, seed: int, timeout: float
) -> None:
    import httpx

    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    limits = httpx.Limits(max_connections=result.clients, max_keepalive_connections=result.clients)
    async with httpx.AsyncClient(headers=headers, timeout=timeout, limits=limits) as http:
        await _seed(http, result.urls[0], result.owners)
        start = time.perf_counter()
        warm_until = start + warmup
        end = warm_until + result.seconds
        result.per_second = [0] * max(1, math.ceil(result.seconds))
        await asyncio.gather(
            *(
                _client(
                    http,
                    result.urls[i % len(result.urls)],
                    result,
                    client=i,
                    rng=random.Random(seed + i),
                    warm_until=warm_until,
                    end=end,
                )
                for i in range(result.clients)
            )
        )


def run(
    urls: list[str],
    *,
    clients: int = 8,
    seconds: float = 30.0,
    warmup: float = 5.0,
    owners: int = 20,
    retain_share: float = 0.2,
    api_key: str | None = None,
    seed: int = 1,
    timeout: float = 60.0,
) -> LoadResult:
    """Drive ``clients`` concurrent clients at ``urls`` for ``warmup`` + ``seconds``; the
    figures are of the requests sent and answered within the last ``seconds``."""
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise MissingExtraError("client", "httpx") from None
    if not urls:
        raise ValidationError("give at least one server URL")
    if not 0.0 <= retain_share <= 1.0:
        raise ValidationError(f"retain_share must be between 0 and 1, not {retain_share}")
    result = LoadResult(
        urls=[u.rstrip("/") for u in urls],
        clients=clients,
        owners=owners,
        retain_share=retain_share,
        seconds=seconds,
    )
    asyncio.run(_run(result, api_key=api_key, warmup=warmup, seed=seed, timeout=timeout))
    return result
