"""Numbered, append-only schema migrations, and the one runner both databases use.

Never edit a released migration: add the next number. Applied versions are
recorded in ``schema_migrations`` (version, applied_at); :data:`SQLITE` and
:data:`POSTGRES` are each database's list, numbered on their own (SQLite's 1-3 came
one at a time; PostgreSQL's 1 holds the schema SQLite had reached by then).

On-disk formats:
- times are seconds since the Unix epoch, UTC (SQLite REAL, PostgreSQL double
  precision), so both stores share their SQL;
- ``vectors.vec`` is the vector, unit length, made by ``vectors.model``: on SQLite
  little-endian float32 bytes (``dim * 4``), on PostgreSQL a pgvector ``vector`` of
  ``dim`` values;
- ``vector_log`` orders every vector change (op 1 = put, 0 = remove) so that the
  in-process vector index (``vectors/index.py``) can tell how far behind the rows it
  is, and is the outbox the Qdrant backends apply (``vectors/qdrant.py``; ``meta`` key
  ``qdrant_applied:<collection>`` is the seq applied). PostgreSQL has it from its
  migration 12, written only with a Qdrant backend (pgvector searches in the database);
- ``keyword_docs.key`` and ``vectors.key`` equal ``memories.rowid``;
  ``keyword_docs.text`` holds the memory's own words (content, hints, speaker,
  date), ``context`` the words of neighbouring turns, weighed less by BM25;
- ``keyword_log`` lists every key whose ``keyword_docs`` row changed, in order, so
  the in-memory keyword index (``keyword.py``) can catch up (SQLite migration 2;
  before it, FTS5's ``memories_fts`` held the same columns);
- the logs keep their last ``log_keep`` entries; ``meta`` keys ``vector_log_pruned``
  and ``keyword_log_pruned`` hold the newest seq dropped from each, so an index behind
  it knows to rebuild.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hindsight.store.db import Connection

Migration = tuple[int, str]
"""A version number and its SQL: statements separated by semicolons."""

# Writes made under an idempotency key (SQLite 4, PostgreSQL 2): ``result`` is JSON.
REQUESTS = """
    CREATE TABLE requests (
        owners TEXT NOT NULL,
        principal TEXT NOT NULL,
        request_id TEXT NOT NULL,
        digest TEXT NOT NULL,
        result TEXT NOT NULL,
        at {real} NOT NULL,
        PRIMARY KEY (owners, principal, request_id)
    );
    CREATE INDEX requests_at ON requests (at)
"""

# The guard (SQLite 5, PostgreSQL 3): each memory's principal, input hash, trust (rows
# written before it get their source's default trust of the time), the scan's flags (a
# JSON list), review (JSON, or NULL) and whether the guard read it as it was written
# (1, or 0: recall screens it); and the audit log, each entry chained to the one
# before it by ``hash`` = sha256 of ``prev`` and the entry (see hindsight.guard.audit).
GUARD = """
    ALTER TABLE memories ADD COLUMN principal TEXT;
    ALTER TABLE memories ADD COLUMN input_hash TEXT;
    ALTER TABLE memories ADD COLUMN trust {real} NOT NULL DEFAULT 1.0;
    ALTER TABLE memories ADD COLUMN flags TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE memories ADD COLUMN review TEXT;
    ALTER TABLE memories ADD COLUMN screened INTEGER NOT NULL DEFAULT 0;
    UPDATE memories SET trust = CASE source
        WHEN 'agent' THEN 0.7 WHEN 'tool' THEN 0.5 WHEN 'external' THEN 0.3
        WHEN 'import' THEN 0.5 ELSE 1.0 END;
    UPDATE memories SET confidence = trust WHERE confidence > trust;
    CREATE INDEX memories_owner_principal ON memories (owner, principal);
    CREATE TABLE audit (
        seq {serial},
        at {real} NOT NULL,
        principal TEXT NOT NULL,
        owner TEXT,
        action TEXT NOT NULL,
        memory_ids TEXT NOT NULL,
        request_id TEXT,
        detail TEXT NOT NULL,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL
    );
    CREATE INDEX audit_owner ON audit (owner, seq);
    CREATE INDEX audit_principal ON audit (principal, seq);
    CREATE INDEX audit_at ON audit (at)
"""

# A receipt names the older values a forget made current again (SQLite 6, PostgreSQL 4).
RESTORED = "ALTER TABLE receipts ADD COLUMN restored_ids TEXT NOT NULL DEFAULT '[]'"

# The lifecycle (SQLite 7, PostgreSQL 5): whether a memory is pinned (1: it neither
# decays nor archives), when it was last restated or marked useful, and when it expires.
LIFECYCLE = """
    ALTER TABLE memories ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE memories ADD COLUMN used_at {real};
    ALTER TABLE memories ADD COLUMN expires_at {real};
    CREATE INDEX memories_expires ON memories (expires_at) WHERE expires_at IS NOT NULL
