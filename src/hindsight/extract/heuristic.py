"""A deterministic, offline extractor built from regular expressions.

It reads first-person statements from user turns (or from named speakers in a
multi-party conversation) and tool outputs. It never reads assistant or system
turns, questions, hypotheticals or negated states: a missed memory costs less
than a junk one. Each message is normalised (curly quotes, contractions), split
into sentences and clauses, and each clause tried against an ordered list of
rules; the first rule that matches wins.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from hindsight.extract.base import Extracted
from hindsight.models import Kind, Turn

_I = re.IGNORECASE
_USER_ROLES = frozenset({"user", "human"})
_SKIP_ROLES = frozenset({"system", "developer"})
_TOOL_ROLES = frozenset({"tool", "function", "tool_result", "ipython"})
_MAX_WORDS = 20  # longer captures are more likely mis-parses than memories
_SLACK = 40  # content may exceed the input by the subject's name plus this

Rule = Callable[[str, str], list[Extracted]]

# --- normalisation -----------------------------------------------------------

_CONTRACTIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, _I), r)
    for p, r in (
        (r"[\u2018\u2019\u02bc`]", "'"),
        (r"[\u201c\u201d]", '"'),
        (r"\bi'm\b|\bim\b", "I am"),
        (r"\bi've\b", "I have"),
        (r"\bi'd\b", "I would"),
        (r"\bi'll\b", "I will"),
        (r"\bcan't\b|\bcan not\b", "cannot"),
        (r"\bwon't\b", "will not"),
        (r"\b(\w+)n't\b", r"\1 not"),
        (r"\b(it|that|he|she|what|there)'s\b", r"\1 is"),
        (r"\b(you|we|they)'re\b", r"\1 are"),
        (r"\bname's\b", "name is"),
        (r"'s (named|called)\b", r" is \1"),
    )
)
_BLOCKS = re.compile(
    r"```.*?```|<(system|memories|memory|context|instructions)>.*?</\1>|^\s*>.*?$",
    re.IGNORECASE | re.DOTALL | re.MULTILINE,
)
_SYSTEMISH = re.compile(
    r"^\s*(?:system\s*:|<\|?system|\[system\]|as an ai\b|you are (?:an? |the )?"
    r"(?:helpful |friendly |expert |smart |ai |)(?:assistant|ai|agent|bot|chatbot|language model))",
    _I,
)
_SENTENCES = re.compile(
    r"(?<=[.!?])(?<!\bSt\.)(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\be\.g\.)(?<!\bi\.e\.)"
    r"[\s\"')\]]+|\n+"
)
_CLAUSES = re.compile(
    r"[,;]?\s+(?:and|but|though|although|whereas|while|so|plus)\s+(?=(?:i|my)\b)|;\s*", _I
)
_FILLER = re.compile(
    r"^(?:(?:well|oh|ah|so|and|but|also|plus|yeah|yes|yep|ok|okay|honestly|personally|"
    r"frankly|basically|anyway|btw|by the way|fyi|lol|haha|um|uh|hmm|fun fact|"
    r"just so you know|for the record|for what it is worth|you know what|to be honest|tbh)"
    r"\b[\s,:;!.\-]*)+",
    _I,
)
_GREETING = re.compile(r"^(?:hi|hello|hey)(?: there)?\b[\s,!.:-]*", _I)
_QUESTION = re.compile(
    r"^(?:do|does|did|is|are|am|was|were|can|could|would|will|should|shall|may|might|"
    r"where|what|who|whom|whose|when|why|how|which|have|has|had)\b",
    _I,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|suppose|supposing|imagine|hypothetically|pretend|wish|unless|whether|maybe|"
    r"perhaps|might|could|should|would(?! (?:much )?rather)|want to|wanna|going to|gonna|"
    r"plan to|planning to|hope to|hoping to|thinking about|thinking of|considering|"
    r"anymore|any more|no longer|used to)\b",
    _I,
)
_CORRECTION = re.compile(
    r"^(?:(?:no|nope|nah)(?:[\s,.!:;-]*$|[,.!:;-]+\s*|\s+(?=(?:i|my|it|that|the)\b))|"
    r"(?:actually|not quite|wrong|incorrect|correction)\b[\s,.!:;-]*|"
    r"(?:that is|you are|this is) (?:wrong|not right|incorrect|not true|not correct|"
    r"not what i said|mistaken)\b[\s,.!:;-]*|you got (?:it|that) wrong\b[\s,.!:;-]*)",
    _I,
)
_ACKNOWLEDGE = re.compile(
    r"^(?:thanks|thank you|that is fine|it is fine|fine|ok|okay|all good|never mind|"
    r"nevermind|not now|not yet|I am (?:good|fine|ok))\b",
    _I,
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _normalise(text: str) -> str:
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return _BLOCKS.sub(" ", text)


# --- wording helpers ---------------------------------------------------------

_PRONOUNS = re.compile(r"\b(i am|i was|i have|myself|mine|my|me|i)\b", _I)
_PRONOUN_MAP = {
    "i am": "they are",
    "i was": "they were",
    "i have": "they have",
    "myself": "themselves",
    "mine": "theirs",
    "my": "their",
    "me": "them",
    "i": "they",
}
_VERB_3RD = {"am": "is", "are": "is", "be": "is", "have": "has", "do": "does", "go": "goes"}
_STOP = (
    r"\s*(?:[,;:(]|\s-\s|\b(?:because|since|although|though|but|which|who|where|when|so that|"
    r"lol|haha|btw)\b)"
)
_PLACE_STOP = re.compile(
    _STOP + r"|\s+(?:with|for|and I|now|nowadays|these days|anymore|last|this|next|ago|"
    r"recently|a (?:few|couple)|about|around|to be|so|as|in (?:\d{4}|the (?:spring|summer|"
    r"fall|autumn|winter)|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*))\b",
    _I,
)
_VALUE_STOP = re.compile(_STOP, _I)
_TAIL = re.compile(
    r"(?:\s+(?:a lot|so much|very much|too|as well|really|though|lol|haha|anyway))+\s*$|"
    r"[\s.!,;:\"'-]+$",
    _I,
)
_NOT_VALUES = _words(
    "it that this you them those these him her everything anything something nothing stuff things"
)


_NOT_PLACES = _words("here there home nowhere somewhere everywhere work school") | {
    "the future", "the past", "the moment"
}


def _third(text: str) -> str:
    """Swap first-person pronouns for third-person ones."""
    return _PRONOUNS.sub(lambda m: _PRONOUN_MAP[m.group(0).lower()], text)


def _third_verb(verb: str) -> str:
    low = verb.lower()
    if low in _VERB_3RD:
        return _VERB_3RD[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def _value(raw: str, *, stop: re.Pattern[str] = _VALUE_STOP, max_words: int = _MAX_WORDS) -> str:
    """Cut a captured value at the first clause boundary; '' if unusable."""
    m = stop.search(raw)
    value = raw[: m.start()] if m else raw
    prev = None
    while prev != value:
        prev, value = value, _TAIL.sub("", value).strip()
    words = value.split()
    if not words or len(words) > max_words or value.lower() in _NOT_VALUES:
        return ""
    if not re.search(r"\w", value):
        return ""
    return value


def _place(raw: str) -> str:
    value = _value(raw, stop=_PLACE_STOP, max_words=6)
    return "" if value.lower() in _NOT_PLACES else value


def _hit(kind: Kind, content: str, confidence: float, **kw: object) -> Extracted:
    return Extracted(kind, content, confidence, 0, **kw)  # type: ignore[arg-type]


def _fact(
    content: str,
    confidence: float,
    attribute: str | None,
    value: str | None,
    hints: tuple[str, ...],
) -> list[Extracted]:
    return [
        _hit(Kind.FACT, content, confidence, attribute=attribute, value=value, query_hints=hints)
    ]


def _pref(
    content: str,
    polarity: int,
    value: str | None,
    hints: tuple[str, ...],
    attribute: str | None = None,
    confidence: float = 0.85,
) -> list[Extracted]:
    return [
        _hit(
            Kind.PREFERENCE,
            content,
            confidence,
            polarity=polarity,
            value=value,
            attribute=attribute,
            query_hints=hints,
        )
    ]


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _I)


# --- preference rules ----------------------------------------------------------

_ADV = (
    r"(?:(?:really|absolutely|just|truly|totally|also|do|genuinely|simply|kind of|kinda|"
    r"still|always|definitely|much|generally|usually|strongly|honestly|actually) )*"
)
_FAVOURITE = (
    _re(
        r"^my (?:all[- ]time |absolute )?favou?rite (?P<cat>[\w -]{1,30}?) (?:is|are) "
        r"(?P<val>.+)$"
    ),
    _re(
        r"^(?P<val>.+?) (?:is|are) my (?:all[- ]time |absolute )?favou?rite "
        r"(?P<cat>[\w -]{1,30})$"
    ),
)
_DISLIKE = _re(
    r"^i " + _ADV + r"(?P<verb>hate|dislike|detest|loathe|despise|cannot stand|do not like|"
    r"do not enjoy|do not care for|am not (?:a |really )?(?:big |huge )?(?:fan of|into)) "
    r"(?P<val>.+)$"
)
_DIRECTIVE = _re(
    r"^(?:please,? )?(?:(?:you should|you must|make sure to|be sure to) )?(?P<w>always|never) "
    r"(?P<rest>.+?)(?:,? please)?$"
)
_FROM_NOW = _re(
    r"^(?:from now on|going forward|in (?:the )?future),? (?:please,? )?(?P<rest>(?!i\b).+)$"
)
_PREFER_OVER = _re(
    r"^i " + _ADV + r"prefer (?!to\b)(?P<x>.+?) (?:over|to|rather than|instead of|more than) "
    r"(?P<y>.+)$"
)
_RATHER = _re(r"^i would (?:much )?rather (?P<rest>.+)$")
_LIKE = _re(
    r"^i " + _ADV + r"(?P<verb>like|love|enjoy|adore|prefer|am (?:really )?into|"
    r"am (?:a |an )?(?:big |huge |massive |great |avid )?fan of|am passionate about) (?P<val>.+)$"
)
_LIST = re.compile(r"[\w' -]{1,30}(?:, [\w' -]{1,30})*,? (?:and|or) [\w' -]{1,30}[.!]*")
_NEVER = re.compile(r"(?!)")
# "I love that idea", "I like the second option": about this chat, not the user
_DEICTIC = _re(
    r"(?:that|this|it|how|what|the way|your|you|those|these)\b|(?:the|that|this) (?:\w+ )?"
    r"(?:one|option|version|answer|response|suggestion|idea|approach|solution)s?\b"
)
_HATES = frozenset({"hate", "detest", "loathe", "despise"})


def _favourite(text: str, name: str) -> list[Extracted]:
    for pattern in _FAVOURITE:
        if m := pattern.match(text):
            cat, val = m["cat"].strip().lower(), _value(m["val"])
            if val and not cat.startswith(("thing about", "part")):
                return _pref(
                    f"{name}'s favourite {cat} is {_third(val)}",
                    1,
                    val,
                    (f"{name}'s favourite {cat}", f"favourite {cat}"),
                    attribute=f"favourite:{cat}",
                )
    return []


def _dislike(text: str, name: str) -> list[Extracted]:
    if not (m := _DISLIKE.match(text)) or not (val := _value(m["val"])) or _DEICTIC.match(val):
        return []
    verb = m["verb"].lower()
    said = "hates" if verb in _HATES else "can't stand" if verb == "cannot stand" else "dislikes"
    return _pref(
        f"{name} {said} {_third(val)}", -1, val, (f"what does {name} dislike", f"{name} dislikes")
    )


def _directive(text: str, name: str) -> list[Extracted]:
    if m := _DIRECTIVE.match(text):
        word, rest, polarity = m["w"].lower(), m["rest"], 1 if m["w"].lower() == "always" else -1
    elif m := _FROM_NOW.match(text):
        word, rest, polarity = "", m["rest"], 1
    else:
        return []
    if not (rest := _value(rest)):
        return []
    action = f"{word} {_third(rest)}".strip()
    return _pref(
        f"{name} wants the assistant to {action}",
        polarity,
        None,
        ("how should the assistant respond", f"{name}'s instructions"),
    )


def _prefer_over(text: str, name: str) -> list[Extracted]:
    if not (m := _PREFER_OVER.match(text)):
        return []
    x, y = _value(m["x"], max_words=8), _value(m["y"], max_words=8)
    if not x or not y:
        return []
    return _pref(
        f"{name} prefers {_third(x)} over {_third(y)}",
        1,
        x,
        (f"what does {name} prefer", f"{x} or {y}"),
    )


def _rather(text: str, name: str) -> list[Extracted]:
    if not (m := _RATHER.match(text)) or not (rest := _value(m["rest"])):
        return []
    return _pref(
        f"{name} would rather {_third(rest)}",
        1,
        None,
        (f"what does {name} prefer",),
        confidence=0.8,
    )


def _like(text: str, name: str) -> list[Extracted]:
    if not (m := _LIKE.match(text)):
        return []
    val = _value(m["val"], stop=_NEVER) if _LIST.fullmatch(m["val"]) else _value(m["val"])
    if not val or _DEICTIC.match(val):
        return []
    verb = m["verb"].lower()
    said = "is " + verb[3:] if verb.startswith("am ") else _third_verb(verb)
    return _pref(
        f"{name} {said} {_third(val)}", 1, val, (f"what does {name} like", f"{name} likes")
    )


# --- fact rules ------------------------------------------------------------------

_NAME_WORD = r"[A-Za-z][\w'-]*"
_NAME = _re(
    r"^(?:my name is|i am called|i go by|people call me|everyone calls me|you can call me|"
    r"call me) (?P<val>" + _NAME_WORD + r"(?: [A-Z][\w'-]*){0,2})[.!]?$"
)
_INTRO = re.compile(r"^(?:I am|this is) (?P<val>[A-Z][a-z'-]+(?: [A-Z][a-z'-]+)?)[.!]?$")
_AGE = (
    _re(r"^i am (?P<n>\d{1,3})(?: years? old| yrs? old| y/?o)?(?: now| today| this year)?$"),
    _re(r"^i (?:just )?turned (?P<n>\d{1,3})\b"),
)
_ALLERGY = _re(r"^i am (?:severely |very |mildly |highly |a bit )?allergic to (?P<val>.+)$")
_DIET = _re(
    r"^i am (?:an? )?(?:strict |committed |full-time )?"
    r"(?P<val>vegan|vegetarian|pescatarian|pescetarian|flexitarian|teetotal|teetotaler)$"
)
_LIVE = _re(
    r"^i (?:am |have been )?(?:currently |now |still |actually )*(?:live|reside|living|residing|"
    r"based|located) (?P<prep>in|near) (?P<val>.+)$"
)
_MOVED = _re(r"^i (?:have )?(?:just |recently |finally |also )?(?:moved|relocated) to (?P<val>.+)$")
_ORIGIN = (
    (
        _re(r"^i (?:am (?:originally )?|originally )?(?:come )?from (?P<val>.+)$"),
        "origin",
        "is from",
    ),
    (_re(r"^i was born (?:and raised )?in (?P<val>.+)$"), "birthplace", "was born in"),
    (_re(r"^i grew up in (?P<val>.+)$"), "origin", "grew up in"),
)
_EMPLOYER = _re(
    r"^i (?:am |have been |have )?(?:currently |now |still )*(?:work|working|worked|"
    r"(?:just |recently )?(?:got a (?:new )?job|started (?:a new job|working)|landed a job)) "
    r"(?P<prep>at|for) (?P<org>.+?)(?: as (?:an? )?(?P<job>.+))?$"
)
_WORK_AS = _re(r"^i (?:currently |now |still )?work as (?:an? )?(?P<job>.+)$")
_I_AM_A = _re(r"^i am (?P<art>an?) (?P<val>.+?)(?: (?:at|for) (?P<org>[A-Z].*))?$")
_JOB_SUFFIX = re.compile(
    r"(?:er|or|ist|ian|ant|ent|eer|ect|man|woman|person|nurse|chef|cook|pilot|coach|tutor|"
    r"student|judge|vet|medic|clerk|agent|intern|dev|ceo|cto|cfo|officer)$",
    _I,
)
_NOT_JOB = _words(
    "believer lover fan beginner member user customer sucker winner loser fighter survivor "
    "mother father brother sister daughter son parent grandmother grandfather wife husband "
    "partner introvert extrovert ambivert vegetarian christian libertarian leo scorpio "
    "virgo gemini cancer person woman man owner other newcomer"
)
_NOT_IDENTITY = _words("fan lover believer user customer person human mess bit joke")
_VAGUE = _words("bit little lot tad kind sort few couple total complete real huge big")
_JOB_CUT = re.compile(_STOP + r"|\s+(?:and|of|in|by|with|from|who|so|at|for)\b", _I)

_PARTNERS = "wife|husband|partner|spouse|boyfriend|girlfriend|fiance|fiancee|fiancé|fiancée"
_PETS = "dog|cat|puppy|kitten|pet|parrot|hamster|rabbit|bunny|horse|bird|fish|turtle|snake"
_KIN = (
    "sister|brother|mother|mom|mum|father|dad|son|daughter|kid|child|friend|boss|manager|"
    "roommate|cousin|grandmother|grandfather|grandma|grandpa|aunt|uncle|niece|nephew"
)
_REL = (
    r"(?P<rel>(?:(?:best|little|big|older|younger|twin|new|baby|pet) )?"
    r"(?:" + _PARTNERS + "|" + _PETS + "|" + _KIN + r"))"
)
_REL_VALUE = r"(?P<val>" + _NAME_WORD + r"(?: [A-Z][\w'-]*)?)[.!]?$"
_REL_NAMED = _re(r"^my " + _REL + r"(?:'s name is| is named| is called| name is) " + _REL_VALUE)
_HAVE_NAMED = _re(
    r"^i (?:have|have got|got|own) (?:an?|one) " + _REL + r" (?:named|called) " + _REL_VALUE
)
_MARRIED = re.compile(r"^[Ii] am married to (?P<val>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)[.!]?$")
_SLOTS = {"mother": ("mom", "mum"), "father": ("dad",), "boss": ("manager",)}
_HAVE = _re(
    r"^i (?:have|have got|own) (?P<q>an?|one|two|three|four|five|six|\d{1,2}) "
    r"(?P<adj>(?:[a-z-]+ ){0,2}?)(?P<noun>(?:" + _PETS + "|" + _KIN + r"|sibling|twin|"
    r"grandchild|grandkid|car|bike|motorcycle|house|apartment|flat|garden|boat)(?:s|ren|es)?)\b"
)


def _slot(rel: str) -> str | None:
    """The single-valued attribute a relation fills, or None if one can have many."""
    base = rel.split()[-1].lower()
    if re.fullmatch(_PARTNERS, base):
        return "partner"
    if re.fullmatch(_PETS, base):
        return f"pet:{base}:name"
    for slot, aliases in _SLOTS.items():
        if base == slot or base in aliases:
            return slot
    return None


def _name(text: str, name: str) -> list[Extracted]:
    if not (m := _NAME.match(text)):
        return []
    val = m["val"][:1].upper() + m["val"][1:]
    if text.lower().startswith(("call me", "people", "everyone", "you can")) and m["val"].islower():
        return []  # "call me later"
    return _fact(f"{name}'s name is {val}", 0.9, "name", val, (f"what is {name}'s name", "name"))


def _age(text: str, name: str) -> list[Extracted]:
    for pattern in _AGE:
        if (m := pattern.match(text)) and 0 < int(m["n"]) < 130:
            return _fact(
                f"{name} is {int(m['n'])} years old",
                0.85,
                "age",
                str(int(m["n"])),
                (f"how old is {name}", "age"),
            )
    return []


def _allergy(text: str, name: str) -> list[Extracted]:
    if not (m := _ALLERGY.match(text)) or not (val := _value(m["val"], max_words=8)):
        return []
    return _fact(
        f"{name} is allergic to {_third(val)}",
        0.9,
        None,
        val,
        (f"what is {name} allergic to", "allergies"),
    )


def _diet(text: str, name: str) -> list[Extracted]:
    if not (m := _DIET.match(text)):
        return []
    val = m["val"].lower()
    return _fact(f"{name} is {val}", 0.85, "diet", val, (f"what does {name} eat", "diet"))


def _location(text: str, name: str) -> list[Extracted]:
    if m := _LIVE.match(text):
        said = f"lives {m['prep'].lower()}"
    elif m := _MOVED.match(text):
        said = "moved to"
    else:
        return []
    if not (val := _place(m["val"])):
        return []
    return _fact(
        f"{name} {said} {_third(val)}",
        0.85,
        "location",
        val,
        (f"where does {name} live", "home city", "location"),
    )


def _origin(text: str, name: str) -> list[Extracted]:
    for pattern, attribute, said in _ORIGIN:
        if (m := pattern.match(text)) and (val := _place(m["val"])):
            return _fact(
                f"{name} {said} {_third(val)}",
                0.85,
                attribute,
                val,
                (f"where is {name} from", "hometown", attribute),
            )
    return []


def _job_fact(name: str, job: str, confidence: float = 0.85) -> list[Extracted]:
    article = "an" if job[:1].lower() in "aeiou" else "a"
    return _fact(
        f"{name} works as {article} {job}",
        confidence,
        "job_title",
        job,
        (f"what does {name} do for a living", "occupation", "job"),
    )


def _employer(text: str, name: str) -> list[Extracted]:
    if not (m := _EMPLOYER.match(text)) or not (org := _place(m["org"])):
        return []
    out = _fact(
        f"{name} works {m['prep'].lower()} {org}",
        0.85,
        "employer",
        org,
        (f"where does {name} work", "employer", "workplace"),
    )
    if m["job"] and (job := _value(m["job"], stop=_JOB_CUT, max_words=4)):
        out += _job_fact(name, job)
    return out


def _work_as(text: str, name: str) -> list[Extracted]:
    if not (m := _WORK_AS.match(text)) or not (job := _value(m["job"], stop=_JOB_CUT, max_words=4)):
        return []
    return _job_fact(name, job)


def _i_am_a(text: str, name: str) -> list[Extracted]:
    """ "I am a nurse" is a job; "I am an introvert" a looser identity fact."""
    if not (m := _I_AM_A.match(text)):
        return []
    words = m["val"].split()
    if words[0].lower() in _VAGUE:
        return []
    job = _value(m["val"], stop=_JOB_CUT, max_words=4)
    head = job.split()[-1].lower() if job else ""
    if head and head not in _NOT_JOB and _JOB_SUFFIX.search(head):
        out = _job_fact(name, job, 0.8)
        if m["org"] and (org := _place(m["org"])):
            out += _fact(
                f"{name} works at {org}",
                0.8,
                "employer",
                org,
                (f"where does {name} work", "employer"),
            )
        return out
    who = _value(m["val"], max_words=5)
    if not who or who.lower() in _NOT_IDENTITY:
        return []
    return _fact(
        f"{name} is {m['art'].lower()} {_third(who)}", 0.55, None, None, (f"who is {name}",)
    )


def _relation(text: str, name: str) -> list[Extracted]:
    if m := _REL_NAMED.match(text):
        said = f"{name}'s {m['rel'].lower()} is named"
    elif m := _HAVE_NAMED.match(text):
        said = f"{name} has a {m['rel'].lower()} named"
    elif m := _MARRIED.match(text):
        return _fact(
            f"{name} is married to {m['val']}",
            0.85,
            "partner",
            m["val"],
            (f"who is {name}'s partner", "spouse"),
        )
    else:
        return []
    rel, val = m["rel"].lower(), m["val"]
    val = val[:1].upper() + val[1:]
    return _fact(
        f"{said} {val}",
        0.85,
        _slot(rel),
        val,
        (f"{name}'s {rel}", f"who is {name}'s {rel}", f"{rel}'s name"),
    )


def _have(text: str, name: str) -> list[Extracted]:
    if not (m := _HAVE.match(text)):
        return []
    owned = _value(text[m.start("q"):], max_words=10) or f"{m['q']} {m['adj']}{m['noun']}"
    return _fact(f"{name} has {_third(owned)}", 0.75, None, None,
                 (f"does {name} have {m['noun']}",))


# --- habits and experiences -------------------------------------------------------

_HABIT = _re(
    r"^i (?P<adv>usually|normally|typically|generally|often|always|never|rarely|regularly|"
    r"frequently|sometimes) (?P<verb>[a-z]+)\b(?P<rest>.*)$"
)
_WHEN = (
    r"(?:yesterday|today|earlier today|this (?:morning|afternoon|evening|week|weekend|month|year)|"
    r"last (?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|\w+day)|recently|"
    r"on \w+day|(?:a|one|two|three|a few|\d+) (?:days?|weeks?|months?|years?) ago)"
)
_PAST = (
    r"went|visited|finished|completed|attended|traveled|travelled|ran|hiked|climbed|graduated|"
    r"started|began|met|saw|watched|read|bought|adopted|won|tried|joined|learned|learnt|baked|"
    r"cooked|painted|wrote|built|celebrated|spent|took|got|lost|flew|drove|made|had|did|ate|"
    r"\w+ed"
)
_EXPERIENCE = _re(
    r"^(?:(?P<when>" + _WHEN + r"),? )?i (?:just |recently |finally |also |actually )?"
    r"(?P<verb>" + _PAST + r")\b(?P<rest>.*)$"
)
_HAVE_DONE = _re(
    r"^i have (?:just |recently |finally |already |also )?(?P<pp>been to|visited|finished|"
    r"completed|started|read|seen|watched|tried|climbed|run|written|traveled to|travelled to)"
    r"\b(?P<rest>.*)$"
)
_LOOSE_VERBS = frozenset({"got", "had", "made", "did", "took", "tried", "lost"})
_NOT_HABIT_VERBS = frozenset({"can", "will", "would", "should", "could", "might", "must", "am"})


def _habit(text: str, name: str) -> list[Extracted]:
    if not (m := _HABIT.match(text)) or m["verb"].lower() in _NOT_HABIT_VERBS:
        return []
    rest = _value(m["rest"]) if m["rest"].strip() else ""
    said = " ".join(p for p in (m["adv"].lower(), _third_verb(m["verb"]), _third(rest)) if p)
    polarity = -1 if m["adv"].lower() in ("never", "rarely") else 1
    return [
        _hit(Kind.FACT, f"{name} {said}", 0.6, polarity=polarity, query_hints=(f"{name}'s habits",))
    ]


def _experience(text: str, name: str) -> list[Extracted]:
    if m := _HAVE_DONE.match(text):
        head, when, loose = f"has {m['pp'].lower()}", None, False
    elif m := _EXPERIENCE.match(text):
        verb = m["verb"].lower()
        head, when = verb, m["when"]
        loose = verb in _LOOSE_VERBS or (verb.endswith("ed") and not re.fullmatch(_PAST[:-6], verb))
        if loose and not when:
            return []  # "I got confused": only with a time phrase is it an event
    else:
        return []
    rest = _value(m["rest"]) if m["rest"].strip() else ""
    if not rest and not when:
        return []
    content = " ".join(p for p in (name, head, _third(rest), when and when.lower()) if p)
    return [
        _hit(Kind.EXPERIENCE, content, 0.55 if loose else 0.6, query_hints=(f"what did {name} do",))
    ]


_RULES: tuple[Rule, ...] = (
    _name,
    _favourite,
    _dislike,
    _directive,
    _prefer_over,
    _rather,
    _like,
    _age,
    _allergy,
    _diet,
    _location,
    _origin,
    _employer,
    _work_as,
    _relation,
    _have,
    _i_am_a,
    _habit,
    _experience,
)

# --- corrections and the turn loop --------------------------------------------------

_SAID_NOT = _re(r"^i said (?P<x>.+?),? (?:and )?not (?P<y>.+)$")
_MEANT = _re(r"^i meant (?P<x>.+)$")


def _clause(text: str, name: str) -> list[Extracted]:
    text = _TAIL.sub("", text.strip())
    if greeting := _GREETING.match(text):
        if (m := _INTRO.match(text[greeting.end() :])) and m["val"].lower() not in _NOT_VALUES:
            return _fact(
                f"{name}'s name is {m['val']}",
                0.6,
                "name",
                m["val"],
                (f"what is {name}'s name", "name"),
            )
        text = text[greeting.end() :]
    text = _FILLER.sub("", text)
    if not text or _QUESTION.match(text) or _HYPOTHETICAL.search(text):
        return []
    for rule in _RULES:
        if found := rule(text, name):
            return found
    return []


def _statement(sentence: str, name: str) -> list[Extracted]:
    out: list[Extracted] = []
    for part in _CLAUSES.split(sentence):
        out += _clause(part, name)
    return out


def _corrected(rest: str, name: str) -> list[Extracted]:
    """What a correction says: a known pattern, or the sentence itself."""
    if m := _SAID_NOT.match(rest):
        x, y = _value(m["x"], max_words=8), _value(m["y"], max_words=8)
        if x and y:
            return _fact(f"{name} said {_third(x)}, not {_third(y)}", 0.95, None, None, ())
    if m := _MEANT.match(rest):
        found = _statement(m["x"], name)
        if found or not (x := _value(m["x"])):
            return found
        return _fact(f"{name} meant {_third(x)}", 0.9, None, None, ())
    if found := _statement(rest, name):
        return found
    text = _value(rest)
    if (
        len(text.split()) < 2
        or _ACKNOWLEDGE.match(text)
        or _QUESTION.match(text)
        or _HYPOTHETICAL.search(text)
    ):
        return []
    return _fact(f"{name} corrected the assistant: {_third(text)}", 0.9, None, None, ())


def _mark_correction(found: list[Extracted]) -> list[Extracted]:
    return [
        replace(e, confidence=max(e.confidence, 0.95), tags=(*e.tags, "correction")) for e in found
    ]


def _user_text(text: str, name: str) -> list[Extracted]:
    if _SYSTEMISH.match(text):
        return []  # a pasted or restated system prompt is not about the user
    out: list[Extracted] = []
    correcting = False
    for raw in _SENTENCES.split(_normalise(text)):
        sentence = raw.strip()
        if not sentence or sentence.endswith("?"):
            correcting = False
            continue
        if m := _CORRECTION.match(sentence):
            correcting, sentence = True, sentence[m.end() :].strip()
            if not sentence:
                continue  # "No." alone: the next sentence says what is right
        if correcting or _SAID_NOT.match(sentence) or _MEANT.match(sentence):
            out += _mark_correction(_corrected(sentence, name))
        else:
            out += _statement(sentence, name)
        correcting = False
    return out


# --- tool results ---------------------------------------------------------------------

_FAILURE = re.compile(
    r"\b(?:error|errno|exception|traceback|failed|failure|fatal|panic|denied|refused|forbidden|"
    r"unauthori[sz]ed|timed?[\s-]?out|not found|segmentation fault|unreachable|aborted)\b|"
    r"\b\w+(?:Error|Exception)\b|\bexit(?:ed)? (?:with )?(?:code|status) ?[:=]? ?-?[1-9]\d*|"
    r"\bnon-zero exit|\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?: code)?) ?[:=]? ?[45]\d\d\b|"
    r"[\"']?(?:success|ok)[\"']? ?[:=] ?false\b",
    _I,
)
_NOT_FAILURE = re.compile(
    r"[\"']?(?:errors?|exception|failures?)[\"']?\s*[:=]\s*(?:null|none|nil|false|\"\"|''|\[\]|"
    r"\{\}|0\b)|\b(?:0|no) (?:errors?|failures?|failed)\b|\bfailed[:=] ?0\b",
    _I,
)
_EXCEPTION_LINE = re.compile(r"^[\w.]*(?:Error|Exception|Exit|Timeout)\w*\b", _I)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _tool(content: str, tool: str) -> list[Extracted]:
    """A failure with its error line, or a short summary of a result."""
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    if not lines:
        return []
    if _FAILURE.search(_NOT_FAILURE.sub(" ", content)):
        ranked = [ln for ln in lines if _EXCEPTION_LINE.match(ln)] or [
            ln for ln in lines if _FAILURE.search(_NOT_FAILURE.sub(" ", ln))
        ]
        # a traceback ends with its exception; otherwise the first error line says most
        line = ranked[-1] if "traceback" in content.lower() and ranked else (ranked or lines)[0]
        return [
            _hit(
                Kind.TOOL_RESULT,
                f"Tool {tool} failed: {_clip(line, 160)}",
                0.9,
                tags=("tool_failure",),
                query_hints=(tool, f"{tool} error"),
            )
        ]
    return [
        _hit(
            Kind.TOOL_RESULT,
            f"Tool {tool} returned: {_clip(lines[0], 120)}",
            0.4,
            query_hints=(tool, f"{tool} result"),
        )
    ]


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
            tool = turn.tool_name or turn.speaker or "tool"
            return _tool(turn.content, tool)
        if role in _SKIP_ROLES or not (role in _USER_ROLES or (multi_party and turn.speaker)):
            return []
        name = (turn.speaker or subject).strip() or "User"
        limit = len(turn.content) + len(name) + _SLACK
        return [e for e in _user_text(turn.content, name) if len(e.content) <= limit]
