"""Working memory in the store's own database (when no Redis is configured).

Turns are rows of ``working_memory``. It shares the store's :class:`Database`
(connection and lock); the store owns that and closes it, so closing this is a no-op
and safe before or after the store's close.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from hindsight.store.base import WorkingMemory
from hindsight.store.db import Database
from hindsight.store.records import WorkingTurn


def _dt(value: float) -> datetime:
    return datetime.fromtimestamp(value, tz=UTC)


class SQLWorkingMemory(WorkingMemory):
    """Sessions' recent turns in the SQL database the store uses."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def close(self) -> None:
        pass  # the connection is the store's

    def wm_append(self, turn: WorkingTurn) -> WorkingTurn:
        with self._db.tx() as conn:
            turn.seq = conn.execute(
                "INSERT INTO working_memory (owner, session_id, role, content, speaker, "
                "tool_name, tokens, created_at, expires_at, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
                (
                    turn.owner,
                    turn.session_id,
                    turn.role,
                    turn.content,
                    turn.speaker,
                    turn.tool_name,
                    turn.tokens,
                    turn.created_at.timestamp(),
                    turn.expires_at.timestamp(),
                    json.dumps(turn.metadata, ensure_ascii=False),
                ),
            ).fetchone()[0]
        return turn

    def wm_window(self, owner: str, session_id: str, now: datetime) -> list[WorkingTurn]:
        rows = self._db.read(
            "SELECT seq, owner, session_id, role, content, tokens, created_at, expires_at, "
            "speaker, tool_name, metadata FROM working_memory "
            "WHERE owner = ? AND session_id = ? AND expires_at > ? ORDER BY seq",
            (owner, session_id, now.timestamp()),
        )
        return [
            WorkingTurn(
                seq=r[0],
                owner=r[1],
                session_id=r[2],
                role=r[3],
                content=r[4],
                tokens=r[5],
                created_at=_dt(r[6]),
                expires_at=_dt(r[7]),
                speaker=r[8],
                tool_name=r[9],
                metadata=json.loads(r[10]),
            )
            for r in rows
        ]

    def wm_clear(self, owner: str, session_id: str, *, up_to_seq: int | None = None) -> int:
        with self._db.tx() as conn:
            sql = "DELETE FROM working_memory WHERE owner = ? AND session_id = ?"
            params: tuple[Any, ...] = (owner, session_id)
            if up_to_seq is not None:
                sql += " AND seq <= ?"
                params += (up_to_seq,)
            return conn.execute(sql, params).rowcount

    def wm_sessions(self, owner: str, now: datetime) -> list[tuple[str, int, int]]:
        rows = self._db.read(
            "SELECT session_id, count(*), sum(tokens) FROM working_memory "
            "WHERE owner = ? AND expires_at > ? GROUP BY session_id ORDER BY max(seq) DESC",
            (owner, now.timestamp()),
        )
        return [(r[0], int(r[1]), int(r[2])) for r in rows]

    def wm_count(self, owner: str | None = None) -> int:
        cond, params = ("WHERE owner = ?", (owner,)) if owner else ("", ())
        return int(self._db.read(f"SELECT count(*) FROM working_memory {cond}", params)[0][0])

    def wm_purge_expired(self, now: datetime) -> int:
        with self._db.tx() as conn:
            return conn.execute(
                "DELETE FROM working_memory WHERE expires_at <= ?", (now.timestamp(),)
            ).rowcount
