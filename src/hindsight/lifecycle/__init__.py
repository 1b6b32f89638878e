"""The memory lifecycle: decay, archive, expiry and retention, and the maintenance pass.

Decay (:mod:`.decay`) and the retention policy (:mod:`.retention`) are pure functions of a
memory's timestamps and the time asked about, so recall applies them whether or not a
pass has run. The pass (:mod:`.maintain`) archives what went stale and forgets what
expired, owner by owner, each in its transaction; forgetting goes through
:func:`.forgetting.erase`, as an explicit forget does.
"""

from __future__ import annotations

from hindsight.lifecycle.decay import WEEK, Decay
from hindsight.lifecycle.forgetting import erase
from hindsight.lifecycle.maintain import MaintainReport, Maintenance
from hindsight.lifecycle.retention import Retention

__all__ = ["WEEK", "Decay", "MaintainReport", "Maintenance", "Retention", "erase"]
