"""What the SQL backends share: the schema's use, the write path, filters and logs.

SQLite (:mod:`hindsight.store.sqlite`) and PostgreSQL (:mod:`hindsight.store.postgres`)
hold the same tables and differ in how they connect, lock, keep vectors and
search them. The database is the source of truth; the keyword index
(:mod:`hindsight.store.keyword`) is a cache in each process that catches up from
``keyword_log`` whenever it is behind, so a killed writer or another process (an
API server beside this one) never leaves rows and index disagreeing.

SQL here is written once, with ``?`` placeholders and syntax both databases take.
"""

from __future__ import annotations

import abc
import bisect
import json
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from hindsight.errors import EmbeddingMismatchError, StoreError
from hindsight.models import Kind, Memory, Provenance, Source, Status
from hindsight.store.base import Filter, Store, StoreStats, TextIndexing, WorkingTurn
from hindsight.store.keyword import KeywordIndex, TextChange, query_terms
from hindsight.timewords import date_words, referred_dates


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the shared code asks of a database connection inside a transaction."""

    def execute(self, sql: str, params: Any = ..., /) -> Cursor: ...
    def executemany(self, sql: str, params: Any, /) -> Any: ...


_PRUNE_EVERY = 1_000  # writes between two prunings of the change logs
_COLUMNS = (
    "id, owner, kind, content, query_hints, confidence, source, session_id, speaker, "
    "observed_at, created_at, updated_at, valid_from, valid_to, superseded_by, "
    "last_accessed_at, access_count, status, embedding_model, attribute, metadata"
)
_M_COLUMNS = ", ".join(f"m.{c.strip()}" for c in _COLUMNS.split(","))


def _ts(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def _dt(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)


def _now() -> datetime:
    return datetime.now(UTC)


class _Turns:
    """A session's turns (row key, text) in order, to find a turn's neighbours."""

    def __init__(self, rows: list[tuple[int, str]]) -> None:
        self.rows = rows
        self.keys = [key for key, _ in rows]

    def around(self, key: int, n: int) -> list[tuple[int, str]]:
        """Up to ``n`` turns before ``key`` (nearest first), then up to ``n`` after it."""
        i = bisect.bisect_left(self.keys, key)
        if i == len(self.keys) or self.keys[i] != key:
            return []
        return [*reversed(self.rows[max(0, i - n) : i]), *self.rows[i + 1 : i + 1 + n]]


def _neighbours(
    sessions: dict[tuple[str, str], _Turns], keys: set[int], text: TextIndexing
) -> set[int]:
    """Episodes within ``context_turns`` of these rows in their sessions."""
    found: set[int] = set()
    for turns in sessions.values():
        for key in keys:
            found.update(k for k, _ in turns.around(key, text.context_turns))
    return found


class SQLStore(Store):
    """The shared part of the SQL backends. Thread-safe: one connection, one lock."""

    _LOGS: tuple[str, ...] = ("keyword_log",)  # change logs pruned to ``log_keep``
    _BY_KEY = ""  # how a query says "look rows up by key, do not scan an owner's"

    def __init__(
        self,
        *,
        index_dir: Path | None,
        text: TextIndexing | None,
        log_keep: int,
        keyword_cache_docs: int | None,
    ) -> None:
        self._lock = threading.RLock()
        self._index_dir = index_dir
        self._text = text or TextIndexing()
        self._keywords = KeywordIndex(
            self,
            context_weight=self._text.context_weight,
            directory=index_dir,
            max_docs=keyword_cache_docs,
        )
        self._log_keep = log_keep
        self._writes = 0
        self._dimension: int | None = None
        self._model: str | None = None
        self._held: Connection | None = None  # the transaction of exclusive(), if open
        self._added_in_hold: int | None = None  # writes in it, counted when it commits

    # -- what each database does its own way ----------------------------------
    @abc.abstractmethod
    def _transaction(self) -> AbstractContextManager[Connection]:
        """One write transaction, all or nothing (see `_log_order` for what it orders);
        under ``_lock``."""

    @abc.abstractmethod
    def _hold(self, conn: Connection, owners: Sequence[str]) -> None:
        """In a write transaction: keep other processes' writers of these owners waiting
        until it ends (SQLite: already so, one writer at a time)."""

    @abc.abstractmethod
    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def _among(self, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """SQL saying "is one of these values", and its parameters (SQLite: ``IN (?, ...)``;
        PostgreSQL overrides it with one array, so the statement's text stays the same)."""
        return f"IN ({_marks(values)})", list(values)

    def _log_order(self, conn: Connection) -> None:
        """Called in a write transaction before it appends to ``keyword_log``: from here
        to its commit no other writer may append, so entries commit in seq order and a
        cache that has read up to a seq has missed nothing before it. (SQLite: already
        so, one writer at a time.)"""

    @abc.abstractmethod
    def _snapshot(self) -> AbstractContextManager[None]:
        """Reads inside it see one state of the database (a log head and its rows)."""

    @abc.abstractmethod
    def _bound(self, model_id: str, dimension: int) -> None:
        """The store now holds vectors of this model and dimension."""

    @abc.abstractmethod
    def _put_vector(
        self, conn: Connection, key: int, memory: Memory, vector: npt.NDArray[np.float32]
    ) -> None: ...

    @abc.abstractmethod
    def _drop_vector(self, conn: Connection, key: int, owner: str) -> None: ...

    @abc.abstractmethod
    def _forgot(self, owners: set[str]) -> None:
        """Memories of these owners were deleted: drop what caches hold of them."""

    @abc.abstractmethod
    def _log_head(self, log: str) -> int:
        """The newest committed seq of a change log (0 if none)."""

    @abc.abstractmethod
    def _size_bytes(self) -> int: ...

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        """A write transaction, or the one this thread holds open in :meth:`exclusive`."""
        with self._lock:
            if self._held is not None:
                yield self._held
                return
            with self._transaction() as conn:
                yield conn

    @contextmanager
    def exclusive(self, owners: Collection[str]) -> Iterator[None]:
        with self._lock:
            if self._held is not None:
                raise StoreError("exclusive() does not nest")
            with self._transaction() as conn:
                self._hold(conn, sorted(owners))
                self._held = conn
                try:
                    yield
                finally:
                    self._held = None
                    added, self._added_in_hold = self._added_in_hold, None
            if added is not None:  # committed
                self._after_write(added)

    def _check_vector(self, vector: npt.NDArray[np.float32]) -> None:
        if self._dimension is None:
            raise StoreError("bind_embedding() must be called before writing vectors")
        if vector.shape != (self._dimension,):
            raise EmbeddingMismatchError(
                f"vector of shape {vector.shape} does not fit this {self._dimension}-d store"
            )

    # -- lifecycle -------------------------------------------------------------
    def bind_embedding(self, model_id: str, dimension: int, *, rebind: bool = False) -> None:
        with self._tx() as conn:
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
        self._bound(model_id, dimension)

    def stale_vectors(self, limit: int) -> list[Memory]:
        return self._memories(
            self._read(
                f"SELECT {_M_COLUMNS} FROM memories m JOIN vectors v ON v.key = m.rowid "
                "WHERE v.model != ? OR v.dim != ? ORDER BY m.rowid LIMIT ?",
                (self._model, self._dimension, limit),
            )
        )

    def replace_vectors(self, pairs: Sequence[tuple[Memory, npt.NDArray[np.float32]]]) -> None:
        keys: set[int] = set()
        with self._tx() as conn:
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

    def finish_rebind(self) -> None:
        if self.stale_vectors(1):
            raise StoreError("vectors of another model remain; re-embed them first")
        with self._tx() as conn:
            conn.execute("DELETE FROM meta WHERE key = 'rebinding'")

    # -- long-term memory ------------------------------------------------------
    def write(
        self,
        *,
        insert: Sequence[tuple[Memory, npt.NDArray[np.float32]]] = (),
        update: Sequence[tuple[Memory, npt.NDArray[np.float32] | None]] = (),
    ) -> None:
        touched: set[int] = set()  # rows whose keyword-index text must be (re)built
        with self._tx() as conn:
            for memory, vector in insert:
                key = conn.execute(
                    f"INSERT INTO memories ({_COLUMNS}) VALUES ({', '.join('?' * 21)}) "
                    "RETURNING rowid",
                    self._row(memory),
                ).fetchone()[0]
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
                assignments = ", ".join(f"{c.strip()} = ?" for c in _COLUMNS.split(","))
                conn.execute(
                    f"UPDATE memories SET {assignments} WHERE rowid = ?", (*self._row(memory), key)
                )
                conn.execute("DELETE FROM derivations WHERE child = ?", (memory.id,))
                self._link(conn, memory)
                if maybe_vector is not None:
                    self._put_vector(conn, key, memory, maybe_vector)
                touched.add(key)
            sessions = self._sessions(conn, touched)  # read once: the neighbours' too
            self._reindex(conn, touched | _neighbours(sessions, touched, self._text), sessions)
        self._wrote(added=len(insert))

    def _sessions(self, conn: Connection, keys: set[int]) -> dict[tuple[str, str], _Turns]:
        """The sessions that these rows are turns of: each one's turns, in order."""
        found: dict[tuple[str, str], _Turns] = {}
        if not self._text.context_turns:
            return found
        for chunk in _chunks(sorted(keys)):
            among, values = self._among(chunk)
            for owner, session in conn.execute(
                "SELECT DISTINCT owner, session_id FROM memories WHERE kind = 'episode' "
                f"AND session_id IS NOT NULL AND rowid {among}",
                values,
            ).fetchall():
                if (owner, session) not in found:
                    rows = conn.execute(
                        "SELECT rowid, substr(content, 1, ?) FROM memories WHERE owner = ? "
                        "AND session_id = ? AND kind = 'episode' ORDER BY rowid",
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
        for chunk in _chunks(sorted(keys)):
            among, values = self._among(chunk)
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
            self._log_order(conn)
            conn.executemany("INSERT INTO keyword_log (owner, key) VALUES (?, ?)", log)

    @staticmethod
    def _link(conn: Connection, memory: Memory) -> None:
        conn.executemany(
            "INSERT INTO derivations (child, parent) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(memory.id, parent) for parent in memory.provenance.derived_from],
        )

    @staticmethod
    def _row(m: Memory) -> tuple[Any, ...]:
        return (
            m.id,
            m.owner,
            m.kind.value,
            m.content,
            json.dumps(m.query_hints, ensure_ascii=False),
            m.confidence,
            m.provenance.source.value,
            m.provenance.session_id,
            m.provenance.speaker,
            _ts(m.observed_at),
            _ts(m.created_at),
            _ts(m.updated_at),
            _ts(m.valid_from),
            _ts(m.valid_to),
            m.superseded_by,
            _ts(m.last_accessed_at),
            m.access_count,
            m.status.value,
            m.embedding_model,
            m.attribute,
            json.dumps(m.metadata, ensure_ascii=False),
        )

    def _memories(self, rows: list[tuple[Any, ...]]) -> list[Memory]:
        if not rows:
            return []
        ids = [r[0] for r in rows]
        parents: dict[str, list[str]] = {}
        for chunk in _chunks(ids):
            among, values = self._among(chunk)
            for child, parent in self._read(
                f"SELECT child, parent FROM derivations WHERE child {among} ORDER BY child, parent",
                values,
            ):
                parents.setdefault(child, []).append(parent)
        return [_memory(r, parents.get(r[0], [])) for r in rows]

    def get(self, ids: Sequence[str]) -> list[Memory]:
        found: dict[str, tuple[Any, ...]] = {}
        for chunk in _chunks(list(ids)):
            among, values = self._among(chunk)
            for row in self._read(f"SELECT {_COLUMNS} FROM memories WHERE id {among}", values):
                found[row[0]] = row
        return self._memories([found[i] for i in dict.fromkeys(ids) if i in found])

    def list_memories(self, flt: Filter, *, limit: int, offset: int = 0) -> list[Memory]:
        where, params = filter_sql(flt)
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories m WHERE {where} "
            "ORDER BY observed_at DESC, rowid DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return self._memories(rows)

    def count(self, flt: Filter) -> int:
        where, params = filter_sql(flt)
        return int(self._read(f"SELECT count(*) FROM memories m WHERE {where}", params)[0][0])

    def iterate(self, flt: Filter) -> Iterator[Memory]:
        where, params = filter_sql(flt)
        last = -1
        while True:
            rows = self._read(
                f"SELECT rowid, {_COLUMNS} FROM memories m WHERE {where} AND rowid > ? "
                "ORDER BY rowid LIMIT 500",
                (*params, last),
            )
            if not rows:
                return
            last = rows[-1][0]
            yield from self._memories([r[1:] for r in rows])

    def find_attribute(self, owner: str, kind: Kind, attribute: str) -> list[Memory]:
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories WHERE owner = ? AND kind = ? AND attribute = ? "
            "AND status = 'active' AND valid_to IS NULL ORDER BY observed_at",
            (owner, kind.value, attribute),
        )
        return self._memories(rows)

    def find_exact(self, owner: str, kind: Kind, content: str) -> Memory | None:
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories WHERE owner = ? AND kind = ? AND content = ? "
            "AND status = 'active' AND valid_to IS NULL LIMIT 1",
            (owner, kind.value, content),
        )
        found = self._memories(rows)
        return found[0] if found else None

    def find_episodes(self, owner: str, session_id: str | None, content: str) -> list[Memory]:
        session = "session_id IS NULL" if session_id is None else "session_id = ?"
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories WHERE owner = ? AND kind = 'episode' "
            f"AND {session} AND content = ? ORDER BY rowid",
            (owner, content) if session_id is None else (owner, session_id, content),
        )
        return self._memories(rows)

    def next_turns(self, ids: Sequence[str], flt: Filter) -> dict[str, Memory]:
        after: dict[str, int] = {}
        for chunk in _chunks(list(ids)):
            among, values = self._among(chunk)
            after.update(
                self._read(
                    "SELECT q.id, (SELECT n.rowid FROM memories n WHERE n.owner = q.owner "
                    "AND n.session_id = q.session_id AND n.kind = 'episode' "
                    "AND n.rowid > q.rowid ORDER BY n.rowid LIMIT 1) "
                    f"FROM memories q WHERE q.id {among} AND q.kind = 'episode'",
                    values,
                )
            )
        following = {after[mid]: mid for mid in ids if after.get(mid) is not None}
        if not following:
            return {}
        where, params = filter_sql(flt, owner=None)  # turns after the owners' own
        among, values = self._among(list(following))
        rows = self._read(
            f"SELECT {_COLUMNS}, rowid FROM memories AS m {self._BY_KEY} "
            f"WHERE rowid {among} AND {where}",
            (*values, *params),
        )
        found = {m.id: m for m in self._memories([r[:-1] for r in rows])}
        return {following[r[-1]]: found[r[0]] for r in rows}

    # -- search ----------------------------------------------------------------
    def keyword_search(self, flt: Filter, query: str, k: int) -> list[tuple[str, float]]:
        terms = query_terms(query)
        if not terms:
            return []

        def hits(n: int) -> tuple[list[tuple[int, float]], bool]:
            found = [self._keywords.search(owner, terms, n) for owner in flt.owners]
            return [h for part in found for h in part], all(len(p) < n for p in found)

        return self._top_within(flt, k, hits)

    def _top_within(
        self,
        flt: Filter,
        k: int,
        hits: Callable[[int], tuple[list[tuple[int, float]], bool]],
    ) -> list[tuple[str, float]]:
        """The best ``k`` of an index's hits (row keys, scores) that pass the filter.

        ``hits(n)`` gives the index's top ``n`` and whether there are no more. When a
        narrow filter rejects most of them, look further. Under the store's lock, taken
        before an index's own (which catches up from the store): a writer holds it while
        it plans (:meth:`exclusive`) and searches an index too, so the order is always the
        store's lock, then an index's.
        """
        with self._lock:
            where, params = filter_sql(flt, owner=None)  # hits from the owners' own indexes
            fetch = max(k * 4, 64)
            while True:
                found, exhausted = hits(fetch)
                scores = dict(found)
                allowed: list[tuple[str, int]] = []
                for chunk in _chunks(list(scores)):
                    among, values = self._among(chunk)
                    allowed.extend(
                        self._read(
                            f"SELECT id, rowid FROM memories AS m {self._BY_KEY} "
                            f"WHERE rowid {among} AND {where}",
                            (*values, *params),
                        )
                    )
                if len(allowed) >= k or exhausted:
                    ranked = sorted(
                        ((mid, scores[key]) for mid, key in allowed), key=lambda h: -h[1]
                    )
                    return ranked[:k]
                fetch *= 4

    # -- KeywordSource, for the keyword index -------------------------------------
    def keyword_snapshot(self, owner: str) -> tuple[list[tuple[int, str, str]], int]:
        with self._snapshot():  # one consistent read: the head and the rows it covers
            head = self.keyword_log_head()
            rows = self._read(
                "SELECT key, text, context FROM keyword_docs WHERE owner = ? ORDER BY key",
                (owner,),
            )
        return [(int(key), text, context) for key, text, context in rows], head

    def keyword_changes(self, owner: str, after_seq: int) -> tuple[list[TextChange], int] | None:
        with self._snapshot():
            if after_seq < self._pruned("keyword_log"):
                return None  # the log no longer reaches back that far: rebuild
            head = self.keyword_log_head()
            rows = self._read(
                "SELECT l.seq, l.key, d.text, d.context FROM keyword_log l "
                "LEFT JOIN keyword_docs d ON d.key = l.key "
                "WHERE l.owner = ? AND l.seq > ? AND l.seq <= ? ORDER BY l.seq",
                (owner, after_seq, head),
            )
        return [(int(seq), int(key), text, context) for seq, key, text, context in rows], head

    def keyword_log_head(self) -> int:
        return self._log_head("keyword_log")

    # -- change logs: kept to the last ``log_keep`` entries -----------------------
    def prune_logs(self) -> None:
        """Drop change-log entries older than the last ``log_keep`` of each log.

        An index further behind than that finds its log cut (``*_changes`` returns
        None) and rebuilds from the rows, so pruning never loses a change.
        """
        with self._tx() as conn:
            for log in self._LOGS:
                cut = self._log_head(log) - self._log_keep
                if (
                    cut > self._pruned(log)
                    and conn.execute(f"DELETE FROM {log} WHERE seq <= ?", (cut,)).rowcount
                ):
                    conn.execute(
                        "INSERT INTO meta (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (f"{log}_pruned", str(cut)),
                    )

    def _pruned(self, log: str) -> int:
        """The newest seq pruned from ``log`` (0 if none): changes after it are all there."""
        row = self._read("SELECT value FROM meta WHERE key = ?", (f"{log}_pruned",))
        return int(row[0][0]) if row else 0

    def _wrote(self, added: int = 0) -> None:
        """Count a write (that added ``added`` memories); every ``_PRUNE_EVERY`` writes,
        prune the change logs. In :meth:`exclusive`, once it has committed."""
        if self._held is not None:
            self._added_in_hold = (self._added_in_hold or 0) + added
        else:
            self._after_write(added)

    def _after_write(self, added: int) -> None:
        self._writes += 1
        if self._writes % _PRUNE_EVERY == 0:
            self.prune_logs()

    # -- access, deletion ------------------------------------------------------
    def record_access(self, hits: dict[str, int], at: datetime) -> None:
        if not hits:
            return
        with self._tx() as conn:
            conn.executemany(
                "UPDATE memories SET access_count = access_count + ?, last_accessed_at = ? "
                "WHERE id = ?",
                [(n, at.timestamp(), mid) for mid, n in hits.items()],
            )

    def children(self, parent_ids: Sequence[str]) -> list[Memory]:
        ids: list[str] = []
        for chunk in _chunks(list(parent_ids)):
            among, values = self._among(chunk)
            ids.extend(
                r[0]
                for r in self._read(
                    f"SELECT DISTINCT child FROM derivations WHERE parent {among}", values
                )
            )
        return self.get(ids)

    def derived_closure(self, ids: Sequence[str], *, quoting: Collection[Kind] = ()) -> list[str]:
        quotes = {kind.value for kind in quoting}
        gone = set(ids)
        derived: list[str] = []
        frontier = list(ids)
        while frontier:
            children: set[str] = set()
            for chunk in _chunks(frontier):
                among, values = self._among(chunk)
                children.update(
                    r[0]
                    for r in self._read(
                        f"SELECT child FROM derivations WHERE parent {among}", values
                    )
                )
            frontier = []
            for child in sorted(children - gone):
                parents = {
                    r[0]
                    for r in self._read("SELECT parent FROM derivations WHERE child = ?", (child,))
                }
                kind = self._read("SELECT kind FROM memories WHERE id = ?", (child,))
                if parents <= gone or (kind and kind[0][0] in quotes):
                    gone.add(child)
                    derived.append(child)
                    frontier.append(child)
        return derived

    def delete(self, ids: Sequence[str], *, receipt: dict[str, Any]) -> None:
        owners: set[str] = set()
        with self._tx() as conn:
            gone: set[int] = set()
            for chunk in _chunks(list(ids)):
                among, values = self._among(chunk)
                rows = conn.execute(
                    f"SELECT rowid, owner FROM memories WHERE id {among}", values
                ).fetchall()
                owners.update(owner for _, owner in rows)
                keys = {key for key, _ in rows}
                # neighbours quote deleted text
                gone |= keys | _neighbours(self._sessions(conn, keys), keys, self._text)
                for key, owner in rows:
                    self._drop_vector(conn, key, owner)
                conn.execute(f"DELETE FROM memories WHERE id {among}", values)
                conn.execute(f"DELETE FROM derivations WHERE child {among}", values)
                conn.execute(f"DELETE FROM derivations WHERE parent {among}", values)
                conn.execute(
                    f"UPDATE memories SET superseded_by = NULL WHERE superseded_by {among}", values
                )
            self._reindex(conn, gone)
            conn.execute(
                "INSERT INTO receipts (id, at, owner, criteria, deleted_ids, derived_ids) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    receipt["id"],
                    receipt["at"].timestamp(),
                    receipt.get("owner"),
                    json.dumps(receipt["criteria"], default=str),
                    json.dumps(receipt["deleted_ids"]),
                    json.dumps(receipt["derived_ids"]),
                ),
            )
        self._wrote()
        self._forgot(owners)

    def receipts(self, owner: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        sql = "SELECT id, at, owner, criteria, deleted_ids, derived_ids FROM receipts"
        params: tuple[Any, ...] = ()
        if owner is not None:
            sql += " WHERE owner = ?"
            params = (owner,)
        rows = self._read(sql + " ORDER BY at DESC LIMIT ?", (*params, limit))
        return [
            {
                "id": r[0],
                "at": _dt(r[1]),
                "owner": r[2],
                "criteria": json.loads(r[3]),
                "deleted_ids": json.loads(r[4]),
                "derived_ids": json.loads(r[5]),
            }
            for r in rows
        ]

    def stats(self, owner: str | None = None) -> StoreStats:
        cond, params = ("WHERE owner = ?", (owner,)) if owner else ("", ())
        by_kind = dict(
            self._read(f"SELECT kind, count(*) FROM memories {cond} GROUP BY kind", params)
        )
        by_status = dict(
            self._read(f"SELECT status, count(*) FROM memories {cond} GROUP BY status", params)
        )
        owners = self._read(f"SELECT count(DISTINCT owner) FROM memories {cond}", params)[0][0]
        meta = dict(self._read("SELECT key, value FROM meta"))
        return StoreStats(
            memories=sum(by_kind.values()),
            by_kind=by_kind,
            by_status=by_status,
            owners=int(owners),
            working_turns=self.wm_count(owner),
            embedding_model=meta.get("embedding_model"),
            dimension=int(meta["dimension"]) if "dimension" in meta else None,
            size_bytes=self._size_bytes(),
        )

    # -- working memory --------------------------------------------------------
    def wm_append(self, turn: WorkingTurn) -> WorkingTurn:
        with self._tx() as conn:
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
        rows = self._read(
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
                created_at=_dt(r[6]) or now,
                expires_at=_dt(r[7]) or now,
                speaker=r[8],
                tool_name=r[9],
                metadata=json.loads(r[10]),
            )
            for r in rows
        ]

    def wm_clear(self, owner: str, session_id: str, *, up_to_seq: int | None = None) -> int:
        with self._tx() as conn:
            sql = "DELETE FROM working_memory WHERE owner = ? AND session_id = ?"
            params: tuple[Any, ...] = (owner, session_id)
            if up_to_seq is not None:
                sql += " AND seq <= ?"
                params += (up_to_seq,)
            return conn.execute(sql, params).rowcount

    def wm_sessions(self, owner: str, now: datetime) -> list[tuple[str, int, int]]:
        rows = self._read(
            "SELECT session_id, count(*), sum(tokens) FROM working_memory "
            "WHERE owner = ? AND expires_at > ? GROUP BY session_id ORDER BY max(seq) DESC",
            (owner, now.timestamp()),
        )
        return [(r[0], int(r[1]), int(r[2])) for r in rows]

    def wm_count(self, owner: str | None = None) -> int:
        cond, params = ("WHERE owner = ?", (owner,)) if owner else ("", ())
        return int(self._read(f"SELECT count(*) FROM working_memory {cond}", params)[0][0])

    def wm_purge_expired(self, now: datetime) -> int:
        with self._tx() as conn:
            return conn.execute(
                "DELETE FROM working_memory WHERE expires_at <= ?", (now.timestamp(),)
            ).rowcount


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))


