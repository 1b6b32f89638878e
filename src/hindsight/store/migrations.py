"""Numbered, append-only schema migrations for the SQLite store.

Never edit a released migration: add the next number. Applied versions are
recorded in ``schema_migrations``.

On-disk formats:
- times are REAL seconds since the Unix epoch, UTC;
- ``vectors.vec`` is the vector as little-endian float32 bytes (``dim * 4``),
  unit length, made by ``vectors.model``;
- ``vector_log`` orders every vector change (op 1 = put, 0 = remove) so that an
  ANN index file can tell how far behind the rows it is;
- ``keyword_docs.key`` and ``vectors.key`` equal ``memories.rowid``;
  ``keyword_docs.text`` holds the memory's own words (content, hints, speaker,
  date), ``context`` the words of neighbouring turns, weighed less by BM25;
- ``keyword_log`` lists every key whose ``keyword_docs`` row changed, in order, so
  the in-memory keyword index (``keyword.py``) can catch up (migration 2; before
  it, FTS5's ``memories_fts`` held the same columns);
- both logs keep their last ``log_keep`` entries; ``meta`` keys ``vector_log_pruned``
  and ``keyword_log_pruned`` hold the newest seq dropped from each, so an index behind
  it knows to rebuild.
"""

from __future__ import annotations

import sqlite3
import time

MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE memories (
            rowid INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: it keys vectors
            id TEXT NOT NULL UNIQUE,
            owner TEXT NOT NULL,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            query_hints TEXT NOT NULL DEFAULT '[]',
            confidence REAL NOT NULL,
            source TEXT NOT NULL,
            session_id TEXT,
            speaker TEXT,
            observed_at REAL NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            valid_from REAL,
            valid_to REAL,
            superseded_by TEXT,
            last_accessed_at REAL,
            access_count INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL,
            embedding_model TEXT,
            attribute TEXT,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX memories_owner_time ON memories (owner, status, observed_at);
        CREATE INDEX memories_owner_session ON memories (owner, session_id);
        CREATE INDEX memories_attribute ON memories (owner, kind, attribute)
            WHERE attribute IS NOT NULL;
        CREATE INDEX memories_content ON memories (owner, kind, content);

        CREATE TABLE derivations (
            child TEXT NOT NULL,
            parent TEXT NOT NULL,
            PRIMARY KEY (child, parent)
        ) WITHOUT ROWID;
        CREATE INDEX derivations_parent ON derivations (parent);

        CREATE TABLE vectors (
            key INTEGER PRIMARY KEY,
            owner TEXT NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vec BLOB NOT NULL
        );
        CREATE INDEX vectors_owner ON vectors (owner);

        CREATE TABLE vector_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            owner TEXT NOT NULL,
            key INTEGER NOT NULL,
            op INTEGER NOT NULL
        );
        CREATE INDEX vector_log_owner ON vector_log (owner, seq);

        CREATE VIRTUAL TABLE memories_fts USING fts5 (
            text, context, tokenize = 'porter unicode61 remove_diacritics 2'
        );

        CREATE TABLE receipts (
            id TEXT PRIMARY KEY,
            at REAL NOT NULL,
            owner TEXT,
            criteria TEXT NOT NULL,
            deleted_ids TEXT NOT NULL,
            derived_ids TEXT NOT NULL
        );

        CREATE TABLE working_memory (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            owner TEXT NOT NULL,
            session_id TEXT NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            speaker TEXT,
            tool_name TEXT,
            tokens INTEGER NOT NULL,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX working_memory_session ON working_memory (owner, session_id, seq);
        CREATE INDEX working_memory_expiry ON working_memory (expires_at);
        """,
    ),
    (
        2,
        """
        CREATE TABLE keyword_docs (
            key INTEGER PRIMARY KEY,
            owner TEXT NOT NULL,
            text TEXT NOT NULL,
            context TEXT NOT NULL
        );
        CREATE INDEX keyword_docs_owner ON keyword_docs (owner);
        CREATE TABLE keyword_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            owner TEXT NOT NULL,
            key INTEGER NOT NULL
        );
        CREATE INDEX keyword_log_owner ON keyword_log (owner, seq);
        INSERT INTO keyword_docs (key, owner, text, context)
            SELECT f.rowid, m.owner, f.text, f.context
            FROM memories_fts f JOIN memories m ON m.rowid = f.rowid;
        DROP TABLE memories_fts
        """,
    ),
    (
        3,
        # forgetting a memory clears superseded_by where it names it: without an index,
        # a scan of every memory (5 ms at 50,000 memories, each forget)
        """
        CREATE INDEX memories_superseded ON memories (superseded_by)
            WHERE superseded_by IS NOT NULL
        """,
    ),
]


def migrate(conn: sqlite3.Connection) -> list[int]:
    """Apply every migration not yet applied, each in its own transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    applied = []
    for version, sql in MIGRATIONS:
        conn.execute("BEGIN IMMEDIATE")  # another process may be migrating too
        try:
            done = conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = ?", (version,)
            ).fetchone()
            if done:
                conn.execute("COMMIT")
                continue
            # executescript would commit implicitly; run statement by statement.
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                (version, time.time()),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(version)
    return applied


def _statements(sql: str) -> list[str]:
    return [part.strip() for part in sql.split(";") if part.strip()]
