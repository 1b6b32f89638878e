"""The text keyword search sees of each memory, kept in ``keyword_docs`` and logged in
``keyword_log`` in the transaction that changes the memory.

What a memory is found by (:func:`hindsight.text.terms.searchable_text`), and for a turn
of a session the turns around it (:mod:`hindsight.store.sql.turns`) as its context. The
keyword index in each process (:mod:`hindsight.store.keyword`) catches up from the log.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from hindsight.models import Kind
from hindsight.store.db import Connection, Database
from hindsight.store.records import TextIndexing
from hindsight.store.rows import chunks
from hindsight.store.sql.turns import Turns
from hindsight.text.terms import searchable_text


class KeywordTexts:
    """The keyword-index rows of a store's memories, rebuilt as the memories change."""

    def __init__(self, db: Database, text: TextIndexing) -> None:
        self.db = db
        self.text = text

    def sessions(self, conn: Connection, keys: set[int]) -> dict[tuple[str, str], Turns]:
        """The sessions that these rows are turns of: each one's turns, in order."""
        found: dict[tuple[str, str], Turns] = {}
        if not self.text.context_turns:
            return found
        for chunk in chunks(sorted(keys)):
            among, values = self.db.among(chunk)
            for owner, session in conn.execute(
                "SELECT DISTINCT owner, session_id FROM memories WHERE kind = 'episode' "
                f"AND session_id IS NOT NULL AND rowid {among}",
                values,
            ).fetchall():
                if (owner, session) not in found:
                    rows = conn.execute(
                        "SELECT rowid, substr(content, 1, ?), speaker, source, observed_at "
                        "FROM memories WHERE owner = ? AND session_id = ? AND kind = 'episode' "
                        "ORDER BY rowid",
                        (self.text.context_chars, owner, session),
                    ).fetchall()
                    found[owner, session] = Turns(rows)
        return found

    def neighbours(self, sessions: dict[tuple[str, str], Turns], keys: set[int]) -> set[int]:
        """Episodes within ``context_turns`` of these rows in their sessions."""
        found: set[int] = set()
        for turns in sessions.values():
            for key in keys:
                found.update(k for k, _ in turns.around(key, self.text.context_turns))
        return found

    def reindex(
        self,
        conn: Connection,
        keys: set[int],
        sessions: dict[tuple[str, str], Turns] | None = None,
    ) -> None:
        """Rebuild the keyword-index rows of these memories from what the store now holds.

        What keyword search sees: the content, query hints, speaker and date, and for
        a turn of a session its neighbouring turns (the turn alone is often too short
        to share words with a question about it; the turn itself is still what is
        returned). A deleted row just leaves the index. ``sessions``: the turns of the
        sessions these rows are in, when the caller has just read them.
        """
        rows: dict[int, tuple[Any, ...]] = {}
        for chunk in chunks(sorted(keys)):
            among, values = self.db.among(chunk)
            for row in conn.execute(
                "SELECT rowid, owner, kind, content, query_hints, speaker, observed_at, "
                f"session_id FROM memories WHERE rowid {among}",
                values,
            ).fetchall():
                rows[row[0]] = row[1:]
        if sessions is None:
            sessions = self.sessions(conn, set(rows))
        docs, log = [], []
        for key in sorted(keys):
            if key not in rows:
                gone = conn.execute(
                    "DELETE FROM keyword_docs WHERE key = ? RETURNING owner", (key,)
                ).fetchone()
                if gone is not None:
                    log.append((gone[0], key))
                continue
            owner, kind, content, hints, speaker, observed, session = rows[key]
            when = datetime.fromtimestamp(observed, tz=self.text.zone)  # the users' days
            own = searchable_text(content, json.loads(hints), speaker, when)
            turns = sessions.get((owner, session)) if kind == Kind.EPISODE.value else None
            context = [] if turns is None else turns.around(key, self.text.context_turns)
            docs.append((key, owner, own, "\n".join(text for _, text in context)))
            log.append((owner, key))
        if docs:
            conn.executemany(
                "INSERT INTO keyword_docs (key, owner, text, context) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, "
                "text = excluded.text, context = excluded.context",
                docs,
            )
        if log:
            self.db.log_order(conn)
            conn.executemany("INSERT INTO keyword_log (owner, key) VALUES (?, ?)", log)