"""

# LLM usage (SQLite 8, PostgreSQL 6): one row per call to an LLM provider, by owner
# and operation (extract, summarize, reflect, query): tokens as the provider reported
# them, whether it failed (failures 1), how many transport retries it took, whether its
# answer was dropped as invalid, and its cost in USD when the model has a price (else
# NULL). A call made for no owner has owner ''.
LLM_USAGE = """
    CREATE TABLE llm_usage (
        at {real} NOT NULL,
        owner TEXT NOT NULL,
        operation TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        failures INTEGER NOT NULL,
        retries INTEGER NOT NULL,
        dropped INTEGER NOT NULL,
        cost {real}
    );
    CREATE INDEX llm_usage_owner ON llm_usage (owner, at);
    CREATE INDEX llm_usage_at ON llm_usage (at)
"""

# Which audit entries name which memory (SQLite 9, PostgreSQL 7): a memory's history
# reads its entries by id instead of scanning its owner's log. Recalls are not indexed
# (history leaves them out, and they are most of a busy log); a forget's restored
# values are (``detail["restored"]``).
AUDIT_REFS = """
    CREATE TABLE audit_refs (
        memory_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        PRIMARY KEY (memory_id, seq)
    );
    CREATE INDEX audit_refs_seq ON audit_refs (seq);
    {backfill}
"""
_SQLITE_BACKFILL = """
    INSERT OR IGNORE INTO audit_refs (memory_id, seq)
        SELECT j.value, a.seq FROM audit a, json_each(a.memory_ids) j
        WHERE a.action <> 'recall';
    INSERT OR IGNORE INTO audit_refs (memory_id, seq)
        SELECT j.value, a.seq FROM audit a, json_each(a.detail, '$.restored') j
        WHERE a.action = 'forget' AND json_type(a.detail, '$.restored') = 'array'
"""
_POSTGRES_BACKFILL = """
    INSERT INTO audit_refs (memory_id, seq)
        SELECT j, a.seq FROM audit a, jsonb_array_elements_text(a.memory_ids::jsonb) j
        WHERE a.action <> 'recall' ON CONFLICT DO NOTHING;
    INSERT INTO audit_refs (memory_id, seq)
        SELECT j, a.seq FROM audit a,
            jsonb_array_elements_text(a.detail::jsonb -> 'restored') j
        WHERE a.action = 'forget' AND jsonb_typeof(a.detail::jsonb -> 'restored') = 'array'
        ON CONFLICT DO NOTHING
"""

# The names people in an owner's memories go by (SQLite 10, PostgreSQL 8): read one
# seek per name (see SqlStore.speakers), so recall can match a query's spelling of one.
SPEAKERS = """
    CREATE INDEX memories_owner_speaker ON memories (owner, speaker) WHERE speaker IS NOT NULL
"""

# The job queue (SQLite 11, PostgreSQL 9): background work kept in the database
# (hindsight.jobs). ``id`` is derived from the work (operation, owner, inputs, prompt
# version), so queueing it again adds nothing; ``payload`` and ``result`` are JSON;
# ``state`` is pending, deferred, running, done or failed; a running job is leased to
# ``holder`` until ``lease_until``, after which another worker may take it.
JOB_QUEUE = """
    CREATE TABLE job_queue (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        operation TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        not_before {real} NOT NULL,
        created_at {real} NOT NULL,
        updated_at {real} NOT NULL,
        holder TEXT,
        lease_until {real},
        error TEXT,
        result TEXT
    );
    CREATE INDEX job_queue_due ON job_queue (state, not_before);
    CREATE INDEX job_queue_owner ON job_queue (owner, state, created_at)
"""

# The trusted memories of an owner (SQLite 12, PostgreSQL 10): the guard compares each
# untrusted write with the nearest of those alone, which may be few among many.
TRUSTED = """
    CREATE INDEX memories_owner_trust ON memories (owner, trust)