def _chunks(values: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    for i in range(0, len(values), size):
        yield values[i : i + size]


def filter_sql(flt: Filter, *, owner: str | None = "m.owner") -> tuple[str, list[Any]]:
    """The SQL condition (on table alias ``m``) and parameters of a filter.

    ``owner`` is the column that restricts the owners, or None for rows known to be
    theirs (keys from their own indexes): a query that looks rows up by key then offers
    the database no owner index to prefer, which on stale statistics it did (a nested
    loop comparing every row of an owner with every key).
    """
    clauses = [] if owner is None else [f"{owner} IN ({_marks(flt.owners)})"]
    params: list[Any] = [] if owner is None else list(flt.owners)
    if flt.kinds:
        clauses.append(f"m.kind IN ({_marks(flt.kinds)})")
        params.extend(k.value for k in flt.kinds)
    if flt.statuses:
        clauses.append(f"m.status IN ({_marks(flt.statuses)})")
        params.extend(s.value for s in flt.statuses)
    if flt.since is not None:
        clauses.append("m.observed_at >= ?")
        params.append(flt.since.timestamp())
    if flt.until is not None:
        clauses.append("m.observed_at <= ?")
        params.append(flt.until.timestamp())
    if flt.min_confidence is not None:
        clauses.append("m.confidence >= ?")
        params.append(flt.min_confidence)
    if flt.current_only:
        clauses.append("m.valid_to IS NULL")
    if flt.session_id is not None:
        clauses.append("m.session_id = ?")
        params.append(flt.session_id)
    return " AND ".join(clauses), params


def _memory(r: tuple[Any, ...], derived_from: list[str]) -> Memory:
    return Memory(
        id=r[0],
        owner=r[1],
        kind=Kind(r[2]),
        content=r[3],
        query_hints=json.loads(r[4]),
        confidence=r[5],
        provenance=Provenance(
            source=Source(r[6]), session_id=r[7], speaker=r[8], derived_from=derived_from
        ),
        observed_at=_dt(r[9]) or _now(),
        created_at=_dt(r[10]) or _now(),
        updated_at=_dt(r[11]) or _now(),
        valid_from=_dt(r[12]),
        valid_to=_dt(r[13]),
        superseded_by=r[14],
        last_accessed_at=_dt(r[15]),
        access_count=r[16],
        status=Status(r[17]),
        embedding_model=r[18],
        attribute=r[19],
        metadata=json.loads(r[20]),
    )
