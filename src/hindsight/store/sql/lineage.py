"""What memories were derived from and superseded, and forgetting them with what
follows from them: the :class:`~hindsight.store.base.Lineage` part of a SQL store.

``derivations`` links a memory to those it was derived from; ``superseded_by`` a value
to the one that replaced it. A forget removes rows, vectors, keyword rows and links in
one transaction and keeps a receipt of it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

from hindsight.models import Kind, Memory
from hindsight.store import audit as audit_log
from hindsight.store.records import AuditEntry
from hindsight.store.rows import COLUMNS, chunks, dt
from hindsight.store.sql.core import SQLCore


class SQLLineage(SQLCore):
    """Links between memories, and forgetting."""

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
                gone |= keys | self._texts.neighbours(self._texts.sessions(conn, keys), keys)
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
            self._texts.reindex(conn, gone)
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
