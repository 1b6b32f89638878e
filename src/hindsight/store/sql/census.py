"""Who holds memories in a SQL store and how many, and what the store is: the
:class:`~hindsight.store.base.Census` part of the store."""

from __future__ import annotations

import uuid
from typing import Any

from hindsight.store.records import StoreStats
from hindsight.store.sql.core import SQLCore


class SQLCensus(SQLCore):
    """Owners, counts and sizes, and the store's name and place."""

    def owners(self) -> list[str]:
        return sorted(r[0] for r in self.db.read("SELECT DISTINCT owner FROM memories"))

    def recent_owners(self, limit: int) -> list[str]:
        # the keyword log names every change of a memory row, newest last (indexed by owner)
        rows = self.db.read(
            "SELECT owner FROM keyword_log GROUP BY owner ORDER BY max(seq) DESC LIMIT ?",
            (limit,),
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

    def describe(self) -> dict[str, Any]:
        return {**self.db.describe(), "vectors": self._vector_backend}

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
