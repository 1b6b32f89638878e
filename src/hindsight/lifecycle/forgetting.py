"""The one way memories are forgotten: with what derives from them, a receipt and an
audit entry, in one store transaction. An explicit forget and the maintenance pass's
expiry and retention both end here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from hindsight.models import ForgetReceipt, Kind, new_id
from hindsight.store import AuditEntry, Store


def erase(
    store: Store,
    ids: Sequence[str],
    *,
    owner: str | None,
    criteria: dict[str, Any],
    principal: str,
    at: datetime,
    audit: bool = True,
    dry_run: bool = False,
) -> ForgetReceipt:
    """Delete ``ids`` and what was derived only from them (and any summary or reflection
    that drew on one of them); returns the receipt. What a deleted memory had superseded
    is current again (``receipt.restored_ids``). With ``dry_run``, nothing is deleted:
    the receipt, of id ``"preview"``, lists what would go."""
    derived = store.derived_closure(ids, quoting=(Kind.SUMMARY, Kind.REFLECTION))
    if dry_run:
        return ForgetReceipt("preview", list(ids), derived, at, criteria)
    receipt_id = new_id("r")
    receipt = {
        "id": receipt_id,
        "at": at,
        "owner": owner,
        "criteria": criteria,
        "deleted_ids": list(ids),
        "derived_ids": derived,
    }
    entry = AuditEntry(
        at=at,
        principal=principal,
        owner=owner,
        action="forget",
        memory_ids=(*ids, *derived),
        detail={"receipt": receipt_id},
    )
    restored = store.delete([*ids, *derived], receipt=receipt, audit=[entry] if audit else ())
    return ForgetReceipt(
        id=receipt_id,
        deleted_ids=list(ids),
        derived_ids=derived,
        at=at,
        criteria=criteria,
        restored_ids=restored,
    )
