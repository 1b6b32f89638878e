"""A data set as people type on a phone: shorthand, stretched words, dropped capitals and
apostrophes, and typos; :func:`chat_typed`."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Final

from hindsight.bench.datasets.shape import BenchTurn, Conversation, Dataset, Session

# How people type on a phone, for chat_typed: shorthand for common words, letters
# stretched for emphasis, dropped capitals and apostrophes, and typos of the four kinds
# the spelling-error literature counts (a letter left out, doubled, swapped with the
# next, or hit beside on the keyboard).
_SHORTHAND: Final = {
    plain: short
    for plain, short in (
        pair.split(":")
        for pair in (  # noqa: SIM905
            "you:u|your:ur|you're:ur|are:r|with:w|because:bc|tomorrow:tmrw|tonight:tonite|"
            "birthday:bday|please:pls|thanks:thx|really:rly|though:tho|picture:pic|pictures:pics|"
            "people:ppl|about:abt|something:smth|probably:prob|definitely:def|favorite:fave|"
            "favourite:fave|awesome:awsm|before:b4|great:gr8|okay:ok|going to:gonna|want to:wanna|"
            "got to:gotta|kind of:kinda|right now:rn|i don't know:idk|to be honest:tbh|"
            "by the way:btw|oh my god:omg|boyfriend:bf|girlfriend:gf|brother:bro|sister:sis|"
            "video:vid|vacation:vacay|conversation:convo|information:info|minutes:mins|"
            "seriously:srsly"
        ).split("|")
    )
}
_SHORTHAND_RE: Final = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _SHORTHAND), key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_STRETCHABLE: Final = re.compile(
    r"\b(so|yes|wow|omg|love|cool|nice|good|great|lol|yay|hey|hi|no|please|thanks|sure|"
    r"amazing|awesome|fun|happy|sorry|glad|oh|ok|okay|hmm|aww|yeah|wait)\b",
    re.IGNORECASE,
)
_KEYBOARD: Final = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_KEYS: Final = {
    key: (row, col) for row, keys in enumerate(_KEYBOARD) for col, key in enumerate(keys)
}
_NEIGHBOURS: Final = {
    key: "".join(
        other
        for other, (r, c) in _KEYS.items()
        if other != key and abs(r - row) <= 1 and abs(c - col) <= 1
    )
    for key, (row, col) in _KEYS.items()
}
_LONG_WORD: Final = re.compile(r"\b[A-Za-z]{4,}\b")


@dataclass(frozen=True, slots=True)
class Typing:
    """How often each habit of chat typing strikes (chat_typed)."""

    lower: float = 0.5  # a message typed all in lower case, its last full stop left out
    apostrophe: float = 0.5  # a message's apostrophes left out ("dont", "im")
    shorthand: float = 0.5  # a word that has a shorthand typed as it ("u", "bday")
    stretch: float = 0.2  # an interjection stretched ("sooo", "yesss")
    typo: float = 0.03  # a word of four letters or more typed wrong once


def chat_typed(data: Dataset, typing: Typing | None = None, *, seed: int = 0) -> Dataset:
    """``data`` as people type on a phone (see :class:`Typing`); questions stay as written,
    as a question writer writes them. Each turn's noise depends on ``seed`` and its id
    alone, so a run is repeatable and a turn types the same in any subset."""
    typing = typing or Typing()

    def retype(turn: BenchTurn) -> BenchTurn:
        rng = random.Random(f"{seed}:{turn.turn_id}")
        text = _SHORTHAND_RE.sub(
            lambda m: (
                _SHORTHAND[m.group(1).lower()] if rng.random() < typing.shorthand else m.group(1)
            ),
            turn.text,
        )
        text = _STRETCHABLE.sub(
            lambda m: _stretch(m.group(1), rng) if rng.random() < typing.stretch else m.group(1),
            text,
        )
        text = _LONG_WORD.sub(
            lambda m: _typo(m.group(0), rng) if rng.random() < typing.typo else m.group(0), text
        )
        if rng.random() < typing.apostrophe:
            text = text.replace("'", "").replace("\u2019", "")
        if rng.random() < typing.lower:
            text = text.lower().removesuffix(".")
        return replace(turn, text=text)

    conversations = [
        Conversation(
            conv.id,
            [Session(s.id, [retype(t) for t in s.turns]) for s in conv.sessions],
            list(conv.questions),
            Counter(conv.skipped),
            Counter(conv.repaired),
        )
        for conv in data.conversations
    ]
    return Dataset(f"{data.name}-typed", conversations)


def _stretch(word: str, rng: random.Random) -> str:
    return word + word[-1] * rng.randint(2, 4)


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word))  # people rarely miss a word's first letter
    kind = rng.randrange(4)
    if kind == 0:  # left out
        return word[:i] + word[i + 1 :]
    if kind == 1:  # doubled
        return word[:i] + word[i] + word[i:]
    if kind == 2 and i < len(word) - 1 and word[i] != word[i + 1]:  # swapped with the next
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return word[:i] + rng.choice(_NEIGHBOURS[word[i].lower()]) + word[i + 1 :]
