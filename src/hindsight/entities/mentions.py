"""Who and what a text names, read without a model: people, places, organisations,
pets and projects, the roles they are given ("my uncle", "Anna's husband", "Bart from
accounting") and the relations a sentence states between them ("Tom coaches the
Falcons", "my niece lives in Gdańsk").

Names are capitalised words. A capitalised word that opens a sentence is a name only
when the name table knows it, or when it is also found inside a sentence (the graph
decides: such a mention is ``weak``). Kinds come from the words around a name ("works
at", "lives in", "my dog"), else from the name table (a given name is a person).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

from hindsight.text.names import is_given_name

__all__ = ["Link", "Mention", "read", "role_word"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# A name: capitalised words (O'Brien, Anne-Marie), an initial ("B. Nowak"), up to four.
_UPPER: Final = "".join(chr(c) for c in range(0x41, 0x250) if chr(c).isupper())
_WORD: Final = (
    rf"(?:[{_UPPER}](?:['\u2019][{_UPPER}])?[^\W\d_]+(?:-[{_UPPER}][^\W\d_]+)?|[{_UPPER}]\.)"
)
_PARTICLE: Final = r"(?:de|da|del|della|van|von|der|den|la|le|di|du|dos|das|al|el|bin|ibn)"
_NAME: Final = rf"{_WORD}(?:[ \t]+(?:{_PARTICLE}[ \t]+)?{_WORD}){{0,3}}"  # Rio de Janeiro
_ACRONYM: Final = r"[A-Z]{2,6}\b"

KIN: Final = _words(
    """
    uncle aunt niece nephew sister brother mom mum mother dad father son daughter wife
    husband partner cousin grandma grandmother grandpa grandfather granddaughter
    grandson stepmom stepmother stepdad stepfather stepson stepdaughter fiancé fiance
    fiancée fiancee girlfriend boyfriend sister-in-law brother-in-law mother-in-law
    father-in-law son-in-law daughter-in-law godmother godfather goddaughter godson
    """
)
SOCIAL: Final = _words(
    """
    friend boss colleague coworker co-worker neighbor neighbour roommate flatmate coach
    doctor therapist manager teacher mentor landlord landlady dentist classmate tutor
    trainer assistant supervisor gp instructor buddy pal housemate nanny babysitter vet
    lawyer accountant pastor priest nurse physio physiotherapist counsellor counselor
    surgeon optician hairdresser barber cleaner builder plumber electrician mechanic
    teammate bandmate bridesmaid client student pupil captain director editor agent
    """
)
PETS: Final = _words(
    """
    dog cat puppy kitten parrot hamster horse pony rabbit bunny turtle tortoise snake
    lizard budgie ferret goldfish
    """
)
RELATIVES: Final = KIN | SOCIAL | PETS  # roles one has to someone: "my uncle", "Anna's dog"
_ROLES: Final = "|".join(sorted(RELATIVES, key=len, reverse=True))
_ADJECTIVES: Final = (
    r"(?:(?:older|younger|little|big|late|best|new|old|eldest|oldest|youngest|baby|twin|"
    r"dear|favourite|favorite|future|former|ex)[ -])?"
)
_TITLES: Final[dict[str, str | None]] = {
    "uncle": "uncle",
    "aunt": "aunt",
    "auntie": "aunt",
    "grandma": "grandmother",
    "granny": "grandmother",
    "nana": "grandmother",
    "grandpa": "grandfather",
    "cousin": "cousin",
    "coach": "coach",
    "dr": "doctor",
    "doctor": "doctor",
    "professor": "professor",
    "prof": "professor",
    "mr": None,
    "mrs": None,
    "ms": None,
    "miss": None,
}
_TITLE_WORDS: Final = "|".join(t.capitalize() for t in sorted(_TITLES, key=len, reverse=True))
_SAME: Final = {"mum": "mother", "mom": "mother", "dad": "father", "grandma": "grandmother",
                "grandpa": "grandfather", "neighbour": "neighbor", "co-worker": "coworker",
                "fiance": "fiancé", "fiancee": "fiancé", "fiancée": "fiancé", "bunny": "rabbit",
                "puppy": "dog", "kitten": "cat"}  # fmt: skip

# Capitalised words that are not names of anything a page is kept for.
_NOT_NAMES: Final = _words(
    """
    i i'm i've i'd i'll im the a an my our your his her their its this that these those
    there here it he she we they you me us them hi hey hello thanks thank yes no ok okay
    oh well so but and or also just what when where who whom whose why how which today
    tomorrow yesterday tonight monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november
    december mr mrs ms dr if then after before since because maybe sure great good nice
    wow haha lol omg please sorry let let's do did does is are was were have has had can
    could would should will not never always sometimes anyway actually really as at in
    on for with from to of by about by every some any all each both one two three first
    last next new old other another such mon tue tues wed thu thur thurs fri sat sun jan
    feb mar apr jun jul aug sep sept oct nov dec yeah yea yep yup nope woohoo woo yay
    hooray congrats congratulations bye goodbye aww aw awesome cool amazing ooh ah
    hahaha cheers glad love welcome morning evening night dear hmm um true totally
    definitely absolutely exactly right wait happy merry
    """
) | frozenset(_TITLES)  # a title alone ("Prof.") names no one
# Kinship words people write as names ("Mum", "Grandpa").
_KIN_NAMES: Final = {
    "mum": "mother", "mom": "mother", "mama": "mother", "mummy": "mother",
    "mommy": "mother", "dad": "father", "daddy": "father", "papa": "father",
    "grandma": "grandmother", "granny": "grandmother", "nana": "grandmother",
    "nan": "grandmother", "grandpa": "grandfather", "grandad": "grandfather",
    "granddad": "grandfather",
}  # fmt: skip
# Words a name spoken to follows ("Hey Caroline", "Thanks Mel").
_CALLS: Final = _words(
    """
    hey hi hello thanks thank congrats congratulations bye goodbye woohoo yay wow aww aw
    dear sorry morning night welcome cheers yo oh ok okay yes no love miss
    """
)
# Given names that are words too ("Art is my escape"): opening a sentence, not a name
# unless it is one elsewhere.
_WORD_NAMES: Final = _words(
    """
    art will bill pat rob bob sue may jack mark grace faith hope joy ray rose dawn frank
    carol gene don ken max sky summer autumn june april august penny ruby amber holly ivy
    lily daisy chase hunter guy drew
    """
)

_SUFFIX_ORG: Final = re.compile(
    r"\b(?:Inc|Ltd|LLC|Corp|Company|University|College|School|Academy|Hospital|Clinic|"
    r"Bank|Club|FC|United|Rovers|Group|Labs|Studio|Studios|Institute|Foundation|Church|"
    r"Association|Society|Agency|Bakery|Cafe|Café|Restaurant|Gym|Team)\.?$"
)
_SUFFIX_PLACE: Final = re.compile(
    r"\b(?:Street|St|Avenue|Ave|Road|Rd|Park|Lake|River|Mountain|Mountains|Beach|Bay|"
    r"Island|Islands|City|County|Valley|Square)\.?$"
)

# A verb before a name that says what the name is, and the relation it states.
_ORG_VERBS: Final = (
    r"(?P<verb>works? (?:at|for|with)|worked (?:at|for)|working (?:at|for)|job at|"
    r"employed (?:at|by)|interns? at|interning at|volunteers? at|volunteering at|joined|"
    r"coaches|coached|coaching|plays? for|played for|playing for|studies at|studied at|"
    r"studying at|teaches at|taught at|goes to school at|attends|attended|manages|managed|"
    r"runs|owns|founded|signed with)"
)
_PLACE_VERBS: Final = (
    r"(?P<verb>lives? in|lived in|living in|moved to|moving to|moves to|born in|grew up in|"
    r"raised in|based in|stays? in|stayed in|staying in|visited|visiting|trip to|"
    r"travell?ed to|travell?ing to|flew to|flying to|drove to|vacation in|holiday in|"
    r"went to|going to|headed to|heading to|from)"
)
_WHO: Final = ("person", "other")  # what "she" may be
_JOB: Final = (
    r"(?P<verb>(?:is|as|was|am|became|'s)[ \t]+(?:a|an|the)[ \t]+(?:[a-z-]+[ \t]+){0,2}"
    r"(?:at|for|with))"
)
_PERSON_VERBS: Final = (
    r"(?P<verb>married|is married to|got married to|is engaged to|got engaged to|is dating|"
    r"dates|started dating|is friends with|works with|lives with|mentors|babysits|"
    r"divorced|adopted)"
)
_RELATION_OF: Final = {
    "lives in": "lives in", "lived in": "lived in", "living in": "lives in",
    "moved to": "lives in", "moving to": "lives in", "moves to": "lives in",
    "based in": "lives in", "born in": "born in", "grew up in": "grew up in",
    "raised in": "grew up in", "from": "from",
    "married": "married", "is married to": "married", "got married to": "married",
    "is engaged to": "engaged to", "got engaged to": "engaged to", "is dating": "dating",
    "dates": "dating", "started dating": "dating", "is friends with": "friends with",
    "coaches": "coaches", "coached": "coached", "coaching": "coaches",
    "joined": "member of", "plays for": "plays for", "play for": "plays for",
    "played for": "played for", "playing for": "plays for", "manages": "manages",
    "managed": "managed", "runs": "runs", "owns": "owns", "founded": "founded",
    "attends": "attends", "attended": "attended", "signed with": "plays for",
}  # fmt: skip
# Where a sentence ends: not after an initial or a title ("B. Nowak", "Dr. Chen").
_END: Final = re.compile(
    r"(?<!\b[A-Z])(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bSt)(?<!\bProf)(?<!\bJr)"
    r"(?<!\bSr)(?<!\bMt)[.!?]+(?=\s|$)|\n"
)
_BEFORE: Final = re.compile(
    rf"(?P<name>{_NAME})[ \t]+(?:(?:has|had|just|recently|also|still|now|finally|then|"
    rf"who|which|that|is|was)[ \t]+)*$"
)
_PRONOUN: Final = re.compile(
    r"\b(?:[Hh]e|[Ss]he)[ \t]+(?:(?:has|had|just|recently|also|still|now|finally|then|is|was)"
    r"[ \t]+)*$"
)
_I: Final = re.compile(r"\b(?:I|I'm|I've|I'd|we|We)\b")


@dataclass(frozen=True, slots=True)
class Mention:
    """One naming of an entity in a text.

    ``name`` is the name without a title ("Bart" of "Uncle Bart"); empty for a role
    named by no name ("my niece"). ``role`` is what it is to ``of`` (None: to whoever
    speaks): a kinship or social word, a pet's species, or what tells it apart ("from
    accounting": ``"accounting"``). ``weak``: a capitalised word opening a sentence,
    kept only if it is named elsewhere too. ``addressed``: the one spoken to ("Thanks,
    Mel!"), which says nothing of them.
    """

    surface: str
    name: str
    kind: str
    start: int
    role: str | None = None
    of: str | None = None
    weak: bool = False
    addressed: bool = False


@dataclass(frozen=True, slots=True)
class Link:
    """A relation a text states: mention ``subject`` (-1: the speaker) to ``object``."""

    subject: int
    relation: str
    object: int


def _kind_of(name: str) -> str:
    if _SUFFIX_ORG.search(name):
        return "organization"
    if _SUFFIX_PLACE.search(name):
        return "place"
    first = name.split()[0].rstrip(".")
    return "person" if is_given_name(first) else "other"


def _trimmed(name: str) -> str:
    """A name without the sentence words a capitalised run swept up ("Monday Anna")."""
    words = name.split()
    while words and words[0].lower() in _NOT_NAMES:
        words.pop(0)
    while words and words[-1].lower() in _NOT_NAMES:
        words.pop()
    return " ".join(words)


class _Reader:
    """The mentions and links of one text, each mention once (the first reading of a
    span wins: the patterns run from the most telling to the least)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.mentions: list[Mention] = []
        self.links: list[Link] = []
        self._spans: dict[tuple[int, int], int] = {}

    def add(
        self,
        name: str,
        start: int,
        kind: str,
        *,
        role: str | None = None,
        of: str | None = None,
        weak: bool = False,
        addressed: bool = False,
        surface: str | None = None,
    ) -> int | None:
        """The mention of ``name`` found at or after ``start``: new, or the one read
        already over that span, given the role and kind it lacked."""
        name = _trimmed(name)
        if not name or name.lower() in _NOT_NAMES:
            return None
        start = self.text.find(name, start)
        span = (start, start + len(name))
        for (a, b), index in self._spans.items():
            if a < span[1] and span[0] < b:  # read already: keep what it said, add to it
                old = self.mentions[index]
                if role and old.role is None:
                    old = replace(old, role=role, of=of)
                if old.kind == "other" and kind != "other":
                    old = replace(old, kind=kind)
                self.mentions[index] = old
                return index
        self.mentions.append(Mention(surface or name, name, kind, start, role, of, weak, addressed))
        self._spans[span] = len(self.mentions) - 1
        return len(self.mentions) - 1

    def subject_before(self, at: int, sentence: tuple[int, int]) -> int | None:
        """Who a verb at ``at`` is said of: the last person (or role) named before it in
        its sentence, the speaker (-1) when "I" comes after that, else None."""
        before = _BEFORE.search(self.text, sentence[0], at)
        if before is not None and _trimmed(before["name"]):
            return self.add(before["name"], before.start("name"), _kind_of(before["name"]))
        if _PRONOUN.search(self.text, sentence[0], at):  # "she lives in Kraków": the last
            people = [i for i, m in enumerate(self.mentions) if m.kind in _WHO and m.name]
            earlier = [i for i in people if self.mentions[i].start < at]
            return max(earlier, key=lambda i: self.mentions[i].start) if earlier else None
        best = None
        for index, m in enumerate(self.mentions):
            if (
                sentence[0] <= m.start < at
                and m.kind in ("person", "pet", "other")
                and (best is None or m.start > self.mentions[best].start)
            ):
                best = index
        pronoun = None
        for match in _I.finditer(self.text, sentence[0], at):
            pronoun = match.start()
        if pronoun is not None and (best is None or pronoun > self.mentions[best].start):
            return -1
        return best


def read(text: str) -> tuple[list[Mention], list[Link]]:
    """The mentions of ``text`` and the relations it states between them."""
    r = _Reader(text)
    start = 0
    for end in _END.finditer(text):
        _sentence(r, start, end.end())
        start = end.end()
    if text[start:].strip():
        _sentence(r, start, len(text))
    return r.mentions, r.links


def role_word(word: str) -> str:
    """A role as pages keep it: "mum" and "neighbour" as "mother" and "neighbor"."""
    word = word.lower()
    return _SAME.get(word, word)


def _sentence(r: _Reader, start: int, end: int) -> None:
    text, bounds = r.text, (start, end)
    span = text[start:end]

    # "my uncle Bartholomew", "Anna's husband Tom", "my niece", "my dog Rex"
    for m in re.finditer(
        rf"\b(?:(?P<my>[Mm]y|[Oo]ur)|(?P<owner>{_NAME})['\u2019]s)\s+{_ADJECTIVES}"
        rf"(?:[a-z]+[ \t])?(?P<role>{_ROLES})\b(?!['\u2019]s)"
        rf"(?:,?[ \t]+(?:is[ \t]+|was[ \t]+|named[ \t]+|called[ \t]+)?(?P<name>{_NAME}))?",
        span,
    ):
        role = role_word(m["role"])
        of = None if m["my"] else _trimmed(m["owner"])
        if m["owner"] and of:
            r.add(of, start + m.start("owner"), _kind_of(of))
        kind = "pet" if m["role"].lower() in PETS else "person"
        if m["name"]:
            index = r.add(m["name"], start + m.start("name"), kind, role=role, of=of)
        else:
            surface = m.group(0).split("'")[0] if not m["my"] else f"{m['my'].lower()} {role}"
            r.mentions.append(Mention(surface, "", kind, start + m.start("role"), role=role, of=of))
            index = len(r.mentions) - 1
        if index is not None and of:
            owner_index = r.add(of, start + m.start("owner"), _kind_of(of))
            if owner_index is not None:
                r.links.append(Link(index, f"{role} of", owner_index))

    # "Zofia is my cousin"
    for m in re.finditer(
        rf"(?P<name>{_NAME})[ \t]+(?:is|was|'s)[ \t]+(?:my|our)[ \t]+{_ADJECTIVES}"
        rf"(?:[a-z]+[ \t])?(?P<role>{_ROLES})\b(?!['\u2019]s)",  # not "my mother's brother"
        span,
    ):
        kind = "pet" if m["role"].lower() in PETS else "person"
        r.add(m["name"], start + m.start("name"), kind, role=role_word(m["role"]))

    # "Uncle Bart", "Dr. Chen", "Coach Ramirez"
    for m in re.finditer(rf"\b(?P<title>{_TITLE_WORDS})\.?[ \t]+(?P<name>{_NAME})", span):
        title = _TITLES[m["title"].lower()]
        surface = f"{m.group(0)[: m.start('name') - m.start()]}{_trimmed(m['name'])}"
        r.add(m["name"], start + m.start("name"), "person", role=title, surface=surface)

    # "Bart from accounting", "Maria from work"
    for m in re.finditer(rf"(?P<name>{_NAME})[ \t]+from[ \t]+(?:the[ \t]+)?(?P<q>[a-z]{{3,}})\b",
                         span):  # fmt: skip
        if m["q"] not in ("home", "there", "here", "now", "then", "time", "scratch"):
            surface = f"{_trimmed(m['name'])} from {m['q']}"
            r.add(m["name"], start + m.start("name"), "person", role=m["q"], surface=surface)

    # "works at Acme", "lives in Gdańsk", "married Tom"
    for verbs, kind in ((_ORG_VERBS, "organization"), (_JOB, "organization"),
                        (_PLACE_VERBS, "place"), (_PERSON_VERBS, "person")):  # fmt: skip
        for m in re.finditer(rf"\b{verbs}[ \t]+(?:the[ \t]+)?(?P<name>{_NAME}|{_ACRONYM})", span):
            name = _trimmed(m["name"])
            if not name:
                continue
            own = kind
            if kind == "place" and is_given_name(name.split()[0]):
                own = "person"  # "visited Anna", "from Maria"
            elif kind == "organization" and _SUFFIX_PLACE.search(name):
                own = "place"
            subject = r.subject_before(start + m.start(), bounds)
            obj = r.add(name, start + m.start("name"), own)
            relation = _RELATION_OF.get(m["verb"])
            if kind == "organization" and relation is None:
                relation = "works at"
            if kind == "place" and relation is None:
                relation = "visited" if own == "place" else None
            if obj is not None and subject is not None and relation and subject != obj:
                r.links.append(Link(subject, relation, obj))

    # "the Atlas project", "project Atlas"
    for m in re.finditer(
        rf"\b(?:(?P<a>{_NAME})[ \t]+project\b|[Pp]roject[ \t]+(?P<b>{_NAME}))", span
    ):
        name = m["a"] or m["b"]
        r.add(name, start + m.start("a" if m["a"] else "b"), "project")

    # any other capitalised name
    for m in re.finditer(_NAME, span):
        name = _trimmed(m.group(0))
        if not name:
            continue
        if name.lower() in _KIN_NAMES:  # "Mum said": the speaker's mother, not a name
            role = role_word(_KIN_NAMES[name.lower()])
            r.mentions.append(Mention(f"my {role}", "", "person", start + m.start(), role=role))
            continue
        at = start + m.start() + m.group(0).find(name)
        opens = not text[start:at].strip(" \t\"'\u201c\u2018(-*")
        words = name.split()
        if opens and len(words) > 1 and not is_given_name(words[0]) and is_given_name(words[1]):
            at += len(words[0]) + 1  # "Woohoo Melanie", "Congrats Caroline": the name
            words = words[1:]
            name = " ".join(words)
        weak = (
            opens and len(words) == 1 and (not is_given_name(name) or name.lower() in _WORD_NAMES)
        )
        before = text[start:at].split()
        after = text[at + len(name) : end].lstrip()[:1]
        addressed = bool(before and before[-1].strip(",!.").lower() in _CALLS) or (
            after in (",", "!", "?") and (opens or text[start:at].rstrip().endswith(","))
        )
        r.add(name, at, _kind_of(name), weak=weak, addressed=addressed)
