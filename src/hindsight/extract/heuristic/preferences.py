"""Preferences in a clause: favourites, likes and dislikes, "X over Y", and instructions.

Each rule reads one first-person clause and returns what it states about the speaker,
or nothing: "I love hiking" (a taste the later "I now hate hiking" supersedes), "my
favourite band is Muse", "I prefer tea over coffee", "always answer in French" (an
instruction to the assistant, with the requests it governs when it names them).
"""

from __future__ import annotations

import re

from hindsight.extract.base import Extracted
from hindsight.extract.heuristic.wording import (
    NO_STOP,
    PAST,
    Spec,
    cut_value,
    hit,
    regex,
    third_person,
    third_verb,
    word_set,
)
from hindsight.models import Kind

_ADV = (
    r"(?:(?:really|absolutely|just|truly|totally|also|do|genuinely|simply|kind of|kinda|still|"
    r"always|definitely|much|generally|usually|strongly|honestly|actually|now|nowadays) )*"
)
_FAV = r"my (?:all[- ]time |absolute )?favou?rite (?P<cat>(?!thing about|part)[\w -]{1,30}?)"
_FAV_HINTS = ("{name}'s favourite {cat}", "favourite {cat}")
FAVOURITE = tuple(
    Spec(
        regex(p),
        "{name}'s favourite {cat} is {val}",
        Kind.PREFERENCE,
        "favourite:{cat}",
        _FAV_HINTS,
    )
    for p in (rf"^{_FAV} (?:is|are) (?P<val>.+)$", rf"^(?P<val>.+?) (?:is|are) {_FAV}$")
)
RATHER = Spec(
    regex(r"^i would (?:much )?rather (?P<val>.+)$"),
    "{name} would rather {val}",
    Kind.PREFERENCE,
    hints=("what does {name} prefer",),
    confidence=0.8,
)
_DISLIKE = regex(
    r"^i " + _ADV + r"(?P<verb>hate|dislike|detest|loathe|despise|cannot stand|do not like|"
    r"do not enjoy|do not care for|am not (?:a |really )?(?:big |huge )?(?:fan of|into)) "
    r"(?P<val>.+)$"
)
_HATES = word_set("hate detest loathe despise")
_DIRECTIVE = regex(
    r"^(?:please,? )?(?:(?:you should|you must|make sure to|be sure to) )?(?P<w>always|never) "
    r"(?P<rest>.+?)(?:,? please)?$|^(?:from now on|going forward|in (?:the )?future),? "
    r"(?:please,? )?(?P<w2>)(?P<rest2>(?!i\b).+)$"
)
_NOT_ACTION = regex(r"^(?:happy|glad|ready|here|there|good|great|fun|nice|so|such|a|an|the)\b")
_WHEN_ASKED = regex(
    r"\b(?:when(?:ever)?|if) (?:i|we) (?:ask|talk|inquire|am asking|are asking|need help)"
    r"(?: you)? (?:about|for|with|on) (?P<topic>.+?)[.!]*$"
)
_PREFER_OVER = regex(
    r"^i " + _ADV + r"prefer (?!to\b)(?P<x>.+?) (?P<sep>over|to|rather than|instead of|more than) "
    r"(?P<y>.+)$"
)
# "prefer X to Y" compares like with like ("walking to driving", "tea to coffee"); "prefer
# batches of five to manage replies" names a purpose, not a rival
_PURPOSE = frozenset(
    """keep make get help avoid ensure maintain manage understand improve reduce increase save
    stay learn see grasp focus build meet stick track boost fit catch cut""".split()  # noqa: SIM905
)
_LIKE = regex(
    r"^i " + _ADV + r"(?P<verb>like|love|enjoy|adore|prefer|am (?:really )?into|am (?:a |an )?"
    r"(?:big |huge |massive |great |avid )?fan of|am passionate about) (?P<val>.+)$"
)
_LIST = re.compile(r"[\w' -]{1,30}(?:, [\w' -]{1,30})*,? (?:and|or) [\w' -]{1,30}[.!]*")
# "I love that idea", "I like the second option": about this chat, not the user
_DEICTIC = regex(
    r"(?:that|this|it|how|what|the way|your|you|those|these)\b|(?:the|that|this) (?:\w+ )?"
    r"(?:one|option|version|answer|response|suggestion|idea|approach|solution)s?\b"
)


