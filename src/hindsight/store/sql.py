"""What the SQL backends share: the schema's use, the write path, filters and logs.

:class:`SQLStore` is the store over either database (:mod:`hindsight.store.db`: SQLite
or PostgreSQL, which hold the same tables and differ in how they connect and lock),
with its vectors kept and searched by a vector backend (:mod:`hindsight.store.vectors`).
The database is the source of truth; the keyword index (:mod:`hindsight.store.keyword`)
is a cache in each process that catches up from ``keyword_log`` whenever it is behind,
so a killed writer or another process (an API server beside this one) never leaves
rows and index disagreeing.

SQL here is written once, with ``?`` placeholders and syntax both databases take.
"""

from __future__ import annotations

import bisect
import json
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from itertools import accumulate, pairwise, zip_longest
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from hindsight.errors import EmbeddingMismatchError, StoreError
from hindsight.models import Kind, Memory, Status
from hindsight.store import audit as audit_log
from hindsight.store import files
from hindsight.store import queue as job_queue
from hindsight.store import usage as usage_log
from hindsight.store.base import Store
from hindsight.store.db import Connection, Database
from hindsight.store.keyword import KeywordIndex, TextChange
from hindsight.store.records import (
    RUN_GAP,
    AuditEntry,
    Filter,
    QueuedJob,
    Request,
    StoreStats,
    TextIndexing,
    UsageEntry,
    UsageRow,
)
from hindsight.store.rows import (
    COLUMNS,
    M_COLUMNS,
    N_COLUMNS,
    chunks,
    dt,
    filter_sql,
    memory_of,
    row_of,
)
from hindsight.text.terms import query_terms
from hindsight.text.timewords import date_words, referred_dates

if TYPE_CHECKING:
    from hindsight.store.vectors import Hits, VectorBackend


_PRUNE_EVERY = 1_000  # writes between two prunings of the change logs
# A search whose filter lets at most this many memories by, and too few of the index's
# best, scores those alone: listed by the database, compared by the index.
_FEW = 2_000
# Rows a turn and what was derived from it take at most, in a session written in order:
# a run's mates are looked for among the rows this many per turn of reach around it.
_ROWS_PER_TURN = 4
# Messages of a run that a turn's keyword context takes at most, per turn of context: a
# monologue of a hundred messages is not one turn's context.
_RUN_ROWS = 3
_GAP = RUN_GAP.total_seconds()


