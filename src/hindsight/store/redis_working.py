"""Working memory in Redis, for servers that share it (``HINDSIGHT_REDIS_URL``).

Keys, under ``prefix`` (``hindsight:wm:`` by default):
- ``seq``: the counter that numbers turns (one order across every server);
- ``s:{owner}/{session}``: a session's turns, a sorted set scored by seq whose members
  are the turns as JSON; it expires with its last turn, so Redis drops a session
  nobody touched without a purge;
- ``o:{owner}``: the owner's sessions, scored by their latest seq (newest first);
- ``owners``: every owner with working memory, for the purge and the count;
- ``epoch``: a token set once, with no expiry: a Redis that restarted without its data
  (or was flushed) no longer holds the token a process saw, and the process says so
  (a :class:`StoreError`, once) instead of answering empty windows as if none had
  been. Run Redis with persistence (``appendonly yes``, as ``compose.yaml`` does) for
  working memory to survive a restart.
Owners and session ids cannot hold ``/`` (see ``hindsight.validate``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from hindsight.errors import StoreError
from hindsight.store.base import WorkingMemory
from hindsight.store.records import WorkingTurn

try:
    import redis
except ImportError as exc:  # pragma: no cover - depends on the install
    raise StoreError(
        "working memory in Redis needs redis: install hindsight's 'redis' extra "
        "(from its checkout: pip install '.[redis]')"
    ) from exc


class RedisWorkingMemory(WorkingMemory):
    """Sessions' recent turns in Redis; bounded by the engine, expired by Redis."""

    def __init__(self, url: str, *, prefix: str = "hindsight:wm:") -> None:
        self._redis = redis.Redis.from_url(
            url, socket_timeout=5, socket_connect_timeout=5, decode_responses=True
        )
        self._prefix = prefix
        self._epoch = self._call(self._claim_epoch)

    def _claim_epoch(self) -> str:
        key = f"{self._prefix}epoch"
        self._redis.set(key, uuid.uuid4().hex, nx=True)
        return str(self._redis.get(key))

    def _intact(self, epoch: str | None = None) -> None:
        """Raise once if Redis lost what this process saw it hold (``epoch``: the token
        as just read along with other work, else read now)."""
        if epoch is None:
            epoch = self._call(self._redis.get, f"{self._prefix}epoch")
        if epoch == self._epoch:
            return
        self._epoch = self._call(self._claim_epoch)
        raise StoreError(
            "working memory in Redis was lost (Redis restarted without persistence, or "
            "was flushed): turns not yet consolidated are gone; new turns are kept again"
        )

    def close(self) -> None:
        self._redis.close()

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except redis.RedisError as exc:
            raise StoreError(f"working memory (Redis) failed: {exc}") from exc

    def _session(self, owner: str, session_id: str) -> str:
        return f"{self._prefix}s:{owner}/{session_id}"

    def _owner(self, owner: str) -> str:
        return f"{self._prefix}o:{owner}"

    def wm_append(self, turn: WorkingTurn) -> WorkingTurn:
        self._intact()
        turn.seq = int(self._call(self._redis.incr, f"{self._prefix}seq"))
        key, index = self._session(turn.owner, turn.session_id), self._owner(turn.owner)
        expires = int(turn.expires_at.timestamp()) + 1
        pipe = self._redis.pipeline(transaction=True)
        pipe.zadd(key, {_dump(turn): turn.seq})
        pipe.expireat(key, expires, nx=True)  # a new key: its first expiry
        pipe.expireat(key, expires, gt=True)  # else only ever later
        pipe.zadd(index, {turn.session_id: turn.seq})
        pipe.expireat(index, expires, nx=True)
        pipe.expireat(index, expires, gt=True)
        pipe.sadd(f"{self._prefix}owners", turn.owner)
        self._call(pipe.execute)
        return turn

    def wm_window(self, owner: str, session_id: str, now: datetime) -> list[WorkingTurn]:
        pipe = self._redis.pipeline(transaction=False)  # one round trip: the token too
        pipe.get(f"{self._prefix}epoch")
        pipe.zrange(self._session(owner, session_id), 0, -1)
        epoch, members = self._call(pipe.execute)
        self._intact(epoch)
        return _alive(members, now)

    def _window(self, owner: str, session_id: str, now: datetime) -> list[WorkingTurn]:
        members = self._call(self._redis.zrange, self._session(owner, session_id), 0, -1)
        return _alive(members, now)

    def wm_clear(self, owner: str, session_id: str, *, up_to_seq: int | None = None) -> int:
        key = self._session(owner, session_id)
        pipe = self._redis.pipeline(transaction=True)
        if up_to_seq is None:
            pipe.zcard(key)
            pipe.delete(key)
        else:
            pipe.zremrangebyscore(key, "-inf", up_to_seq)
        pipe.zcard(key)
        result = self._call(pipe.execute)
        if result[-1] == 0:
            self._call(self._redis.zrem, self._owner(owner), session_id)
        return int(result[0])

    def wm_sessions(self, owner: str, now: datetime) -> list[tuple[str, int, int]]:
        self._intact()
        found = []
        for session_id in self._call(self._redis.zrevrange, self._owner(owner), 0, -1):
            window = self._window(owner, session_id, now)
            if window:
                found.append((session_id, len(window), sum(t.tokens for t in window)))
            elif not self._call(self._redis.exists, self._session(owner, session_id)):
                self._call(self._redis.zrem, self._owner(owner), session_id)  # expired whole
        return found

    def wm_purge_expired(self, now: datetime) -> int:
        owners = f"{self._prefix}owners"
        for owner in self._call(self._redis.smembers, owners):
            if not self._call(self._redis.exists, self._owner(owner)):  # all expired
                self._call(self._redis.srem, owners, owner)
        removed = 0
        for owner, session_id in self._all_sessions():
            key = self._session(owner, session_id)
            members = self._call(self._redis.zrange, key, 0, -1)
            gone = [m for m in members if _load(m).expires_at <= now]
            if gone:
                removed += int(self._call(self._redis.zrem, key, *gone))
        return removed

    def wm_count(self, owner: str | None = None) -> int:
        return sum(
            int(self._call(self._redis.zcard, self._session(who, session_id)))
            for who, session_id in self._all_sessions(owner)
        )

    def _all_sessions(self, owner: str | None = None) -> Iterator[tuple[str, str]]:
        """(owner, session id) of every session held, of one owner or of all."""
        owners = [owner] if owner else self._call(self._redis.smembers, f"{self._prefix}owners")
        for who in sorted(owners):
            for session_id in self._call(self._redis.zrange, self._owner(who), 0, -1):
                yield who, session_id


def _dump(turn: WorkingTurn) -> str:
    return json.dumps(
        {
            "seq": turn.seq,
            "owner": turn.owner,
            "session_id": turn.session_id,
            "role": turn.role,
            "content": turn.content,
            "tokens": turn.tokens,
            "created_at": turn.created_at.timestamp(),
            "expires_at": turn.expires_at.timestamp(),
            "speaker": turn.speaker,
            "tool_name": turn.tool_name,
            "metadata": turn.metadata,
        },
        ensure_ascii=False,
    )


def _alive(members: list[str], now: datetime) -> list[WorkingTurn]:
    turns = (_load(m) for m in members)
    return [t for t in turns if t.expires_at > now]


def _load(member: str) -> WorkingTurn:
    raw = json.loads(member)
    raw["created_at"] = datetime.fromtimestamp(raw["created_at"], tz=UTC)
    raw["expires_at"] = datetime.fromtimestamp(raw["expires_at"], tz=UTC)
    return WorkingTurn(**raw)
