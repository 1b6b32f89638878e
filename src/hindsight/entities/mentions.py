"""Who and what a text names, read without a model: people, places, organisations,
pets and projects, the roles they are given ("my uncle", "Anna's husband", "Bart from
accounting") and the relations a sentence states between them ("Tom coaches the
Falcons", "my niece lives in Gdańsk").

Names are capitalised words. A capitalised word that opens a sentence is a name only
when the name table knows it, or when it is also found inside a sentence (the graph
decides: such a mention is ``weak``). Kinds come from the words around a name ("works
at", "lives in", "my dog"), else from the name tables (a given name is a person).

A relation is said of the nearest one named before its verb, of the speaker for "I" or
a sentence opened by a verb ("Started volunteering at ..."), and for "he", "she", "his"
or "her" of the sentence's subject, else of the last person named in a sentence before
(never of a name given only to the other sex). Roles are kinship and social words and
what people do ("bassist", "consultant"), said before a name, after it ("Lucy, my
flatmate,") or as another's ("Dr. Mensah's secretary, a woman called Fiona").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

from hindsight.entities.given import is_given, may_be
from hindsight.entities.words import (
    CALLS,
    KIN,
    KIN_NAMES,
    NOT_AGENTS,
    NOT_NAMES,
    PETS,
    RELATIVES,
    SOCIAL,
    WORD_NAMES,
)
from hindsight.text.names import is_given_name

__all__ = ["KIN", "PETS", "RELATIVES", "SOCIAL", "Link", "Mention", "read", "role_word"]


# A name: capitalised words (O'Brien, Anne-Marie), an initial ("B. Nowak"), up to four.
_UPPER: Final = "".join(chr(c) for c in range(0x41, 0x250) if chr(c).isupper())
_WORD: Final = (
    rf"(?:[{_UPPER}](?:['\u2019][{_UPPER}])?[^\W\d_]+(?:-[{_UPPER}][^\W\d_]+)?|[{_UPPER}]\.)"
)
_PARTICLE: Final = r"(?:de|da|del|della|van|von|der|den|la|le|di|du|dos|das|al|el|bin|ibn)"
_NAME: Final = (  # "Rio de Janeiro", "Pruitt & Sons"
    rf"{_WORD}(?:[ \t]+(?:(?:{_PARTICLE}|&)[ \t]+)?{_WORD}){{0,3}}"
)
_ACRONYM: Final = r"[A-Z]{2,6}\b"

_ROLES: Final = (
    "(?:" + "|".join(sorted(RELATIVES, key=len, reverse=True)) + "|"
    r"(?!(?:" + "|".join(sorted(NOT_AGENTS, key=len, reverse=True)) + r")\b)"
    r"(?:[a-z]+-)?[a-z]{3,}(?:er|or|ist|ant|ent|ian))"
)
# What follows a name's "'s" that is "is" or "has" ("Dee's a paramedic"), not a possessive
_IS: Final = r"(?:a|an|the|been|got|just|not|never|also|always|still|only|so|very|really)\b"
_ADJECTIVES: Final = (
    r"(?:(?:older|younger|little|big|late|best|new|old|eldest|oldest|youngest|baby|twin|"
    r"dear|favourite|favorite|future|former|ex)[ -])?"
)
TITLES: Final[dict[str, str | None]] = {
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
    "rev": "reverend",
    "reverend": "reverend",
    "sgt": "sergeant",
    "sergeant": "sergeant",
    "capt": "captain",
    "nurse": "nurse",
    "mr": "mr",  # not a role: what tells Mr. Pemberton from Mrs. Pemberton
    "mrs": "ms",
    "ms": "ms",
    "miss": "ms",
    "sir": None,
    "dame": None,
    "señor": None,
    "señora": None,
    "profesor": "professor",
    "profesora": "professor",
    "madame": None,
    "monsieur": None,
    "herr": None,
    "frau": None,
}
PROFESSIONS: Final = frozenset(  # titles of a job
    {"coach", "doctor", "professor", "reverend", "sergeant", "captain", "nurse"}
)
_TITLE_WORDS: Final = "|".join(t.capitalize() for t in sorted(TITLES, key=len, reverse=True))
_SAME: Final = {"mum": "mother", "mom": "mother", "dad": "father", "grandma": "grandmother",
                "grandpa": "grandfather", "neighbour": "neighbor", "co-worker": "coworker",
                "fiance": "fiancé", "fiancee": "fiancé", "fiancée": "fiancé", "bunny": "rabbit",
                "puppy": "dog", "kitten": "cat"}  # fmt: skip

_NOT_NAMES: Final = NOT_NAMES | frozenset(TITLES)  # a title alone ("Prof.") names no one

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
    r"runs|run|owns|founded|set up|started at|signed with|leads|leading|led|got into|"
    r"ran for|runs for|raced for|swam for|rode for|competed for|competes for)"
)
# "works behind the bar at", "teaches PE at", "a PhD at": the same, a few words apart
_ORG_AFTER: Final = (
    r"(?P<verb>(?:works?|worked|working|teach(?:es|ing)?|taught|volunteers?|volunteering)"
    r"(?:[ \t]+[A-Za-z]+){1,3}?[ \t]+(?:at|for)|(?:job|post|position|role|placement|"
    r"internship|PhD|phd|degree|course|place|team|office|department|branch)[ \t]+"
    r"(?:at|with))"
)
_PLACE_VERBS: Final = (
    r"(?P<verb>lives? in|lived in|living in|moved to|moving to|moves to|born in|grew up in|"
    r"raised in|based in|stays? in|stayed in|staying in|visited|visiting|trip to|"
    r"travell?ed to|travell?ing to|flew to|flying to|drove to|vacation in|holiday in|"
    r"went to|going to|headed to|heading to|stationed in|posted to|off to|from|"
    r"lives?(?:[ \t]+[a-z0-9]+){1,5}?[ \t]+(?:in|on|at))"
)
# "is a nurse at", "was headmaster at"
_JOB: Final = (
    r"(?P<verb>(?:is|as|was|am|became|'s)[ \t]+(?:a|an|the)[ \t]+(?:[a-z-]+[ \t]+){0,2}"
    r"(?:at|for|with)|(?:is|was|'s)[ \t]+"
    r"(?!(?:still|now|currently|also|back|already|always|just|only)\b)(?![a-z-]+(?:ing|ed)\b)"
    r"[a-z-]+[ \t]+at)"
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
    "leads": "leads", "leading": "leads", "led": "led", "stationed in": "lives in",
    "posted to": "lives in", "off to": "visited", "run": "runs", "set up": "founded",
    "started at": "works at", "got into": "studies at", "ran for": "competed for",
    "runs for": "competed for", "raced for": "competed for", "swam for": "competed for",
    "rode for": "competed for", "competes for": "competed for",
}  # fmt: skip
# Where a sentence ends: not after an initial or a title ("B. Nowak", "Dr. Chen").
_END: Final = re.compile(
    r"(?<!\b[A-Z])(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bSt)(?<!\bProf)(?<!\bJr)"
    r"(?<!\bSr)(?<!\bMt)[.!?]+(?=\s|$)|\n"
)
# Nouns for a person a name may be given with ("a junior called Ravi Menon").
_PERSON_NOUNS: Final = (
    r"(?:guy|man|woman|lady|girl|boy|bloke|chap|kid|lad|lass|junior|person|fellow|"
    r"teenager|student|nurse|doctor|carer|friend|neighbou?r)"
)
# Where one named with a role works ("our solicitor is Mrs. Okwuosa at Fenwick Law").
_AT: Final = re.compile(rf"[ \t]+at[ \t]+(?:the[ \t]+)?(?P<org>{_NAME})")
# A noun a "from" may belong to ("a couple from Quebec").
_NOUN_BEFORE: Final = re.compile(
    r"\b(?:a|an|the|some|many|few|several|dozen|two|three|four|five|six|seven|eight|nine|"
    r"ten|twenty|thirty|forty|fifty|hundred|\d+)[ \t]+(?:[a-z]+[ \t]+){0,2}$"
)
# A sentence opened by a verb, as a diary's are: what the speaker did.
_DIARY: Final = re.compile(r"[A-Z][a-z]+(?:ed|ing)\b")
# Who a verb may be said of, besides the names before it.
_SUBJECT: Final = re.compile(r"\b(?:(?P<i>I|[Ww]e)|(?P<he>[Hh]e|[Ss]he))\b")
# What may stand between a verb and its object ("a firm called Atelier Norte", "Eli's
# school, Hillside Primary").
_OBJECT: Final = (
    r"(?:(?:the|a|an)[ \t]+(?:[a-z]+[ \t]+){0,2}(?:called|named)[ \t]+|"
    r"(?P<in>(?:the|a|an)[ \t]+(?:[a-z\u00e0-\u00ff]+[ \t]+){1,2}in[ \t]+)|"
    rf"(?:{_NAME}['\u2019]s|my|his|her|our|their)[ \t]+[a-z]+,[ \t]+|the[ \t]+)?"
)


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
    if _SUFFIX_ORG.search(name) or " & " in name:  # "Pruitt & Sons"
        return "organization"
    if _SUFFIX_PLACE.search(name):
        return "place"
    first = name.split()[0].rstrip(".")
    return "person" if is_given_name(first) or is_given(first) else "other"


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
        self.sentences: list[tuple[int, int]] = []  # read so far

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

    def referent(self, at: int, sentence: tuple[int, int], pronoun: str) -> int | None:
        """Whom "he", "she", "his" or "her" at ``at`` stands for: the first person named
        before it in its sentence (the subject, which a pronoun most often means; one
        named as another's, as in "Elizabeth's boyfriend, Callum, ... he", only if no
        other is), else the last person named in the nearest sentence before that names
        one;
        a name of no known kind only if no person is named; never a name given only to
        the other sex ("Fiona" is no "he")."""
        m = self.mentions
        spans = [(sentence[0], at), *((lo, hi) for lo, hi in reversed(self.sentences))]
        for kinds in (("person",), ("other",)):
            for lo, hi in spans:
                named = [
                    i
                    for i, mention in enumerate(m)
                    if mention.name and not mention.addressed and not mention.weak
                    and mention.kind in kinds and lo <= mention.start < hi
                    and may_be(pronoun, mention.name)
                ]  # fmt: skip
                if named and lo == sentence[0]:
                    return min(named, key=lambda i: (self._possessor(i), m[i].start))
                if named:
                    return max(named, key=lambda i: m[i].start)
        return None

    def _possessor(self, index: int) -> bool:
        m = self.mentions[index]
        return self.text.startswith(("'s", "\u2019s"), m.start + len(m.name))

    def subject_before(self, at: int, sentence: tuple[int, int]) -> int | None:
        """Who a verb at ``at`` is said of: the nearest before it in its sentence of the
        people (or roles) named, the speaker's "I", and "he" or "she"; the speaker in a
        sentence that opens with no name ("Started volunteering at ..."); -1 for the
        speaker, None for no one."""
        best, best_at = None, -1
        for index, m in enumerate(self.mentions):
            if not sentence[0] <= m.start < at or m.addressed or _DIARY.fullmatch(m.name):
                continue
            if best_at < m.start and m.kind in ("person", "pet", "other"):
                best, best_at = index, m.start
        for match in _SUBJECT.finditer(self.text, sentence[0], at):
            if match.start() > best_at:
                best_at = match.start()
                best = -1 if match["i"] else self.referent(match.start(), sentence, match["he"])
        if best is None and _DIARY.match(self.text[sentence[0] : at].lstrip()):
            return -1  # "Started volunteering at ...", "Mentoring the new intern"
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

    # "my uncle Bartholomew", "Anna's husband Tom", "my niece", "my dog Rex", "my
    # flatmate's cat Mochi", "his daughter Carol", "Dr. Mensah's secretary, a lovely woman
    # called Fiona", "Kasia's best friend at school is Hania"
    pending: list[tuple[int | None, str, str, int, str]] = []  # of "his", "her": read last
    for m in re.finditer(
        rf"\b(?:(?P<my>[Mm]y|[Oo]ur|[Tt]he)|(?P<pron>[Hh]is|[Hh]er)|(?P<mine>(?:[Mm]y|[Oo]ur)[ \t]+"
        rf"{_ADJECTIVES}(?P<role0>{_ROLES}))['\u2019]s|(?P<owner>{_NAME})['\u2019]s)\s+"
        rf"(?!{_IS})"  # "Dai's a shearer" is no one's shearer
        rf"{_ADJECTIVES}(?:[a-z]+[ \t])?(?P<role>{_ROLES})\b(?!['\u2019]s)"
        rf"(?:(?:[ \t]+(?:at|from|in)[ \t]+[a-z]+)?,?[ \t]+(?:is[ \t]+|was[ \t]+|named[ \t]+|"
        rf"called[ \t]+|(?:a|an)[ \t]+(?:[a-z]+[ \t]+){{0,3}}(?:called|named)[ \t]+)?"
        rf"(?P<title>(?:{_TITLE_WORDS})\.?[ \t]+)?(?P<name>{_NAME})\b"
        rf"(?!['\u2019]s[ \t]+(?!{_IS})[a-z]))?",  # not "is Tom's cousin": Tom's is Fraser
        span,
    ):
        role = role_word(m["role"])
        kind = "pet" if m["role"].lower() in PETS else "person"
        owner_index = None
        if m["mine"]:  # "my flatmate's cat": the cat of whoever "my flatmate" is
            mine = role_word(m["role0"])
            r.mentions.append(Mention(f"my {mine}", "", "person", start + m.start(), role=mine))
            owner_index, of = len(r.mentions) - 1, f"my {mine}"
        elif m["owner"]:
            of = _trimmed(m["owner"])
            owner_index = r.add(of, start + m.start("owner"), _kind_of(of)) if of else None
        else:
            of = None
        if m["pron"]:
            index = r.add(m["name"], start + m.start("name"), kind) if m["name"] else None
            pending.append((index, role, kind, start + m.start(), m["pron"]))
            continue
        if m["name"]:
            surface = f"{m['title'] or ''}{_trimmed(m['name'])}"  # "Mrs. Kowalczyk"
            index = r.add(m["name"], start + m.start("name"), kind, role=role, of=of,
                          surface=surface)  # fmt: skip
        else:
            if m["my"] and m["my"].lower() == "the":
                continue  # "the vet" alone names no one
            surface = f"{m['my'].lower()} {role}" if m["my"] else f"{of}'s {m['role']}"
            r.mentions.append(Mention(surface, "", kind, start + m.start("role"), role=role, of=of))
            index = len(r.mentions) - 1
        if index is not None and owner_index is not None and index != owner_index:
            r.links.append(Link(index, f"{role} of", owner_index))
        if index is not None and kind == "person":  # "our solicitor, Mrs. O at Fenwick Law"
            works = _AT.match(text, start + m.end(), end)
            if works is not None:
                org = r.add(works["org"], works.start("org"), "organization")
                if org is not None and org != index:
                    r.links.append(Link(index, "works at", org))

    # "Zofia is my cousin", "Zofia is Uncle Bart's daughter", "Lucy, my flatmate,",
    # "Elena (the vet)"
    for m in re.finditer(
        rf"(?P<name>{_NAME})(?:[ \t]+(?:is|was|'s)[ \t]+|,[ \t]+|[ \t]*\([ \t]*)(?:my|our|the|"
        rf"(?P<owner>{_NAME})['\u2019]s)[ \t]+{_ADJECTIVES}(?:[a-z]+[ \t])?(?P<role>{_ROLES})\b"
        rf"(?!['\u2019]s)(?![ \t]+[{_UPPER}])",  # not "my mother's brother", "my cousin Kenji"
        span,
    ):
        kind = "pet" if m["role"].lower() in PETS else "person"
        role, of = role_word(m["role"]), _trimmed(m["owner"] or "") or None
        index = r.add(m["name"], start + m.start("name"), kind, role=role, of=of)
        if index is not None and of:
            owner_index = r.add(of, start + m.start("owner"), _kind_of(of))
            if owner_index is not None and owner_index != index:
                r.links.append(Link(index, f"{role} of", owner_index))

    # "a junior called Ravi Menon": a person, whatever the name table knows
    for m in re.finditer(
        rf"\b(?:a|an)[ \t]+(?:[a-z]+[ \t]+){{0,2}}{_PERSON_NOUNS}[ \t]+(?:called|named)[ \t]+"
        rf"(?P<name>{_NAME})",
        span,
    ):
        r.add(m["name"], start + m.start("name"), "person")

    # "Uncle Bart", "Dr. Chen", "Coach Ramirez"; "Dr. Alvarez at Riverside Vets" works there
    for m in re.finditer(
        rf"\b(?P<title>{_TITLE_WORDS})\.?[ \t]+(?P<name>{_NAME})"
        rf"(?:[ \t]+at[ \t]+(?:the[ \t]+)?(?P<at>{_NAME}))?",
        span,
    ):
        title = TITLES[m["title"].lower()]
        surface = f"{m.group(0)[: m.start('name') - m.start()]}{_trimmed(m['name'])}"
        index = r.add(m["name"], start + m.start("name"), "person", role=title, surface=surface)
        if m["at"] and title in PROFESSIONS and index is not None:
            place = r.add(m["at"], start + m.start("at"), "organization")
            if place is not None and place != index:
                r.links.append(Link(index, "works at", place))

    # "Bart from accounting", "Maria from work"
    for m in re.finditer(rf"(?P<name>{_NAME})[ \t]+from[ \t]+(?:the[ \t]+)?(?P<q>[a-z]{{3,}})\b",
                         span):  # fmt: skip
        if m["q"] not in ("home", "there", "here", "now", "then", "time", "scratch"):
            surface = f"{_trimmed(m['name'])} from {m['q']}"
            r.add(m["name"], start + m.start("name"), "person", role=m["q"], surface=surface)

    # "works at Acme", "lives in Gdańsk", "married Tom": who did it is found once every
    # name of the sentence is read
    verbs: list[tuple[int, str, int]] = []
    for pattern, kind in ((_ORG_VERBS, "organization"), (_ORG_AFTER, "organization"),
                          (_JOB, "organization"), (_PLACE_VERBS, "place"),
                          (_PERSON_VERBS, "person")):  # fmt: skip
        for m in re.finditer(rf"\b{pattern}[ \t]+{_OBJECT}(?P<name>{_NAME}|{_ACRONYM})", span):
            name = _trimmed(m["name"])
            if not name or name.lower() in KIN_NAMES:
                continue
            if text.startswith(("'s", "\u2019s"), start + m.end("name")):
                if not name.startswith(("St ", "St. ", "Saint ")):
                    continue  # "from Mum's attic": the attic, not Mum
                name += text[start + m.end("name") : start + m.end("name") + 2]  # St Mary's
            own = kind
            if kind == "place" and is_given_name(name.split()[0]):
                own = "person"  # "visited Anna", "from Maria"
            elif kind == "organization" and _SUFFIX_PLACE.search(name):
                own = "place"
            if m["verb"] == "from" and _NOUN_BEFORE.search(text, start, start + m.start()):
                continue  # "we met a couple from Quebec": the couple's, not ours
            if m["in"] and kind == "organization":
                own = "place"  # "a nurse at the hospital in Scarborough"
            obj = r.add(name, start + m.start("name"), own)
            relation = "works in" if m["in"] and kind == "organization" else None
            relation = relation or _relation(m["verb"], kind, own)
            if obj is not None and relation:
                verbs.append((start + m.start(), relation, obj))
            if obj is not None and own == "organization":
                _located(r, obj, start + m.end("name"), end)

    # "Kenji Tanaka, senior engineer at Panasonic"
    for m in re.finditer(
        rf"(?P<who>{_NAME}),[ \t]+(?:(?:a|an|the)[ \t]+)?(?:[a-z-]+[ \t]+){{0,2}}{_ROLES}"
        rf"[ \t]+(?:at|for)[ \t]+{_OBJECT}(?P<name>{_NAME})",
        span,
    ):
        who = r.add(m["who"], start + m.start("who"), _kind_of(m["who"]))
        place = r.add(m["name"], start + m.start("name"), "place" if m["in"] else "organization")
        if who is not None and place is not None and who != place:
            r.links.append(Link(who, "works in" if m["in"] else "works at", place))

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
        if name.lower() in KIN_NAMES:  # "Mum said": the speaker's mother, not a name
            role = role_word(KIN_NAMES[name.lower()])
            r.mentions.append(Mention(f"my {role}", "", "person", start + m.start(), role=role))
            continue
        at = start + m.start() + m.group(0).find(name)
        opens = not text[start:at].strip(" \t\"'\u201c\u2018(-*")
        words = name.split()
        if opens and len(words) > 1 and not is_given_name(words[0]) and is_given_name(words[1]):
            at += len(words[0]) + 1  # "Woohoo Melanie", "Congrats Caroline": the name
            words = words[1:]
            name = " ".join(words)
        weak = opens and len(words) == 1 and (not is_given_name(name) or name.lower() in WORD_NAMES)
        before = text[start:at].split()
        after = text[at + len(name) : end].lstrip()[:1]
        called = len(before) > 0 and before[-1].strip(",!.").lower() in CALLS
        addressed = called or (  # "Anna, ...", "Yes, Anna, ...": not "the intern, Leila,"
            after in (",", "!", "?") and (opens or (len(before) == 1 and before[0].endswith(",")))
        )
        r.add(name, at, _kind_of(name), weak=weak, addressed=addressed)

    for at, relation, obj in verbs:
        subject = r.subject_before(at, bounds)
        if subject is not None and subject != obj:
            r.links.append(Link(subject, relation, obj))
    for index, role, kind, at, pronoun in pending:  # "his daughter Carol": whose "his" is
        whose = r.referent(at, bounds, pronoun)
        if whose is None or whose == index:
            continue  # no one to hold the role: not the speaker's either
        of = r.mentions[whose].name
        if index is None:
            r.mentions.append(Mention(f"{of}'s {role}", "", kind, at, role=role, of=of))
            index = len(r.mentions) - 1
        else:
            r.mentions[index] = replace(r.mentions[index], role=role, of=of)
        r.links.append(Link(index, f"{role} of", whose))
    r.links = list(dict.fromkeys(r.links))  # one link said by two patterns once
    r.sentences.append(bounds)


def _located(r: _Reader, org: int, at: int, end: int) -> None:
    """ "the Royal Infirmary in Leeds": an organisation named with where it is."""
    where = re.match(rf"[ \t]+in[ \t]+(?:the[ \t]+)?(?P<place>{_NAME})", r.text[at:end])
    if where is not None and not is_given_name(where["place"].split()[0]):
        place = r.add(where["place"], at + where.start("place"), "place")
        if place is not None and place != org:
            r.links.append(Link(org, "located in", place))


def _relation(verb: str, kind: str, own: str) -> str | None:
    """The relation a verb before a name states ("works for" -> "works at")."""
    relation = _RELATION_OF.get(verb)
    if relation is not None:
        return relation
    first = verb.split()[0].lower()
    if first.startswith("live"):
        return "lives in"
    if first in ("phd", "degree", "course", "place"):
        return "studies at"
    if kind == "organization":
        return "teaches at" if first.startswith(("teach", "taught")) else "works at"
    if kind == "place" and own == "place":
        return "visited"
    return None
