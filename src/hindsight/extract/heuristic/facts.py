"""Facts in a clause: name, age, diet and allergies, home and origin, work, people, pets.

Each rule reads one first-person clause ("I am a nurse at St Mary's", "my sister
is called Ana", "I have two cats") and returns the facts it states about the speaker,
single-valued ones with the slot they fill (``attribute``), so that a later statement
filling the same slot supersedes them.
"""

from __future__ import annotations

import re

from hindsight.extract.base import Extracted
from hindsight.extract.heuristic.wording import (
    Spec,
    article,
    cut_job,
    cut_place,
    cut_value,
    hit,
    lowered,
    regex,
    third_person,
    word_set,
)
from hindsight.models import Kind

_LOCATION_HINTS = ("where does {name} live", "home city", "location")
_ORIGIN_HINTS = ("where is {name} from", "hometown", "origin")
_WORK_HINTS = ("what does {name} do for a living", "occupation", "job")
_EMPLOYER_HINTS = ("where does {name} work", "employer", "workplace")
SIMPLE_FACTS = (
    Spec(
        regex(r"^i am (?:severely |very |mildly |highly |a bit )?allergic to (?P<val>.+)$"),
        "{name} is allergic to {val}",
        hints=("what is {name} allergic to", "allergies"),
        confidence=0.9,
    ),
    Spec(
        regex(
            r"^i am (?:an? )?(?:strict |committed )?(?P<val>vegan|vegetarian|pescatarian|"
            r"pescetarian|flexitarian|teetotal)$"
        ),
        "{name} is {val}",
        attribute="diet",
        hints=("what does {name} eat", "diet"),
        clean=lowered,
    ),
    Spec(
        regex(
            r"^i (?:am |have been )?(?:currently |now |still |actually )*(?:live|reside|living|"
            r"residing|based|located) (?P<prep>in|near) (?P<val>.+)$"
        ),
        "{name} lives {prep} {val}",
        attribute="location",
        hints=_LOCATION_HINTS,
        clean=cut_place,
    ),
    Spec(
        regex(
            r"^i (?:have )?(?:just |recently |finally |also )?(?:moved|relocated) to (?P<val>.+)$"
        ),
        "{name} moved to {val}",
        attribute="location",
        hints=_LOCATION_HINTS,
        clean=cut_place,
    ),
    Spec(
        regex(r"^i (?:am (?:originally )?|originally )?(?:come )?from (?P<val>.+)$"),
        "{name} is from {val}",
        attribute="origin",
        hints=_ORIGIN_HINTS,
        clean=cut_place,
    ),
    Spec(
        regex(r"^i was born (?:and raised )?in (?P<val>.+)$"),
        "{name} was born in {val}",
        attribute="birthplace",
        hints=_ORIGIN_HINTS,
        clean=cut_place,
    ),
    Spec(
        regex(r"^i grew up in (?P<val>.+)$"),
        "{name} grew up in {val}",
        attribute="origin",
        hints=_ORIGIN_HINTS,
        clean=cut_place,
    ),
    Spec(
        regex(r"^i (?:currently |now |still )?work as (?:an? )?(?P<val>.+)$"),
        "{name} works as {a} {val}",
        attribute="job_title",
        hints=_WORK_HINTS,
        clean=cut_job,
    ),
    Spec(
        re.compile(r"^[Ii] am married to (?P<val>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)[.!]?$"),
        "{name} is married to {val}",
        attribute="partner",
        hints=("who is {name}'s partner", "spouse"),
    ),
)
_NAME = regex(
    r"^(?:my name is|i am called|i go by|people call me|everyone calls me|you can call me|"
    r"call me) (?P<val>[A-Za-z][\w'-]*(?: [A-Z][\w'-]*){0,2})[.!]?$"
)
INTRO = re.compile(r"^(?:I am|this is) (?P<val>[A-Z][a-z'-]+(?: [A-Z][a-z'-]+)?)[.!]?$")
_AGE = regex(
    r"^i am (?P<n>\d{1,3})(?: years? old| yrs? old| y/?o)?(?: now| today| this year)?$|"
    r"^i (?:just )?turned (?P<m>\d{1,3})\b"
)
_EMPLOYER = regex(
    r"^i (?:am |have been |have )?(?:currently |now |still )*(?:work|working|worked|"
    r"(?:just |recently )?(?:got a (?:new )?job|started (?:a new job|working)|landed a job)) "
    r"(?P<prep>at|for) (?P<org>.+?)(?: as (?:an? )?(?P<job>.+))?$"
)
_I_AM_A = regex(r"^i am (?P<art>an?) (?P<val>.+?)(?: (?:at|for) (?P<org>[A-Z].*))?$")
_JOB_SUFFIX = regex(
    r"(?:er|or|ist|ian|ant|ent|eer|ect|man|woman|person|nurse|chef|cook|pilot|coach|tutor|"
    r"student|judge|vet|medic|clerk|agent|intern|dev|ceo|cto|cfo|officer)$"
)
_NOT_JOB = word_set(
    "believer lover fan beginner member user customer sucker winner loser fighter survivor "
    "mother father brother sister daughter son parent grandmother grandfather wife husband "
    "partner introvert extrovert ambivert vegetarian christian libertarian leo scorpio "
    "virgo gemini cancer person woman man owner other newcomer"
)
_NOT_IDENTITY = word_set("fan lover believer user customer person human mess bit joke")
_VAGUE = word_set("bit little lot tad kind sort few couple total complete real huge big")
_PARTNERS = "wife|husband|partner|spouse|boyfriend|girlfriend|fiance|fiancee|fiancé|fiancée"
_PETS = "dog|cat|puppy|kitten|pet|parrot|hamster|rabbit|bunny|horse|bird|fish|turtle|snake"
_KIN = (
    "sister|brother|mother|mom|mum|father|dad|son|daughter|kid|child|friend|boss|manager|"
    "roommate|cousin|grandmother|grandfather|grandma|grandpa|aunt|uncle|niece|nephew"
)
_REL = rf"(?P<rel>(?:(?:best|little|big|older|younger|twin|new|baby|pet) )?(?:{_PARTNERS}|"
_REL += rf"{_PETS}|{_KIN}))"
_REL_VALUE = r"(?P<val>[A-Za-z][\w'-]*(?: [A-Z][\w'-]*)?)[.!]?$"
_RELATION = (
    regex(rf"^my {_REL}(?:'s name is| is named| is called| name is) {_REL_VALUE}"),
    regex(rf"^i (?P<has>have|have got|got|own) (?:an?|one) {_REL} (?:named|called) {_REL_VALUE}"),
)
_SLOTS = {"mother": "mother mom mum", "father": "father dad", "boss": "boss manager"}
_HAVE = regex(
    r"^i (?:have|have got|own) (?P<q>an?|one|two|three|four|five|six|\d{1,2}) "
    rf"(?P<adj>(?:[a-z-]+ ){{0,2}}?)(?P<noun>(?:{_PETS}|{_KIN}|sibling|twin|grandchild|grandkid|"
    r"car|bike|motorcycle|house|apartment|flat|garden|boat)(?:s|ren|es)?)\b"
)


