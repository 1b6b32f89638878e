"""People's names as a query spells them, matched to the names a store knows.

A question spells a person as its writer does ("Mohammed", "Faheem") while the turns
carry the speaker's own spelling ("Muhhamed", "Fahim Khan"): neither channel matches
the name then, and the name is often what tells the right turn from another. A query
word that is capitalised, is not a known name, and sounds like one (the same consonant
skeleton, or one or two letters apart) or is one of its forms ("Mike" for "Michael",
"Deborah" for "Deb", "Mo" for "Muhhamed") is read as that name.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import Final

__all__ = ["family", "is_given_name", "may_name", "resolve", "same_person", "skeleton"]

_WORD: Final = re.compile(r"[^\W\d_]+")  # "Caroline's": the name, then "s"
_VOWELS: Final = frozenset("aeiouy")
_SAME_SOUND: Final = {"c": "k", "q": "k"}
MIN_LENGTH: Final = 4  # shorter words are too often something else ("Ann", "Ben")

# Given names and the short forms people call each other by, one name to a line. A short
# form of several names ("Alex", "Chris") stands for each of them; two short forms of one
# name ("Mike", "Mick") are one person.
_SHORT_FORMS: Final = """
abigail abby abbie gail
alexander alex alec xander
alexandra alex lexi sandra
alfred alf alfie fred
alison ali ally allie
amanda mandy manda
andrew andy drew
angela angie
anthony tony
arthur art artie
barbara barb babs
bartholomew bart barty
benjamin ben benji benny
bradley brad
brian bri
catherine cathy cat kate katie
charles charlie chuck chaz
charlotte lottie charlie
christina chris tina christy
christine chris chrissy
christopher chris topher kit
cynthia cindy
daniel dan danny
daniela dani
david dave davey
deborah deb debbie debs
donald don donnie
dorothy dot dottie
douglas doug
edward ed eddie ted teddy ned
eleanor ellie nell nora
elizabeth liz lizzie beth betty eliza libby
emily em emmy
frances fran frankie
francis frank frankie
frederick fred freddie
gabriel gabe
gabriella gabby gabi
gerald gerry jerry
gregory greg
harold harry hal
henry harry hank hal
isabella izzy bella isa
isabelle izzy belle
jacob jake jakey
james jim jimmy jamie jay
jennifer jen jenny jenn
jessica jess jessie
joanna jo jojo
john jon johnny jack
jonathan jon jonny
joseph joe joey jos
josephine jo josie
joshua josh
katherine kathy kate katie kat kit
kathleen kathy kate katie
kenneth ken kenny
kimberly kim
lawrence larry laurie
leonard leo len lenny
lucas luke
madeline maddie maddy
madison maddie maddy
margaret maggie meg peggy marge
matthew matt matty
melanie mel
melissa mel mellie missy
michael mike mikey mick mickey
michelle shelly
muhammad mo moe
nathan nate
nathaniel nate nat
nicholas nick nicky
nicole nicky nikki
oliver ollie
olivia liv livvy
patricia pat patty trish
patrick pat paddy
peter pete
philip phil pip
rebecca becky becca
richard rick ricky rich dick
robert rob robbie bob bobby bert
ronald ron ronnie
samantha sam sammy
samuel sam sammy
sarah sally sadie
sophia sophie
stephanie steph stephie
stephen steve stevie
steven steve stevie
susan sue susie suzy
theodore theo ted teddy
thomas tom tommy
timothy tim timmy
valerie val
victoria vicky tori
vincent vince vinny
walter walt wally
william will bill billy liam
zachary zach zack
"""


@functools.lru_cache(maxsize=4096)
def skeleton(name: str) -> str:
    """How a name sounds, roughly: lower-cased, without diacritics, ``h`` dropped (so
    often silent or doubled in a spelling), c/k/q one sound, each run of vowels one
    ``*``, a doubled letter once, a final vowel dropped. "Muhhamed", "Mohammed" and
    "Muhammad" are all "m*m*d", "Faheem" and "Fahim" "f*m", "Maddie" "m*d"."""
    plain = unicodedata.normalize("NFKD", name.lower())
    out: list[str] = []
    for c in plain:
        if not c.isalpha() or unicodedata.combining(c) or c == "h":
            continue
        c = "*" if c in _VOWELS else _SAME_SOUND.get(c, c)
        if not out or out[-1] != c:
            out.append(c)
    if len(out) > 1 and out[-1] == "*":
        out.pop()
    return "".join(out)


def _families() -> dict[str, frozenset[str]]:
    """Each name of the table -> the full names it may stand for (a full name: itself)."""
    out: dict[str, set[str]] = {}
    for line in _SHORT_FORMS.strip().splitlines():
        full, *short = line.split()
        out.setdefault(full, set()).add(full)
        for word in short:
            out.setdefault(word, set()).add(full)
    return {name: frozenset(fulls) for name, fulls in out.items()}


_FAMILIES: Final = _families()


def _by_skeleton() -> dict[str, frozenset[str]]:
    """The table's names by their skeletons, those long enough to tell a name by
    ("m*k*l": "michael"; "j*n" is John, Jean, Joan and June)."""
    out: dict[str, set[str]] = {}
    for name, fulls in _FAMILIES.items():
        if len(skeleton(name)) >= MIN_LENGTH:
            out.setdefault(skeleton(name), set()).update(fulls)
    return {key: frozenset(fulls) for key, fulls in out.items()}


_BY_SKELETON: Final = _by_skeleton()


def _family(name: str) -> frozenset[str]:
    """The full names lower-cased ``name`` may stand for: by the table, else by the
    table's spelling that sounds the same ("muhhamed": "muhammad"); empty if neither."""
    if name in _FAMILIES:
        return _FAMILIES[name]
    return _BY_SKELETON.get(skeleton(name), frozenset())


