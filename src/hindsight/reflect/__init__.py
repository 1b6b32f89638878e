"""Session summaries and reflections, drafted deterministically from memories.

Everything here is a pure function over :class:`~hindsight.models.Memory`
values: no store, no model, no clock. :meth:`Hindsight.summarize
<hindsight.engine.Hindsight.summarize>` and :meth:`Hindsight.reflect
<hindsight.engine.Hindsight.reflect>` fetch the memories, call these, embed and
write. An LLM-backed drafter can later sit behind the same inputs and outputs:

- :func:`summarize_session` (:mod:`.summary`) turns a session's turns, and what was
  derived from them, into one summary :class:`Draft`;
- :func:`reflect_on` (:mod:`.lessons`) turns a pool of memories into lesson drafts,
  each with a stable key;
- :func:`reconcile` (:mod:`.reconcile`) compares drafts with the stored memories of
  the same keys and says what to insert, rewrite in place or supersede.

Summaries and reflections build on what the extractor and the write path
already recorded: the :class:`~hindsight.models.Tag` of an event, a tool result's
``tool`` and ``detail``, attributes with their ``value``, ``superseded_by`` links,
and ``derived_from`` (a statement made again is merged into one memory that lists
every turn that said it).
"""

from __future__ import annotations

from hindsight.reflect.drafts import GENERATED_KINDS, Draft
from hindsight.reflect.lessons import MAX_REFLECTION_CHARS, reflect_on
from hindsight.reflect.reconcile import GENERATOR, Changes, reconcile
from hindsight.reflect.summary import MAX_SUMMARY_CHARS, summarize_session

__all__ = [
    "GENERATED_KINDS",
    "GENERATOR",
    "MAX_REFLECTION_CHARS",
    "MAX_SUMMARY_CHARS",
    "Changes",
    "Draft",
    "reconcile",
    "reflect_on",
    "summarize_session",
]
