"""Verbatim turns of conversations in a SQL store, and the turns around one: the
:class:`~hindsight.store.base.Episodes` part of the store."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from itertools import zip_longest

from hindsight.models import Memory
from hindsight.store.records import Filter
from hindsight.store.rows import COLUMNS, chunks, filter_sql
from hindsight.store.sql.core import SQLCore
from hindsight.store.sql.turns import run_side

# Rows a turn and what was derived from it take at most, in a session written in order:
# a run's mates are looked for among the rows this many per turn of reach around it.
_ROWS_PER_TURN = 4


class SQLEpisodes(SQLCore):
    """Turns of sessions: finding them, what follows one, and the rest of its run."""

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
            sides = [run_side(around, at, step, reach) for step in (-1, 1)]
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