"""

# Items dropped from LLM answers (SQLite 13, PostgreSQL 11): an answer is read item by
# item, and a bad item is left out and counted here instead of sinking the answer.
DROPPED_ITEMS = "ALTER TABLE llm_usage ADD COLUMN dropped_items INTEGER NOT NULL DEFAULT 0"

SQLITE: list[Migration] = [
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
    (4, REQUESTS.format(real="REAL")),
    (5, GUARD.format(real="REAL", serial="INTEGER PRIMARY KEY AUTOINCREMENT")),
    (6, RESTORED),
    (7, LIFECYCLE.format(real="REAL")),
    (8, LLM_USAGE.format(real="REAL")),
    (9, AUDIT_REFS.format(backfill=_SQLITE_BACKFILL)),
    (10, SPEAKERS),
    (11, JOB_QUEUE.format(real="REAL")),
    (12, TRUSTED),
    (13, DROPPED_ITEMS),
]


# PostgreSQL's first holds the schema the embedded store's 1-3 had reached.
POSTGRES: list[Migration] = [
    (
        1,
        """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE memories (
            rowid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            owner TEXT NOT NULL,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            query_hints TEXT NOT NULL DEFAULT '[]',
            confidence DOUBLE PRECISION NOT NULL,
            source TEXT NOT NULL,
            session_id TEXT,
            speaker TEXT,
            observed_at DOUBLE PRECISION NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            valid_from DOUBLE PRECISION,
            valid_to DOUBLE PRECISION,
            superseded_by TEXT,
            last_accessed_at DOUBLE PRECISION,
            access_count BIGINT NOT NULL DEFAULT 0,
            status TEXT NOT NULL,
            embedding_model TEXT,
            attribute TEXT,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX memories_owner_time ON memories (owner, status, observed_at);
        CREATE INDEX memories_owner_session ON memories (owner, session_id, rowid);
        CREATE INDEX memories_attribute ON memories (owner, kind, attribute)
            WHERE attribute IS NOT NULL;
        CREATE INDEX memories_content ON memories USING hash (content);  -- any length
        CREATE INDEX memories_superseded ON memories (superseded_by)
            WHERE superseded_by IS NOT NULL;
        CREATE TABLE derivations (
            child TEXT NOT NULL,
            parent TEXT NOT NULL,
            PRIMARY KEY (child, parent)
        );
        CREATE INDEX derivations_parent ON derivations (parent);
        CREATE TABLE vectors (
            key BIGINT PRIMARY KEY,
            owner TEXT NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vec vector NOT NULL
        );
        CREATE INDEX vectors_owner ON vectors (owner);
        CREATE TABLE keyword_docs (
            key BIGINT PRIMARY KEY,
            owner TEXT NOT NULL,
            text TEXT NOT NULL,
            context TEXT NOT NULL
        );
        CREATE INDEX keyword_docs_owner ON keyword_docs (owner);
        CREATE TABLE keyword_log (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            owner TEXT NOT NULL,
            key BIGINT NOT NULL
        );
        CREATE INDEX keyword_log_owner ON keyword_log (owner, seq);
        CREATE TABLE receipts (
            id TEXT PRIMARY KEY,
            at DOUBLE PRECISION NOT NULL,
            owner TEXT,
            criteria TEXT NOT NULL,
            deleted_ids TEXT NOT NULL,
            derived_ids TEXT NOT NULL
        );
        CREATE TABLE working_memory (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            owner TEXT NOT NULL,
            session_id TEXT NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            speaker TEXT,
            tool_name TEXT,
            tokens INTEGER NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX working_memory_session ON working_memory (owner, session_id, seq);
        CREATE INDEX working_memory_expiry ON working_memory (expires_at)
        """,
    ),
    (2, REQUESTS.format(real="DOUBLE PRECISION")),
    (
        3,
        GUARD.format(
            real="DOUBLE PRECISION", serial="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
        ),
    ),
    (4, RESTORED),
    (5, LIFECYCLE.format(real="DOUBLE PRECISION")),
    (6, LLM_USAGE.format(real="DOUBLE PRECISION")),
    (7, AUDIT_REFS.format(backfill=_POSTGRES_BACKFILL)),
    (8, SPEAKERS),
    (9, JOB_QUEUE.format(real="DOUBLE PRECISION")),
    (10, TRUSTED),
    (11, DROPPED_ITEMS),
    (
        12,
        """
        CREATE TABLE vector_log (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            owner TEXT NOT NULL,
            key BIGINT NOT NULL,
            op INTEGER NOT NULL
        );
        CREATE INDEX vector_log_owner ON vector_log (owner, seq)
        """,
    ),
]


def migrate(
    locked: Callable[[], AbstractContextManager[Connection]],
    migrations: Sequence[Migration],
    *,
    real: str = "REAL",
) -> list[int]:
    """Apply the migrations not yet recorded, each in a transaction of its own; returns
    the versions applied.

    ``locked()`` opens a transaction that no other process migrating the same database
    can enter at the same time (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: an advisory
    lock): each version is checked again inside it, so two processes starting together
    apply it once. ``real`` is the database's name for a double-precision column.
    """
    with locked() as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            f"(version INTEGER PRIMARY KEY, applied_at {real} NOT NULL)"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    applied = []
    for version, sql in migrations:
        if version in done:
            continue
        with locked() as conn:
            if conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = ?", (version,)
            ).fetchone():
                continue  # another process applied it meanwhile
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                (version, time.time()),
            )
        applied.append(version)
    return applied


def _statements(sql: str) -> list[str]:
    # one at a time: SQLite's executescript would commit on its own
    return [part.strip() for part in sql.split(";") if part.strip()]