def dislike(text: str, name: str) -> list[Extracted]:
    """ "I hate X", "I cannot stand X", "I am not a fan of X": a dislike."""
    if not (m := _DISLIKE.match(text)) or not (val := cut_value(m["val"])) or _DEICTIC.match(val):
        return []
    verb = m["verb"].lower()
    said = "hates" if verb in _HATES else "can't stand" if verb == "cannot stand" else "dislikes"
    hints = (f"what does {name} dislike", f"{name} dislikes")
    return hit(
        Kind.PREFERENCE,
        f"{name} {said} {third_person(val)}",
        attribute=_taste(val),
        value=val,
        hints=hints,
        polarity=-1,
    )


def directive(text: str, name: str) -> list[Extracted]:
    """ "Always X", "never X", "from now on X": an instruction to the assistant."""
    if not (m := _DIRECTIVE.match(text)):
        return []
    word = (m["w"] or "").lower()
    raw = m["rest"] or m["rest2"]
    if not (rest := cut_value(raw)) or PAST.match(rest) or _NOT_ACTION.match(rest):
        return []  # "Never saw this coming!", "Always happy to help!": no instruction
    action = f"{word} {third_person(rest)}".strip()
    hints: tuple[str, ...] = ("how should the assistant respond", f"{name}'s instructions")
    polarity = -1 if word == "never" else 1
    content = f"{name} wants the assistant to {action}"
    # "... when I ask about deadlines": when it applies is what a later request matches
    applies_when = None
    if (when := _WHEN_ASKED.search(raw)) and (topic := cut_value(when["topic"])):
        applies_when = third_person(topic)
        content += f" when {name} asks about {applies_when}"
        hints = (topic, *hints)
    return hit(Kind.PREFERENCE, content, hints=hints, polarity=polarity, applies_when=applies_when)


def prefer_over(text: str, name: str) -> list[Extracted]:
    """ "I prefer X over Y" (or to, rather than, instead of Y)."""
    if not (m := _PREFER_OVER.match(text)):
        return []
    if not (x := cut_value(m["x"], max_words=8)) or not (y := cut_value(m["y"], max_words=8)):
        return []
    if x != m["x"].strip():
        return []  # X ended at a clause boundary: what follows does not compare with it
    if m["sep"].lower() == "to" and not _rivals(x, y):
        return []
    hints = (f"what does {name} prefer", f"{x} or {y}")
    content = f"{name} prefers {third_person(x)} over {third_person(y)}"
    return hit(Kind.PREFERENCE, content, value=x, hints=hints)


def _rivals(x: str, y: str) -> bool:
    """Whether "prefer X to Y" compares two things of a kind rather than giving a purpose."""
    first_x, first_y = x.split()[0].lower(), y.split()[0].lower()
    if first_y in _PURPOSE or first_y.endswith("ly"):
        return False
    return first_x.endswith("ing") == first_y.endswith("ing")


def like(text: str, name: str) -> list[Extracted]:
    """ "I love X", "I am into X", "I am a big fan of X": a like."""
    if not (m := _LIKE.match(text)):
        return []
    val = cut_value(m["val"], NO_STOP) if _LIST.fullmatch(m["val"]) else cut_value(m["val"])
    if not val or _DEICTIC.match(val):
        return []
    verb = m["verb"].lower()
    said = "is " + verb[3:] if verb.startswith("am ") else third_verb(verb)
    hints = (f"what does {name} like", f"{name} likes")
    return hit(
        Kind.PREFERENCE,
        f"{name} {said} {third_person(val)}",
        attribute=_taste(val),
        value=val,
        hints=hints,
    )


def _taste(value: str) -> str:
    """The slot a like or dislike fills: "I hate coffee" then "I now love coffee" change
    one taste (the later supersedes the earlier), where "I love tea" is another."""
    return f"taste:{value.lower()}"