def _same_run(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two turns next to each other in a session, rows whose third to fifth
    fields are speaker, source and observed at, are messages of one run."""
    return tuple(a[2:4]) == tuple(b[2:4]) and abs(b[4] - a[4]) <= _GAP


class _Turns:
    """A session's turns in order, to find a turn's neighbours. Each row is (row key,
    text, speaker, source, observed at); the messages of a run count as one turn."""

    def __init__(self, rows: list[tuple[int, str, str | None, str, float]]) -> None:
        self.rows = rows
        self.keys = [row[0] for row in rows]
        new_runs = (int(not _same_run(a, b)) for a, b in pairwise(rows))
        self.runs = list(accumulate(new_runs, initial=0))  # the run each row is in, in order

    def around(self, key: int, n: int) -> list[tuple[int, str]]:
        """The turns of up to ``n`` runs before ``key``'s and of its own (nearest first),
        then of its own and up to ``n`` after, each side at most ``_RUN_ROWS * n`` turns."""
        i = bisect.bisect_left(self.keys, key)
        if i == len(self.keys) or self.keys[i] != key:
            return []
        first = bisect.bisect_left(self.runs, self.runs[i] - n)
        last = bisect.bisect_right(self.runs, self.runs[i] + n)
        cap = _RUN_ROWS * n
        before = self.rows[max(first, i - cap) : i]
        after = self.rows[i + 1 : min(last, i + 1 + cap)]
        return [(row[0], row[1]) for row in [*reversed(before), *after]]


def _neighbours(
    sessions: dict[tuple[str, str], _Turns], keys: set[int], text: TextIndexing
) -> set[int]:
    """Episodes within ``context_turns`` of these rows in their sessions."""
    found: set[int] = set()
    for turns in sessions.values():
        for key in keys:
            found.update(k for k, _ in turns.around(key, text.context_turns))
    return found


def _run_side(
    rows: Sequence[tuple[int, int, str | None, str, float]], at: int, step: int, reach: int
) -> tuple[list[int], bool]:
    """The keys of the turns that continue ``rows[at]``'s run on one side (``step`` -1 or
    1), at most ``reach``; and whether the rows ran out before the run did."""
    out: list[int] = []
    i = at
    while len(out) < reach:
        if not 0 <= i + step < len(rows):
            return out, True
        if not _same_run(rows[i], rows[i + step]):
            break
        i += step
        out.append(rows[i][1])
    return out, False


class SQLStore(Store):
    """A store over one SQL database and a vector backend. Thread-safe: the database's
    connection is used under its lock."""

    def __init__(
        self,
        db: Database,
        vectors: VectorBackend,
        *,
        index_dir: Path | None = None,
        text: TextIndexing | None = None,
        log_keep: int = 1_000_000,
        keyword_cache_docs: int | None = None,
        vector_backend: str | None = None,
    ) -> None:
        self.db = db
        self.vectors = vectors
        self._vector_backend = vector_backend or db.vector_backend  # its registered name
        self._closed = False
        if index_dir is not None and index_dir.is_dir():
            files.remove_leftovers(index_dir)  # of writers that died mid-write
        self._text = text or TextIndexing()
        self._keywords = KeywordIndex(
            self,
            context_weight=self._text.context_weight,
            directory=index_dir,
            max_docs=keyword_cache_docs,
        )
        self._log_keep = log_keep
        self._writes = 0
        self._added_in_hold: int | None = None  # memories added in exclusive(), if it wrote
        self._dimension: int | None = None
        self._model: str | None = None
        self._identity: str | None = None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Saving keyword indexes catches them up from the store first: not under the
        # database's lock, which a search holding an index's lock may be waiting for.
        self._keywords.close()
        with self.db.lock:
            self.vectors.close()
            self.db.close()

    # -- lifecycle -------------------------------------------------------------
    def bind_embedding(self, model_id: str, dimension: int, *, rebind: bool = False) -> None:
        with self.db.tx() as conn:
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            bound = (rows.get("embedding_model"), rows.get("dimension"))
            if bound == (None, None) or (rebind and bound != (model_id, str(dimension))):
                settings = [("embedding_model", model_id), ("dimension", str(dimension))]
                if bound != (None, None):  # vectors of the old model remain until remade
                    settings.append(("rebinding", "1"))
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    settings,
                )
            elif bound != (model_id, str(dimension)):
                raise EmbeddingMismatchError(
                    f"this store holds vectors of {bound[0]} ({bound[1]}-d), not {model_id} "
                    f"({dimension}-d); run 'hindsight reembed' to remake them with {model_id}"
                )
            elif "rebinding" in rows and not rebind:
                raise EmbeddingMismatchError(
                    f"re-embedding this store with {model_id} was interrupted; run "
                    "'hindsight reembed' to finish it"
                )
        self._dimension = dimension
        self._model = model_id
        self.vectors.bind(model_id, dimension)

    def embedding_binding(self) -> tuple[str, int] | None:
        keys = "('embedding_model', 'dimension')"
        rows = dict(self.db.read(f"SELECT key, value FROM meta WHERE key IN {keys}"))
        if "embedding_model" not in rows or "dimension" not in rows:
            return None
        return str(rows["embedding_model"]), int(rows["dimension"])

    def stale_vectors(self, limit: int) -> list[Memory]:
        return self._memories(
            self.db.read(
                f"SELECT {M_COLUMNS} FROM memories m JOIN vectors v ON v.key = m.rowid "
                "WHERE v.model != ? OR v.dim != ? ORDER BY m.rowid LIMIT ?",
                (self._model, self._dimension, limit),
            )
        )

    def replace_vectors(self, pairs: Sequence[tuple[Memory, npt.NDArray[np.float32]]]) -> None:
        keys: set[int] = set()
        with self.db.tx() as conn:
            for memory, vector in pairs:
                row = conn.execute(
                    "UPDATE memories SET embedding_model = ? WHERE id = ? RETURNING rowid",
                    (memory.embedding_model, memory.id),
                ).fetchone()
                if row is not None:  # forgotten meanwhile: nothing to remake
                    self._put_vector(conn, row[0], memory, vector)
                    keys.add(row[0])
            self._reindex(conn, keys)  # and the keyword text, as this version derives it
        self._wrote()

    def vector_versions(self) -> dict[tuple[str, int], int]:
        rows = self.db.read("SELECT model, dim, count(*) FROM vectors GROUP BY model, dim")
        return {(str(model), int(dim)): int(n) for model, dim, n in rows}

    def describe(self) -> dict[str, Any]:
        return {**self.db.describe(), "vectors": self._vector_backend}

    def finish_rebind(self) -> None:
        if self.stale_vectors(1):
            raise StoreError("vectors of another model remain; re-embed them first")
        with self.db.tx() as conn:
            conn.execute("DELETE FROM meta WHERE key = 'rebinding'")
        if self._model is not None and self._dimension is not None:
            self.vectors.bind(self._model, self._dimension)  # its index, on every vector

    # -- long-term memory ------------------------------------------------------
    def write(
        self,
        *,
        insert: Sequence[tuple[Memory, npt.NDArray[np.float32] | None]] = (),
        update: Sequence[tuple[Memory, npt.NDArray[np.float32] | None]] = (),
        request: Request | None = None,
        audit: Sequence[AuditEntry] = (),
        jobs: Sequence[QueuedJob] = (),
    ) -> None:
        touched: set[int] = set()  # rows whose keyword-index text must be (re)built
        with self.db.tx() as conn:
            if request is not None:  # the key first: a second writer of it fails here
                conn.execute(
                    "INSERT INTO requests (owners, principal, request_id, digest, result, at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        request.owners,
                        request.principal,
                        request.request_id,
                        request.digest,
                        json.dumps(request.result),
                        request.at.timestamp(),
                    ),
                )
            for memory, vector in insert:
                key = conn.execute(
                    f"INSERT INTO memories ({COLUMNS}) VALUES ({', '.join('?' * N_COLUMNS)}) "
                    "RETURNING rowid",
                    row_of(memory),
                ).fetchone()[0]
                if vector is not None:  # else the embedding endpoint is down: a job makes it
                    self._put_vector(conn, key, memory, vector)
                self._link(conn, memory)
                touched.add(key)
            for memory, maybe_vector in update:
                row = conn.execute(
                    "SELECT rowid FROM memories WHERE id = ?", (memory.id,)
                ).fetchone()
                if row is None:
                    raise StoreError(f"memory {memory.id} vanished during the update")
                key = row[0]
                assignments = ", ".join(f"{c.strip()} = ?" for c in COLUMNS.split(","))
                conn.execute(
                    f"UPDATE memories SET {assignments} WHERE rowid = ?", (*row_of(memory), key)
                )
                conn.execute("DELETE FROM derivations WHERE child = ?", (memory.id,))
                self._link(conn, memory)
                if maybe_vector is not None:
                    self._put_vector(conn, key, memory, maybe_vector)
                touched.add(key)
            job_queue.insert(conn, jobs)
            sessions = self._sessions(conn, touched)  # read once: the neighbours' too
            self._reindex(conn, touched | _neighbours(sessions, touched, self._text), sessions)
            audit_log.append(self.db, conn, audit)  # last: it takes the logs' write order
        self._wrote(added=len(insert))

    def request(self, owners: str, principal: str, request_id: str) -> Request | None:
        rows = self.db.read(
            "SELECT digest, result, at FROM requests "
            "WHERE owners = ? AND principal = ? AND request_id = ?",
            (owners, principal, request_id),
        )
        if not rows:
            return None
        digest, result, at = rows[0]
        when = datetime.fromtimestamp(at, tz=UTC)
        return Request(owners, principal, request_id, digest, json.loads(result), when)

    def prune_requests(self, before: datetime) -> int:
        with self.db.tx() as conn:
            return int(
                conn.execute("DELETE FROM requests WHERE at < ?", (before.timestamp(),)).rowcount
            )

    def _sessions(self, conn: Connection, keys: set[int]) -> dict[tuple[str, str], _Turns]:
        """The sessions that these rows are turns of: each one's turns, in order."""
        found: dict[tuple[str, str], _Turns] = {}
        if not self._text.context_turns:
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
                        (self._text.context_chars, owner, session),
                    ).fetchall()
                    found[owner, session] = _Turns(rows)
        return found

    def _reindex(
        self,
        conn: Connection,
        keys: set[int],
        sessions: dict[tuple[str, str], _Turns] | None = None,
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
            sessions = self._sessions(conn, set(rows))
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
            when = datetime.fromtimestamp(observed, tz=self._text.zone)  # the users' days
            parts = [
                content,
                *json.loads(hints),
                speaker or "",
                date_words(when),
                *referred_dates(content, when),
            ]
            turns = sessions.get((owner, session)) if kind == Kind.EPISODE.value else None
            context = [] if turns is None else turns.around(key, self._text.context_turns)
            docs.append((key, owner, "\n".join(parts), "\n".join(text for _, text in context)))
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

    @staticmethod
    def _link(conn: Connection, memory: Memory) -> None:
        conn.executemany(
            "INSERT INTO derivations (child, parent) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(memory.id, parent) for parent in memory.provenance.derived_from],
        )

    def _put_vector(
        self, conn: Connection, key: int, memory: Memory, vector: npt.NDArray[np.float32]
    ) -> None:
        self.vectors.put(conn, key, memory.owner, memory.embedding_model or "", vector)

    def _memories(self, rows: list[tuple[Any, ...]]) -> list[Memory]:
        if not rows:
            return []
        ids = [r[0] for r in rows]
        parents: dict[str, list[str]] = {}
        for chunk in chunks(ids):
            among, values = self.db.among(chunk)
            for child, parent in self.db.read(
                f"SELECT child, parent FROM derivations WHERE child {among} ORDER BY child, parent",
                values,
            ):
                parents.setdefault(child, []).append(parent)
        return [memory_of(r, parents.get(r[0], [])) for r in rows]

    def get(self, ids: Sequence[str]) -> list[Memory]:
        found: dict[str, tuple[Any, ...]] = {}
        for chunk in chunks(list(ids)):
            among, values = self.db.among(chunk)
            for row in self.db.read(f"SELECT {COLUMNS} FROM memories WHERE id {among}", values):
                found[row[0]] = row
        return self._memories([found[i] for i in dict.fromkeys(ids) if i in found])

    def list_memories(self, flt: Filter, *, limit: int, offset: int = 0) -> list[Memory]:
        where, params = filter_sql(flt)
        rows = self.db.read(
            f"SELECT {COLUMNS} FROM memories m WHERE {where} "
            "ORDER BY observed_at DESC, rowid DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return self._memories(rows)

    def count(self, flt: Filter) -> int:
        where, params = filter_sql(flt)
        return int(self.db.read(f"SELECT count(*) FROM memories m WHERE {where}", params)[0][0])

    def iterate(self, flt: Filter) -> Iterator[Memory]:
        where, params = filter_sql(flt)
        last = -1
        while True:
            rows = self.db.read(
                f"SELECT rowid, {COLUMNS} FROM memories m WHERE {where} AND rowid > ? "
                "ORDER BY rowid LIMIT 500",
                (*params, last),
            )
            if not rows:
                return
            last = rows[-1][0]
            yield from self._memories([r[1:] for r in rows])

    def find_attribute(self, owner: str, kind: Kind, attribute: str) -> list[Memory]:
        rows = self.db.read(
            f"SELECT {COLUMNS} FROM memories WHERE owner = ? AND kind = ? AND attribute = ? "
            "AND status = 'active' AND valid_to IS NULL ORDER BY observed_at",
            (owner, kind.value, attribute),
        )
        return self._memories(rows)

    def find_exact(self, owner: str, kind: Kind, content: str) -> Memory | None:
        rows = self.db.read(
            f"SELECT {COLUMNS} FROM memories WHERE owner = ? AND kind = ? AND content = ? "
            "AND status = 'active' AND valid_to IS NULL LIMIT 1",
            (owner, kind.value, content),
        )
        found = self._memories(rows)
        return found[0] if found else None

    def find_episodes(self, owner: str, session_id: str | None, content: str) -> list[Memory]:
        session = "session_id IS NULL" if session_id is None else "session_id = ?"
        rows = self.db.read(
            f"SELECT {COLUMNS} FROM memories WHERE owner = ? AND kind = 'episode' "
            f"AND {session} AND content = ? ORDER BY rowid",
            (owner, content) if session_id is None else (owner, session_id, content),
        )
        return self._memories(rows)

    def next_turns(self, ids: Sequence[str], flt: Filter) -> dict[str, Memory]:
        after: dict[str, int] = {}
        for chunk in chunks(list(ids)):
            among, values = self.db.among(chunk)
            after.update(
                self.db.read(
                    "SELECT q.id, (SELECT n.rowid FROM memories n WHERE n.owner = q.owner "
                    "AND n.session_id = q.session_id AND n.kind = 'episode' "
                    "AND n.rowid > q.rowid ORDER BY n.rowid LIMIT 1) "
                    f"FROM memories q WHERE q.id {among} AND q.kind = 'episode'",
                    values,
                )
            )
        following = {after[mid]: mid for mid in ids if after.get(mid) is not None}
        found = self._episodes_by_key(following, flt) if following else {}
        return {following[key]: memory for key, memory in found.items()}

    def run_mates(self, ids: Sequence[str], flt: Filter, *, reach: int) -> dict[str, list[Memory]]:
        # The rows right beside a turn tell whether it is in a run at all (in a chat of
        # two sides taking turns, none is); only a run that reaches past them, or a turn
        # whose neighbours are rows derived from it, is read further.
        mates, further = self._runs_within(ids, 1, reach)
        if further:
            mates.update(self._runs_within(further, reach * _ROWS_PER_TURN, reach)[0])
        found = self._episodes_by_key({key for run in mates.values() for key in run}, flt)
        runs = {mid: [found[key] for key in run if key in found] for mid, run in mates.items()}
        return {mid: run for mid, run in runs.items() if run}

    def _runs_within(
        self, ids: Sequence[str], span: int, reach: int
    ) -> tuple[dict[str, list[int]], list[str]]:
        """The row keys of each episode's run mates among the episodes within ``span``
        rows of it, nearest first; and the ids whose run may reach past those rows."""
        near: dict[str, list[tuple[int, int, str | None, str, float]]] = {}
        for chunk in chunks(list(ids)):
            among, values = self.db.among(chunk)
            for mid, *turn in self.db.read(
                "SELECT q.id, q.rowid, n.rowid, n.speaker, n.source, n.observed_at "
                "FROM memories q JOIN memories n ON n.owner = q.owner "
                "AND n.session_id = q.session_id AND n.kind = 'episode' "
                "AND n.rowid BETWEEN q.rowid - ? AND q.rowid + ? "
                f"WHERE q.id {among} AND q.kind = 'episode'",
                (span, span, *values),
            ):
                near.setdefault(mid, []).append(tuple(turn))
        mates: dict[str, list[int]] = {}
        further = []
        for mid, around in near.items():
            around.sort(key=lambda r: r[1])
            at = next(i for i, r in enumerate(around) if r[1] == r[0])
            sides = [_run_side(around, at, step, reach) for step in (-1, 1)]
            if any(len(keys) < reach and ran_out for keys, ran_out in sides):
                further.append(mid)
            nearest = zip_longest(*(keys for keys, _ in sides))
            if run := [key for pair in nearest for key in pair if key is not None]:
                mates[mid] = run
        return mates, further

    def _episodes_by_key(self, keys: Collection[int], flt: Filter) -> dict[int, Memory]:
        """The memories of these row keys that pass the filter (turns beside the owners'
        own: the keys come from their sessions)."""
        where, params = filter_sql(flt, owner=None)
        found: dict[int, Memory] = {}
        for chunk in chunks(sorted(keys)):
            among, values = self.db.among(chunk)
            rows = self.db.read(
                f"SELECT {COLUMNS}, rowid FROM memories AS m {self.db.by_key} "
                f"WHERE rowid {among} AND {where}",
                (*values, *params),
            )
            memories = self._memories([r[:-1] for r in rows])
            found.update(zip([r[-1] for r in rows], memories, strict=True))
        return found

    # -- search ----------------------------------------------------------------
    def vector_search(
        self, flt: Filter, query: npt.NDArray[np.float32], k: int
    ) -> list[tuple[str, float]]:
        return self.vectors.search(flt, query, k, self)

    def term_frequencies(self, owner: str, terms: Collection[str]) -> tuple[dict[str, int], int]:
        return self._keywords.frequencies(owner, terms)

    def keyword_search(self, flt: Filter, query: str, k: int) -> list[tuple[str, float]]:
        terms = query_terms(query)
        if not terms:
            return []

        def hits(
            n: int, among: Collection[int] | None = None
        ) -> tuple[list[tuple[int, float]], bool]:
            found = [self._keywords.search(owner, terms, n, among) for owner in flt.owners]
            return [h for part in found for h in part], all(len(p) < n for p in found)

        return self.within(flt, k, hits)

    def within(self, flt: Filter, k: int, hits: Hits) -> list[tuple[str, float]]:
        """The best ``k`` of an index's hits (row keys, scores) that pass the filter.

        ``hits(n)`` gives the index's top ``n`` and whether there are no more. When a
        narrow filter rejects most of them, look further; when it lets few of the owners'
        memories by at all (a type, a session), score only those (``hits(k, among=...)``)
        rather than read the whole index for them, as a search among what is not active
        (the review queue) does from the start. Within the database's ``searching()``
        (its lock, where reads take it), taken before an index's own (which catches up
        from the database): a writer holds it while it plans (:meth:`exclusive`) and
        searches an index too, so the order is always the database's lock, then an
        index's.
        """
        with self.db.searching():
            return self._within(flt, k, hits)

    def _within(self, flt: Filter, k: int, hits: Hits) -> list[tuple[str, float]]:
        # what is not active (held for review, archived) is the few by design: listed first
        few = None if Status.ACTIVE in flt.statuses else self._few(flt)
        if few is None:
            found, passed = self._widening(flt, k, hits)
        else:
            found, passed = hits(k, among=few)[0], few
        # ties in row order: the same however an index numbers its entries
        ranked = sorted((-score, key) for key, score in found if key in passed)
        return [(passed[key], -score) for score, key in ranked[:k]]

    def _widening(
        self, flt: Filter, k: int, hits: Hits
    ) -> tuple[list[tuple[int, float]], dict[int, str]]:
        """The index's best, in ever larger rounds until ``k`` of them pass the filter;
        or, when the first round held too few and the filter lets few by at all, those
        few alone. The hits, and those that pass with their ids."""
        where, params = filter_sql(flt, owner=None)  # hits from the owners' own indexes
        first = fetch = max(k * 2, 64)  # twice what is kept: most pass the usual filter
        while True:
            found, exhausted = hits(fetch)
            passed = self._passing([key for key, _ in found], where, params)
            if len(passed) >= k or exhausted:
                return found, passed
            if fetch == first and (few := self._few(flt)) is not None:
                return hits(k, among=few)[0], few
            fetch *= 4

    def _passing(self, keys: list[int], where: str, params: list[Any]) -> dict[int, str]:
        """Of these row keys, those whose memories pass the filter, with their ids."""
        passed: dict[int, str] = {}
        for chunk in chunks(keys):
            among, values = self.db.among(chunk)
            rows = self.db.read(
                f"SELECT rowid, id FROM memories AS m {self.db.by_key} "
                f"WHERE rowid {among} AND {where}",
                (*values, *params),
            )
            passed.update((int(key), mid) for key, mid in rows)
        return passed

    def _few(self, flt: Filter) -> dict[int, str] | None:
        """Every memory the filter lets by (row keys and ids) if there are at most
        ``_FEW`` of them, else None."""
        where, params = filter_sql(flt)
        rows = self.db.read(
            f"SELECT rowid, id FROM memories AS m WHERE {where} LIMIT ?", (*params, _FEW + 1)
        )
        return None if len(rows) > _FEW else {int(key): mid for key, mid in rows}

    def known_size(self, owner: str) -> int | None:
        """The owner's memories as its keyword index last counted them (no query)."""
        return self._keywords.size(owner)

    # -- KeywordSource, for the keyword index -------------------------------------
    def keyword_snapshot(self, owner: str) -> tuple[list[tuple[int, str, str]], int]:
        with self.db.snapshot():  # one consistent read: the head and the rows it covers
            head = self.keyword_log_head()
            rows = self.db.read(
                "SELECT key, text, context FROM keyword_docs WHERE owner = ? ORDER BY key",
                (owner,),
            )
        return [(int(key), text, context) for key, text, context in rows], head

    def keyword_changes(self, owner: str, after_seq: int) -> tuple[list[TextChange], int] | None:
        with self.db.snapshot():
            if after_seq < self.db.pruned("keyword_log"):
                return None  # the log no longer reaches back that far: rebuild
            head = self.keyword_log_head()
            rows = self.db.read(
                "SELECT l.seq, l.key, d.text, d.context FROM keyword_log l "
                "LEFT JOIN keyword_docs d ON d.key = l.key "
                "WHERE l.owner = ? AND l.seq > ? AND l.seq <= ? ORDER BY l.seq",
                (owner, after_seq, head),
            )
        return [(int(seq), int(key), text, context) for seq, key, text, context in rows], head

    def keyword_log_head(self) -> int:
        return self.db.log_head("keyword_log")

    # -- change logs: kept to the last ``log_keep`` entries -----------------------
    def prune_logs(self) -> None:
        """Drop change-log entries older than the last ``log_keep`` of each log.

        An index further behind than that finds its log cut (``*_changes`` returns
        None) and rebuilds from the rows, so pruning never loses a change.
        """
        with self.db.tx() as conn:
            for log in ("keyword_log", *self.vectors.logs):
                cut = self.db.log_head(log) - self._log_keep
                if (
                    cut > self.db.pruned(log)
                    and conn.execute(f"DELETE FROM {log} WHERE seq <= ?", (cut,)).rowcount
                ):
                    conn.execute(
                        "INSERT INTO meta (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (f"{log}_pruned", str(cut)),
                    )

    def _pruned(self, log: str) -> int:
        """The newest seq pruned from ``log`` (0 if none): changes after it are all there."""
        row = self.db.read("SELECT value FROM meta WHERE key = ?", (f"{log}_pruned",))
        return int(row[0][0]) if row else 0

    @contextmanager
    def exclusive(self, owners: Collection[str]) -> Iterator[None]:
        with self.db.exclusive(sorted(owners)):
            try:
                yield
            except BaseException:
                self._added_in_hold = None  # rolled back: nothing was written
                raise
        if self._added_in_hold is not None:  # committed
            added, self._added_in_hold = self._added_in_hold, None
            self._wrote(added)

    def _wrote(self, added: int = 0) -> None:
        """Count a write (that added ``added`` memories); every ``_PRUNE_EVERY`` writes,
        prune the change logs. In :meth:`exclusive`, once it has committed."""
        if self.db.held is not None:
            self._added_in_hold = (self._added_in_hold or 0) + added
            return
        self._writes += 1
        if self._writes % _PRUNE_EVERY == 0:
            self.prune_logs()
        self.db.wrote(added)

    # -- what caches of reads key on -------------------------------------------
    def generations(self, owners: Sequence[str]) -> dict[str, int]:
        # Every change to a memory rebuilds its keyword-index row, in its transaction, and
        # logs it in keyword_log (the index in every process catches up from it), in
        # commit order: the owner's newest entry there is the change count. Not below the
        # log's pruned mark, so an owner whose entries were all pruned never counts less
        # than before (the mark only grows, past every entry it removed).
        names = sorted(set(owners))
        among, values = self.db.among(names)
        with self.db.snapshot():
            pruned = self.db.pruned("keyword_log")
            rows = self.db.read(
                f"SELECT owner, max(seq) FROM keyword_log WHERE owner {among} GROUP BY owner",
                values,
            )
        newest = {owner: int(seq) for owner, seq in rows}
        return {owner: max(newest.get(owner, 0), pruned) for owner in names}

    def identity(self) -> str:
        if self._identity is None:
            with self.db.tx(read_back=False) as conn:  # made once, by whoever asks first
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('store_id', ?) "
                    "ON CONFLICT (key) DO NOTHING",
                    (uuid.uuid4().hex,),
                )
                self._identity = str(
                    conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()[0]
                )
        return self._identity

    # -- access, deletion ------------------------------------------------------
    def record_access(self, hits: dict[str, int], at: datetime) -> None:
        if not hits:
            return
        with self.db.tx(read_back=False) as conn:  # rows in id order: flushes lock in one order
            conn.executemany(
                "UPDATE memories SET access_count = access_count + ?, last_accessed_at = ? "
                "WHERE id = ?",
                [(hits[mid], at.timestamp(), mid) for mid in sorted(hits)],
            )

    def predecessors(self, ids: Sequence[str]) -> list[Memory]:
        found: list[Memory] = []
        for chunk in chunks(list(ids)):  # the partial index memories_superseded serves it
            among, values = self.db.among(chunk)
            rows = self.db.read(
                f"SELECT {COLUMNS} FROM memories WHERE superseded_by {among} ORDER BY rowid",
                values,
            )
            found += self._memories(rows)
        return found

    def children(self, parent_ids: Sequence[str]) -> list[Memory]:
        ids: list[str] = []
        for chunk in chunks(list(parent_ids)):
            among, values = self.db.among(chunk)
            ids.extend(
                r[0]
                for r in self.db.read(
                    f"SELECT DISTINCT child FROM derivations WHERE parent {among}", values
                )
            )
        return self.get(ids)

    def stated_values(self, parent_ids: Sequence[str]) -> dict[str, list[str | None]]:
        out: dict[str, list[str | None]] = {}
        for chunk in chunks(list(parent_ids)):
            among, values = self.db.among(chunk)
            for parent, superseded in self.db.read(
                "SELECT d.parent, m.superseded_by FROM derivations d "
                f"JOIN memories m ON m.id = d.child WHERE d.parent {among} "
                "AND m.attribute IS NOT NULL",
                values,
            ):
                out.setdefault(parent, []).append(superseded)
        return out

    def derived_closure(self, ids: Sequence[str], *, quoting: Collection[Kind] = ()) -> list[str]:
        quotes = {kind.value for kind in quoting}
        gone = set(ids)
        derived: list[str] = []
        frontier = list(ids)
        while frontier:
            children: set[str] = set()
            for chunk in chunks(frontier):
                among, values = self.db.among(chunk)
                children.update(
                    r[0]
                    for r in self.db.read(
                        f"SELECT child FROM derivations WHERE parent {among}", values
                    )
                )
            frontier = []
            for child in sorted(children - gone):
                parents = {
                    r[0]
                    for r in self.db.read(
                        "SELECT parent FROM derivations WHERE child = ?", (child,)
                    )
                }
                kind = self.db.read("SELECT kind FROM memories WHERE id = ?", (child,))
                if parents <= gone or (kind and kind[0][0] in quotes):
                    gone.add(child)
                    derived.append(child)
                    frontier.append(child)
        return derived

    def delete(
        self, ids: Sequence[str], *, receipt: dict[str, Any], audit: Sequence[AuditEntry] = ()
    ) -> list[str]:
        owners: set[str] = set()
        doomed = set(ids)
        restored: list[str] = []
        owner_of: dict[str, str] = {}
        with self.db.tx() as conn:
            gone: set[int] = set()
            for chunk in chunks(list(ids)):
                among, values = self.db.among(chunk)
                rows = conn.execute(
                    f"SELECT rowid, owner FROM memories WHERE id {among}", values
                ).fetchall()
                owners.update(owner for _, owner in rows)
                keys = {key for key, _ in rows}
                # neighbours quote deleted text
                gone |= keys | _neighbours(self._sessions(conn, keys), keys, self._text)
                for key, owner in rows:
                    self.vectors.drop(conn, key, owner)
                # what a deleted memory had superseded: current again if it was current,
                # else superseded by what superseded it (a chain keeps one current value)
                for deleted, next_id, valid_to in conn.execute(
                    f"SELECT id, superseded_by, valid_to FROM memories WHERE id {among}", values
                ).fetchall():
                    successor = None if next_id in doomed else next_id
                    older = conn.execute(
                        "UPDATE memories SET superseded_by = ?, valid_to = ? "
                        "WHERE superseded_by = ? RETURNING id, rowid, owner",
                        (successor, valid_to if successor else None, deleted),
                    ).fetchall()
                    if successor is None:
                        restored += [r[0] for r in older if r[0] not in doomed]
                        owner_of.update((r[0], r[2]) for r in older)
                        gone |= {r[1] for r in older}  # reindexed: current again
                conn.execute(f"DELETE FROM memories WHERE id {among}", values)
                conn.execute(f"DELETE FROM derivations WHERE child {among}", values)
                conn.execute(f"DELETE FROM derivations WHERE parent {among}", values)
            self._reindex(conn, gone)
            audit_log.append(self.db, conn, _naming_restored(audit, restored, owner_of))
            conn.execute(
                "INSERT INTO receipts (id, at, owner, criteria, deleted_ids, derived_ids, "
                "restored_ids) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    receipt["id"],
                    receipt["at"].timestamp(),
                    receipt.get("owner"),
                    json.dumps(receipt["criteria"], default=str),
                    json.dumps(receipt["deleted_ids"]),
                    json.dumps(receipt["derived_ids"]),
                    json.dumps(restored),
                ),
            )
        self._wrote()
        # An owner with no vector left loses its saved indexes; otherwise a saved keyword
        # index, which holds words of what was forgotten, goes (rewritten without them
        # when this process flushes).
        emptied = self.vectors.forgot(owners)
        for owner in owners:
            if owner in emptied:
                self._keywords.drop(owner)
            else:
                self._keywords.drop_saved(owner)
        return restored

    # -- the audit log (rows and chain: hindsight.store.audit) --------------------------
    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        if entries:
            with self.db.tx(read_back=False) as conn:
                audit_log.append(self.db, conn, entries)

    def audit(
        self,
        *,
        owners: Sequence[str] | None = None,
        principal: str | None = None,
        action: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> list[AuditEntry]:
        return audit_log.read(
            self.db,
            owners=owners,
            principal=principal,
            action=action,
            since=since,
            until=until,
            limit=limit,
            before_seq=before_seq,
        )

    def audit_about(self, owner: str, ids: Sequence[str], *, limit: int) -> list[AuditEntry]:
        return audit_log.about(self.db, owner, ids, limit=limit)

    def verify_audit(self) -> tuple[int, int | None]:
        return audit_log.verify(self.db)

    def prune_audit(self, before: datetime) -> int:
        return audit_log.prune(self.db, before)

    # -- LLM usage (rows: hindsight.store.usage) ----------------------------------------
    def record_usage(self, entry: UsageEntry) -> None:
        usage_log.record(self.db, entry)

    def usage(
        self, *, owners: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[UsageRow]:
        return usage_log.read(self.db, owners=owners, since=since)

    def tokens_used(self, owner: str, since: datetime) -> int:
        return usage_log.tokens(self.db, owner, since)

    # -- the job queue (rows: hindsight.store.queue) --------------------------------------
    def claim_jobs(
        self,
        holder: str,
        *,
        now: datetime,
        until: datetime,
        limit: int,
        owners: Sequence[str] | None = None,
    ) -> list[QueuedJob]:
        return job_queue.claim(self.db, holder, now=now, until=until, limit=limit, owners=owners)

    def finish_job(
        self,
        job_id: str,
        holder: str,
        *,
        state: str,
        now: datetime,
        not_before: datetime | None = None,
        error: str | None = None,
        result: Mapping[str, Any] | None = None,
        attempts: int | None = None,
    ) -> bool:
        return job_queue.finish(
            self.db,
            job_id,
            holder,
            state=state,
            now=now,
            not_before=not_before,
            error=error,
            result=result,
            attempts=attempts,
        )

    def jobs(
        self,
        *,
        owners: Sequence[str] | None = None,
        states: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[QueuedJob]:
        return job_queue.read(self.db, owners=owners, states=states, limit=limit)

    def retry_jobs(self, *, owners: Sequence[str] | None, now: datetime) -> int:
        return job_queue.retry(self.db, owners=owners, now=now)

    def job_counts(self, owners: Sequence[str] | None = None) -> dict[str, int]:
        return job_queue.counts(self.db, owners)

    def receipts(self, owner: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        sql = "SELECT id, at, owner, criteria, deleted_ids, derived_ids, restored_ids FROM receipts"
        params: tuple[Any, ...] = ()
        if owner is not None:
            sql += " WHERE owner = ?"
            params = (owner,)
        rows = self.db.read(sql + " ORDER BY at DESC LIMIT ?", (*params, limit))
        return [
            {
                "id": r[0],
                "at": dt(r[1]),
                "owner": r[2],
                "criteria": json.loads(r[3]),
                "deleted_ids": json.loads(r[4]),
                "derived_ids": json.loads(r[5]),
                "restored_ids": json.loads(r[6]),
            }
            for r in rows
        ]

    def lease(self, name: str, holder: str, *, until: datetime, now: datetime) -> bool:
        # One row of meta, "<until in ms, 16 digits> <holder>": taken when absent, lapsed
        # or the holder's own, in one statement (the database orders two takers). Fixed
        # width digits compare as numbers, in any collation.
        value = f"{int(until.timestamp() * 1000):016d} {holder}"
        with self.db.tx() as conn:
            row = conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                "SET value = excluded.value "
                "WHERE substr(meta.value, 1, 16) < ? OR substr(meta.value, 18) = ? "
                "RETURNING key",
                (f"lease:{name}", value, f"{int(now.timestamp() * 1000):016d}", holder),
            ).fetchone()
        return row is not None

    def owners(self) -> list[str]:
        return sorted(r[0] for r in self.db.read("SELECT DISTINCT owner FROM memories"))

    def recent_owners(self, limit: int) -> list[str]:
        # the keyword log names every change of a memory row, newest last (indexed by owner)
        rows = self.db.read(
            "SELECT owner FROM keyword_log GROUP BY owner ORDER BY max(seq) DESC LIMIT ?",
            (limit,),
        )
        return [r[0] for r in rows]

    def warm(self, owner: str) -> None:
        self._keywords.count(owner)  # loads its saved index or builds it, caught up
        self.vectors.warm(owner)

    def speakers(self, owner: str, limit: int = 200) -> list[str]:
        # one index seek per name (memories_owner_speaker), however many memories
        rows = self.db.read(
            "WITH RECURSIVE names(name, n) AS ("
            " SELECT (SELECT min(speaker) FROM memories"
            "  WHERE owner = ? AND speaker IS NOT NULL), 1"
            " UNION ALL"
            " SELECT (SELECT min(speaker) FROM memories WHERE owner = ? AND speaker > names.name),"
            "  n + 1 FROM names WHERE names.name IS NOT NULL AND n < ?"
            ") SELECT name FROM names WHERE name IS NOT NULL",
            (owner, owner, limit),
        )
        return [r[0] for r in rows]

    def stats(self, owner: str | None = None) -> StoreStats:
        cond, params = ("WHERE owner = ?", (owner,)) if owner else ("", ())
        by_kind = dict(
            self.db.read(f"SELECT kind, count(*) FROM memories {cond} GROUP BY kind", params)
        )
        by_status = dict(
            self.db.read(f"SELECT status, count(*) FROM memories {cond} GROUP BY status", params)
        )
        owners = self.db.read(f"SELECT count(DISTINCT owner) FROM memories {cond}", params)[0][0]
        meta = dict(self.db.read("SELECT key, value FROM meta"))
        dimension = int(meta["dimension"]) if "dimension" in meta else None
        memories = sum(by_kind.values())
        by_month: dict[str, dict[str, int]] = {}
        by_month_status: dict[str, dict[str, int]] = {}
        if owner:
            month = self.db.month_of("created_at")
            for when, kind, status, n in self.db.read(
                f"SELECT {month}, kind, status, count(*) FROM memories WHERE owner = ? "
                f"GROUP BY {month}, kind, status ORDER BY 1",
                (owner,),
            ):
                kinds = by_month.setdefault(str(when), {})
                kinds[kind] = kinds.get(kind, 0) + int(n)
                statuses = by_month_status.setdefault(str(when), {})
                statuses[status] = statuses.get(status, 0) + int(n)
        if owner:  # its own rows, never the database's size: that moves with others' writes
            text = self.db.read(
                "SELECT coalesce(sum(length(content) + length(query_hints) + length(metadata)), 0)"
                " FROM memories WHERE owner = ?",
                (owner,),
            )[0][0]
            size = int(text) + memories * 4 * (dimension or 0)
        else:
            size = self.db.size_bytes()
        return StoreStats(
            memories=memories,
            by_kind=by_kind,
            by_status=by_status,
            owners=int(owners),
            working_turns=0,  # working memory is apart: its holder counts it
            embedding_model=meta.get("embedding_model"),
            dimension=dimension,
            size_bytes=size,
            by_month=by_month,
            by_month_status=by_month_status,
        )


def _naming_restored(
    entries: Sequence[AuditEntry], restored: list[str], owner_of: dict[str, str]
) -> list[AuditEntry]:
    """A forget's entries, each naming the values of its owner the forget made current
    again (``detail["restored"]``): how a value's history tells why it is current."""
    out = []
    for entry in entries:
        mine = [mid for mid in restored if owner_of.get(mid) == entry.owner]
        out.append(replace(entry, detail={**entry.detail, "restored": mine}) if mine else entry)
    return out