def is_given_name(word: str) -> bool:
    """Whether ``word`` is a given name of the table, or a short form of one."""
    return word.lower() in _FAMILIES


def family(word: str) -> frozenset[str]:
    """The full given names ``word`` may stand for (lower-cased; empty if none known)."""
    return _family(word.lower())


def _distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, or ``limit + 1`` once it must exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def same_person(word: str, name: str) -> bool:
    """Whether lower-cased ``word`` may be ``name`` (lower-cased, known to the store)."""
    if not _family(word).isdisjoint(_family(name)):
        return True  # "mike" and "michael", "mike" and "mick", "mo" and "muhhamed"
    return min(len(word), len(name)) >= MIN_LENGTH and _sounds_alike(word, name)


def _sounds_alike(a: str, b: str) -> bool:
    limit = 1 if min(len(a), len(b)) < 7 else 2
    if _distance(a, b, limit) <= limit:
        return True
    return skeleton(a) == skeleton(b)


# Capitalised words that open a question or a request, not names: a query of only these
# needs no names looked up.
_OPENERS: Final = frozenset(
    {
        "what",
        "when",
        "where",
        "which",
        "whom",
        "whose",
        "does",
        "have",
        "were",
        "would",
        "could",
        "should",
        "will",
        "tell",
        "give",
        "list",
        "describe",
        "show",
        "find",
        "remind",
    }
)


def may_name(query: str) -> bool:
    """Whether ``query`` has a word that may be a person's name (capitalised, long enough
    or a name's short form, not a word questions open with): only then is it worth the
    store's names."""
    return any(
        w[0].isupper()
        and w.lower() not in _OPENERS
        and (len(w) >= MIN_LENGTH or w.lower() in _FAMILIES)
        for w in _WORD.findall(query)
    )


def resolve(query: str, names: Iterable[str]) -> str:
    """``query`` with each capitalised word that is no known name but sounds like one
    replaced by that name's spelling, or by the name it is a short form of (or the short
    form the store knows); ``query`` itself when nothing matches.

    ``names`` are full names as the store holds them ("Fahim Khan"); each of their words
    counts ("Khan" alone). A word close to two different names is left alone.
    """
    known: dict[str, str] = {}
    for name in names:
        for part in _WORD.findall(name):
            if len(part) >= MIN_LENGTH or part.lower() in _FAMILIES:
                known.setdefault(part.lower(), part)
    if not known:
        return query

    def spelled(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        if not word[0].isupper() or lower in known or lower in _OPENERS:
            return word
        alike = {known[k] for k in known if same_person(lower, k)}
        return alike.pop() if len(alike) == 1 else word

    return _WORD.sub(spelled, query)