def _slot(rel: str) -> str | None:
    """The single-valued attribute a relation fills, or None if one can have many."""
    base = rel.split()[-1]
    if re.fullmatch(_PARTNERS, base):
        return "partner"
    if re.fullmatch(_PETS, base):
        return f"pet:{base}:name"
    return next((slot for slot, names in _SLOTS.items() if base in names.split()), None)


def own_name(text: str, name: str) -> list[Extracted]:
    """ "My name is Ana", "call me Ana": the speaker's name."""
    if not (m := _NAME.match(text)):
        return []
    if text.lower().startswith(("call me", "people", "everyone", "you can")) and m["val"].islower():
        return []  # "call me later"
    val = m["val"][:1].upper() + m["val"][1:]
    hints = (f"what is {name}'s name", "name")
    return hit(Kind.FACT, f"{name}'s name is {val}", 0.9, attribute="name", value=val, hints=hints)


def age(text: str, name: str) -> list[Extracted]:
    """ "I am 34", "I just turned 34": the speaker's age."""
    if not (m := _AGE.match(text)) or not (0 < (years := int(m["n"] or m["m"])) < 130):
        return []
    hints = (f"how old is {name}", "age")
    return hit(
        Kind.FACT, f"{name} is {years} years old", attribute="age", value=str(years), hints=hints
    )


def _job_fact(name: str, job: str, confidence: float = 0.85) -> list[Extracted]:
    content = f"{name} works as {article(job)} {job}"
    hints = tuple(h.format(name=name) for h in _WORK_HINTS)
    return hit(Kind.FACT, content, confidence, attribute="job_title", value=job, hints=hints)


def _employer_fact(name: str, org: str, prep: str, confidence: float = 0.85) -> list[Extracted]:
    hints = tuple(h.format(name=name) for h in _EMPLOYER_HINTS)
    content = f"{name} works {prep.lower()} {org}"
    return hit(Kind.FACT, content, confidence, attribute="employer", value=org, hints=hints)


def employer(text: str, name: str) -> list[Extracted]:
    """ "I work at Acme (as an engineer)": where the speaker works, and as what."""
    if not (m := _EMPLOYER.match(text)) or not (org := cut_place(m["org"])):
        return []
    job = cut_job(m["job"]) if m["job"] else ""
    return _employer_fact(name, org, m["prep"]) + (_job_fact(name, job) if job else [])


def i_am_a(text: str, name: str) -> list[Extracted]:
    """'I am a nurse' is a job; 'I am an introvert' a looser identity fact."""
    if not (m := _I_AM_A.match(text)) or m["val"].split()[0].lower() in _VAGUE:
        return []
    job = cut_job(m["val"])
    head = job.split()[-1].lower() if job else ""
    if head and head not in _NOT_JOB and _JOB_SUFFIX.search(head):
        org = cut_place(m["org"]) if m["org"] else ""
        return _job_fact(name, job, 0.8) + (_employer_fact(name, org, "at", 0.8) if org else [])
    who = cut_value(m["val"], max_words=5)
    if not who or who.lower() in _NOT_IDENTITY:
        return []
    content = f"{name} is {m['art'].lower()} {third_person(who)}"
    return hit(Kind.FACT, content, 0.55, hints=(f"who is {name}",))


def relation(text: str, name: str) -> list[Extracted]:
    """ "My sister is called Ana", "I have a dog named Rex": someone's name."""
    if not (m := _RELATION[0].match(text) or _RELATION[1].match(text)):
        return []
    rel, val = m["rel"].lower(), m["val"][:1].upper() + m["val"][1:]
    has = "has" in m.groupdict()
    said = f"{name} has a {rel} named" if has else f"{name}'s {rel} is named"
    hints = (f"{name}'s {rel}", f"who is {name}'s {rel}", f"{rel}'s name")
    return hit(Kind.FACT, f"{said} {val}", attribute=_slot(rel), value=val, hints=hints)


def have(text: str, name: str) -> list[Extracted]:
    """ "I have two cats", "I own a boat": what the speaker has."""
    if not (m := _HAVE.match(text)):
        return []
    owned = cut_value(text[m.start("q") :], max_words=10) or f"{m['q']} {m['adj']}{m['noun']}"
    hints = (f"does {name} have {m['noun']}",)
    return hit(Kind.FACT, f"{name} has {third_person(owned)}", 0.75, hints=hints)
