"""The heuristic extractor, turn by turn, and the events a turn states without it.

:class:`HeuristicExtractor` reads user turns (or every named speaker's in a
conversation between people) through :mod:`~hindsight.extract.heuristic.statements`,
tool turns through :mod:`~hindsight.extract.heuristic.tools`, and pins a relative time
at a statement's end to the date it meant. :func:`events` and :func:`triggers` tell
what a turn does (corrects the assistant, reports a failure, completes a task) for
working memory to consolidate on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hindsight.extract.base import Extracted
from hindsight.extract.heuristic import tools
from hindsight.extract.heuristic.sentences import QUESTION, SYSTEMISH, normalise, split_sentences
from hindsight.extract.heuristic.statements import corrected, user_text
from hindsight.extract.heuristic.wording import regex
from hindsight.models import Kind, Tag, Turn
from hindsight.text.timewords import pinned

_USER_ROLES = frozenset({"user", "human"})
_SKIP_ROLES = frozenset({"system", "developer"})
_TOOL_ROLES = frozenset({"tool", "function", "tool_result", "ipython"})
_SLACK = 40  # content may exceed the input by the subject's name plus this


def events(turn: Turn) -> frozenset[Tag]:
    """The events a turn states, found without extracting the rest of it: a failed tool
    call, or the user correcting the assistant (the same :class:`Tag` that extraction
    gives the turn when it stands alone)."""
    role = turn.role.strip().lower()
    if role in _TOOL_ROLES:
        failed = bool(turn.content.strip()) and tools.failed(turn.content)
        return frozenset({Tag.TOOL_FAILURE}) if failed else frozenset()
    if role not in _USER_ROLES or SYSTEMISH.match(turn.content):
        return frozenset()
    name = (turn.speaker or "User").strip() or "User"
    corrects = any(
        corrected(sentence, name)
        for sentence, correcting in split_sentences(turn.content, to_assistant=True)
        if correcting
    )
    return frozenset({Tag.CORRECTION}) if corrects else frozenset()


_DONE = regex(
    r"\b(?:(?:the )?task (?:is )?(?:done|complete|completed|finished)|"
    r"(?:all|we are|i am|that is|it is) (?:done|finished|sorted)(?! with)\b|"
    r"(?:completed|finished) (?:successfully|the task)|"
    r"successfully (?:completed|finished|deployed|merged|submitted|booked|sent)|"
    r"that (?:works|worked|did it|did the trick|fixed it)|"
    r"(?:problem|issue|bug) (?:is )?(?:solved|resolved|fixed))\b"
)


def triggers(turn: Turn) -> frozenset[str]:
    """Why a turn moves its session's working memory to long-term memory at once: its
    :func:`events` (a correction, a tool failure), a preference stated (what the
    extractor would keep as one), or a task completed ("that works", "all done",
    "successfully deployed"). Found by pattern; a false alarm only consolidates early."""
    found = {str(t) for t in events(turn)}
    role = turn.role.strip().lower()
    text = normalise(turn.content)
    if role not in _SKIP_ROLES and _DONE.search(text) and not QUESTION.match(text):
        found.add("task_completed")
    if role in _USER_ROLES and any(
        e.kind is Kind.PREFERENCE for e in HeuristicExtractor().extract([turn], subject="User")
    ):
        found.add("preference_stated")
    return frozenset(found)


class HeuristicExtractor:
    """Rule-based extraction: deterministic, offline and fast."""

    name = "heuristic"

    def extract(self, turns: Sequence[Turn], *, subject: str) -> list[Extracted]:
        multi_party = len({t.speaker for t in turns if t.speaker}) >= 2
        out: list[Extracted] = []
        for index, turn in enumerate(turns):
            seen: set[str] = set()
            for found in self._turn(turn, subject, multi_party):
                if found.content not in seen:
                    seen.add(found.content)
                    out.append(replace(found, turn_index=index))
        return out

    def _turn(self, turn: Turn, subject: str, multi_party: bool) -> list[Extracted]:
        role = turn.role.strip().lower()
        if role in _TOOL_ROLES:
            return tools.read(turn.content, turn.tool_name or turn.speaker)
        if role in _SKIP_ROLES or not (role in _USER_ROLES or (multi_party and turn.speaker)):
            return []
        name = (turn.speaker or subject).strip() or "User"
        limit = len(turn.content) + len(name) + _SLACK
        found = [
            e
            for e in user_text(turn.content, name, to_assistant=not multi_party)
            if len(e.content) <= limit
        ]
        if turn.observed_at is None:
            return found
        # "... last week" would mean another week when read later: say which week
        return [replace(e, content=pinned(e.content, turn.observed_at)) for e in found]
