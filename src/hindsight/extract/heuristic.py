"""A deterministic, offline extractor built from regular expressions.

It reads first-person statements from user turns (or from named speakers in a
multi-party conversation) and tool outputs. It never reads assistant or system
turns, questions, hypotheticals or negated states: a missed memory costs less
than a junk one (a request's statements before its question are read: "I prefer
step-by-step answers, can you help?"). Each message is normalised (curly quotes,
contractions), split into sentences and clauses, and each clause is tried against an
ordered list of rules; the first rule that matches wins.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from hindsight.extract.base import PROMPT_BLOCK, Extracted
from hindsight.models import Kind, Tag, Turn
from hindsight.text.timewords import pinned

_I = re.IGNORECASE
_USER_ROLES = frozenset({"user", "human"})
_SKIP_ROLES = frozenset({"system", "developer"})
_TOOL_ROLES = frozenset({"tool", "function", "tool_result", "ipython"})
_MAX_WORDS = 20  # longer captures are more likely mis-parses than memories
_SLACK = 40  # content may exceed the input by the subject's name plus this

Rule = Callable[[str, str], list[Extracted]]


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _I)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- normalisation and sentence shape ----------------------------------------------

_CONTRACTIONS = tuple(
    (_re(p), r)
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
    rf"```.*?```|{PROMPT_BLOCK.pattern}|^\s*>.*?$", re.IGNORECASE | re.DOTALL | re.MULTILINE
)
_SYSTEMISH = _re(
    r"^\s*(?:system\s*:|<\|?system|\[system\]|as an ai\b|you are (?:an? |the )?(?:helpful |"
    r"friendly |expert |smart |ai |)(?:assistant|ai|agent|bot|chatbot|language model))"
)
_SENTENCES = re.compile(
    r"(?<=[.!?])(?<!\bSt\.)(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\be\.g\.)"
    r"(?<!\bi\.e\.)[\s\"')\]]+|\n+"
)
_CLAUSES = _re(r"[,;]?\s+(?:and|but|though|although|whereas|while|so|plus)\s+(?=(?:i|my)\b)|;\s*")
_FILLER = _re(
    r"^(?:(?:well|oh|ah|so|and|but|also|plus|yeah|yes|yep|ok|okay|honestly|personally|frankly|"
    r"basically|anyway|btw|by the way|fyi|lol|haha|um|uh|hmm|fun fact|just so you know|"
    r"for the record|for what it is worth|you know what|to be honest|tbh)\b[\s,:;!.\-]*)+"
)
_GREETING = _re(r"^(?:hi|hello|hey)(?: there)?\b[\s,!.:-]*")
_QUESTION = _re(
    r"^(?:do|does|did|is|are|am|was|were|can|could|would|will|should|shall|may|might|where|"
    r"what|who|whom|whose|when|why|how|which|have|has|had)\b"
)
# "I'm trying to X, and I prefer Y, can you help me?": before the question, the user states
_QUESTION_TAIL = _re(
    r",\s*(?:(?:and|so|but)\s+)?(?:do|does|did|is|are|am|can|could|would|will|should|what|how|"
    r"why|any)\b"
)
_HYPOTHETICAL = _re(
    r"\b(?:if|suppose|supposing|imagine|hypothetically|pretend|wish|unless|whether|maybe|"
    r"perhaps|might|could|should|would(?! (?:much )?rather)|want to|wanna|going to|gonna|"
    r"plan to|planning to|hope to|hoping to|thinking about|thinking of|considering|"
    r"anymore|any more|no longer|used to)\b"
)
_CORRECTION = _re(
    r"^(?:(?:no|nope|nah)(?:[\s,.!:;-]*$|[,.!:;-]+\s*|\s+(?=(?:i|my|it|that|the)\b))|"
    r"(?:actually|not quite|wrong|incorrect|correction)\b[\s,.!:;-]*|"
    r"(?:that is|you are|this is) (?:wrong|not right|incorrect|not true|not correct|"
    r"not what i said|mistaken)\b[\s,.!:;-]*|you got (?:it|that) wrong\b[\s,.!:;-]*)"
)
_CHANGED = _re(r"\b(?:now|nowadays|these days|any ?more|no longer)\b")
_ACKNOWLEDGE = _re(
    r"^(?:i think |i guess )?(?:thanks|thank you|that is fine|it is fine|fine|ok|okay|all good|"
    r"never mind|nevermind|not now|not yet|that is (?:all|it)|I am (?:good|fine|ok|all set))\b"
)


def _normalise(text: str) -> str:
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return _BLOCKS.sub(" ", text)


# --- values and wording ------------------------------------------------------------

_PRONOUNS = _re(r"\b(i am|i was|i have|myself|mine|my|me|i)\b")
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
    r"\s*(?:[,;:(]|\s-\s|\b(?:because|since|although|though|but|which|who|where|when|"
    r"so that|lol|haha|btw)\b)"
)
_VALUE_STOP = _re(_STOP)
_NO_STOP = re.compile(r"(?!)")
_PLACE_STOP = _re(
    _STOP + r"|\s+(?:with|for|and I|now|nowadays|these days|last|this|next|ago|recently|"
    r"a (?:few|couple)|about|around|to be|so|as|in (?:\d{4}|the (?:spring|summer|fall|autumn|"
    r"winter)|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*))\b"
)
_JOB_STOP = _re(_STOP + r"|\s+(?:and|of|in|by|with|from|who|so|at|for)\b")
_TAIL = _re(
    r"(?:\s+(?:a lot|so much|very much|too|as well|really|though|lol|haha|anyway))+\s*$|"
    r"[\s.!,;:\"'-]+$|(?:^|\s+)(?:to|and|or|but|the|a|an|of|with|for)$"  # cut off mid-phrase
)
_NOT_VALUES = _words(
    "it that this you them those these him her everything anything something nothing stuff things"
)
_UNRESOLVED = _words("it them things stuff")
_NOT_PLACES = _words("here there home nowhere somewhere everywhere work school")


def _third(text: str) -> str:
    """Swap first-person pronouns for third-person ones."""
    return _PRONOUNS.sub(lambda m: _PRONOUN_MAP[m.group(0).lower()], text)


def _third_verb(verb: str) -> str:
    low = verb.lower()
    if low in _VERB_3RD:
        return _VERB_3RD[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    return verb[:-1] + "ies" if re.search(r"[^aeiou]y$", low) else verb + "s"


def _value(raw: str, stop: re.Pattern[str] = _VALUE_STOP, max_words: int = _MAX_WORDS) -> str:
    """Cut a captured value at the first clause boundary; '' if unusable."""
    m = stop.search(raw)
    value, prev = raw[: m.start()] if m else raw, ""
    while prev != value:
        prev, value = value, _TAIL.sub("", value).strip()
    words = value.split()
    if not words or len(words) > max_words or value.lower() in _NOT_VALUES:
        return ""
    # "restoring it", "50% of it": what the value is about was said elsewhere (a pronoun
    # later on, "... and it was great", only comments on it; "It" in capitals is a title)
    if _UNRESOLVED & {w.strip(".,;:!?'\"") for w in words[:4]}:
        return ""
    return value if re.search(r"\w", value) else ""


def _place(raw: str) -> str:
    value = _value(raw, _PLACE_STOP, 6)
    return "" if value.lower() in _NOT_PLACES or value.lower() == "the future" else value


def _job(raw: str) -> str:
    return _value(raw, _JOB_STOP, 4)


def _lower(raw: str) -> str:
    return raw.lower()


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _hit(
    kind: Kind,
    content: str,
    confidence: float = 0.85,
    *,
    attribute: str | None = None,
    value: str | None = None,
    hints: tuple[str, ...] = (),
    polarity: int = 1,
    applies_when: str | None = None,
) -> list[Extracted]:
    return [
        Extracted(
            kind,
            content,
            confidence,
            0,
            attribute,
            value,
            hints,
            polarity,
            applies_when=applies_when,
        )
    ]


@dataclass(frozen=True, slots=True)
class _Spec:
    """A one-pattern rule: match, clean the ``val`` group, fill the templates.

    Templates see ``name``, ``val`` (third person), ``a`` (its article) and the
    pattern's other groups lower-cased.
    """

    pattern: re.Pattern[str]
    template: str
    kind: Kind = Kind.FACT
    attribute: str | None = None
    hints: tuple[str, ...] = ()
    confidence: float = 0.85
    clean: Callable[[str], str] = _value

    def __call__(self, text: str, name: str) -> list[Extracted]:
        if not (m := self.pattern.match(text)) or not (val := self.clean(m["val"])):
            return []
        groups = {k: (v or "").lower().strip() for k, v in m.groupdict().items() if k != "val"}
        fill = {**groups, "name": name, "val": _third(val), "a": _article(val)}
        attribute = self.attribute.format(**fill) if self.attribute else None
        hints = tuple(h.format(**fill) for h in self.hints)
        content = self.template.format(**fill)
        return _hit(
            self.kind, content, self.confidence, attribute=attribute, value=val, hints=hints
        )


# --- preferences ----------------------------------------------------------------------

_ADV = (
    r"(?:(?:really|absolutely|just|truly|totally|also|do|genuinely|simply|kind of|kinda|still|"
    r"always|definitely|much|generally|usually|strongly|honestly|actually|now|nowadays) )*"
)
_FAV = r"my (?:all[- ]time |absolute )?favou?rite (?P<cat>(?!thing about|part)[\w -]{1,30}?)"
_FAV_HINTS = ("{name}'s favourite {cat}", "favourite {cat}")
_FAVOURITE = tuple(
    _Spec(
        _re(p), "{name}'s favourite {cat} is {val}", Kind.PREFERENCE, "favourite:{cat}", _FAV_HINTS
    )
    for p in (rf"^{_FAV} (?:is|are) (?P<val>.+)$", rf"^(?P<val>.+?) (?:is|are) {_FAV}$")
)
_RATHER = _Spec(
    _re(r"^i would (?:much )?rather (?P<val>.+)$"),
    "{name} would rather {val}",
    Kind.PREFERENCE,
    hints=("what does {name} prefer",),
    confidence=0.8,
)
_DISLIKE = _re(
    r"^i " + _ADV + r"(?P<verb>hate|dislike|detest|loathe|despise|cannot stand|do not like|"
    r"do not enjoy|do not care for|am not (?:a |really )?(?:big |huge )?(?:fan of|into)) "
    r"(?P<val>.+)$"
)
_HATES = _words("hate detest loathe despise")
_DIRECTIVE = _re(
    r"^(?:please,? )?(?:(?:you should|you must|make sure to|be sure to) )?(?P<w>always|never) "
    r"(?P<rest>.+?)(?:,? please)?$|^(?:from now on|going forward|in (?:the )?future),? "
    r"(?:please,? )?(?P<w2>)(?P<rest2>(?!i\b).+)$"
)
_PAST = _re(
    r"^(?:\w*[^\We]ed|saw|heard|knew|thought|had|was|were|got|felt|said|did|went|came|took|made|"
    r"gave|found|told|been)\b"
)
_NOT_ACTION = _re(r"^(?:happy|glad|ready|here|there|good|great|fun|nice|so|such|a|an|the)\b")
_WHEN_ASKED = _re(
    r"\b(?:when(?:ever)?|if) (?:i|we) (?:ask|talk|inquire|am asking|are asking|need help)"
    r"(?: you)? (?:about|for|with|on) (?P<topic>.+?)[.!]*$"
)
_PREFER_OVER = _re(
    r"^i " + _ADV + r"prefer (?!to\b)(?P<x>.+?) (?P<sep>over|to|rather than|instead of|more than) "
    r"(?P<y>.+)$"
)
# "prefer X to Y" compares like with like ("walking to driving", "tea to coffee"); "prefer
# batches of five to manage replies" names a purpose, not a rival
_PURPOSE = frozenset(
    """keep make get help avoid ensure maintain manage understand improve reduce increase save
    stay learn see grasp focus build meet stick track boost fit catch cut""".split()  # noqa: SIM905
)
_LIKE = _re(
    r"^i " + _ADV + r"(?P<verb>like|love|enjoy|adore|prefer|am (?:really )?into|am (?:a |an )?"
    r"(?:big |huge |massive |great |avid )?fan of|am passionate about) (?P<val>.+)$"
)
_LIST = re.compile(r"[\w' -]{1,30}(?:, [\w' -]{1,30})*,? (?:and|or) [\w' -]{1,30}[.!]*")
# "I love that idea", "I like the second option": about this chat, not the user
_DEICTIC = _re(
    r"(?:that|this|it|how|what|the way|your|you|those|these)\b|(?:the|that|this) (?:\w+ )?"
    r"(?:one|option|version|answer|response|suggestion|idea|approach|solution)s?\b"
)


def _dislike(text: str, name: str) -> list[Extracted]:
    if not (m := _DISLIKE.match(text)) or not (val := _value(m["val"])) or _DEICTIC.match(val):
        return []
    verb = m["verb"].lower()
    said = "hates" if verb in _HATES else "can't stand" if verb == "cannot stand" else "dislikes"
    hints = (f"what does {name} dislike", f"{name} dislikes")
    return _hit(
        Kind.PREFERENCE,
        f"{name} {said} {_third(val)}",
        attribute=_taste(val),
        value=val,
        hints=hints,
        polarity=-1,
    )


def _directive(text: str, name: str) -> list[Extracted]:
    if not (m := _DIRECTIVE.match(text)):
        return []
    word = (m["w"] or "").lower()
    raw = m["rest"] or m["rest2"]
    if not (rest := _value(raw)) or _PAST.match(rest) or _NOT_ACTION.match(rest):
        return []  # "Never saw this coming!", "Always happy to help!": no instruction
    action = f"{word} {_third(rest)}".strip()
    hints: tuple[str, ...] = ("how should the assistant respond", f"{name}'s instructions")
    polarity = -1 if word == "never" else 1
    content = f"{name} wants the assistant to {action}"
    # "... when I ask about deadlines": when it applies is what a later request matches
    applies_when = None
    if (when := _WHEN_ASKED.search(raw)) and (topic := _value(when["topic"])):
        applies_when = _third(topic)
        content += f" when {name} asks about {applies_when}"
        hints = (topic, *hints)
    return _hit(Kind.PREFERENCE, content, hints=hints, polarity=polarity, applies_when=applies_when)


def _prefer_over(text: str, name: str) -> list[Extracted]:
    if not (m := _PREFER_OVER.match(text)):
        return []
    if not (x := _value(m["x"], max_words=8)) or not (y := _value(m["y"], max_words=8)):
        return []
    if x != m["x"].strip():
        return []  # X ended at a clause boundary: what follows does not compare with it
    if m["sep"].lower() == "to" and not _rivals(x, y):
        return []
    hints = (f"what does {name} prefer", f"{x} or {y}")
    content = f"{name} prefers {_third(x)} over {_third(y)}"
    return _hit(Kind.PREFERENCE, content, value=x, hints=hints)


def _rivals(x: str, y: str) -> bool:
    """Whether "prefer X to Y" compares two things of a kind rather than giving a purpose."""
    first_x, first_y = x.split()[0].lower(), y.split()[0].lower()
    if first_y in _PURPOSE or first_y.endswith("ly"):
        return False
    return first_x.endswith("ing") == first_y.endswith("ing")


def _like(text: str, name: str) -> list[Extracted]:
    if not (m := _LIKE.match(text)):
        return []
    val = _value(m["val"], _NO_STOP) if _LIST.fullmatch(m["val"]) else _value(m["val"])
    if not val or _DEICTIC.match(val):
        return []
    verb = m["verb"].lower()
    said = "is " + verb[3:] if verb.startswith("am ") else _third_verb(verb)
    hints = (f"what does {name} like", f"{name} likes")
    return _hit(
        Kind.PREFERENCE,
        f"{name} {said} {_third(val)}",
        attribute=_taste(val),
        value=val,
        hints=hints,
    )


def _taste(value: str) -> str:
    """The slot a like or dislike fills: "I hate coffee" then "I now love coffee" change
    one taste (the later supersedes the earlier), where "I love tea" is another."""
    return f"taste:{value.lower()}"


# --- facts ------------------------------------------------------------------------------

_LOCATION_HINTS = ("where does {name} live", "home city", "location")
_ORIGIN_HINTS = ("where is {name} from", "hometown", "origin")
_WORK_HINTS = ("what does {name} do for a living", "occupation", "job")
_EMPLOYER_HINTS = ("where does {name} work", "employer", "workplace")
_SIMPLE_FACTS = (
    _Spec(
        _re(r"^i am (?:severely |very |mildly |highly |a bit )?allergic to (?P<val>.+)$"),
        "{name} is allergic to {val}",
        hints=("what is {name} allergic to", "allergies"),
        confidence=0.9,
    ),
    _Spec(
        _re(
            r"^i am (?:an? )?(?:strict |committed )?(?P<val>vegan|vegetarian|pescatarian|"
            r"pescetarian|flexitarian|teetotal)$"
        ),
        "{name} is {val}",
        attribute="diet",
        hints=("what does {name} eat", "diet"),
        clean=_lower,
    ),
    _Spec(
        _re(
            r"^i (?:am |have been )?(?:currently |now |still |actually )*(?:live|reside|living|"
            r"residing|based|located) (?P<prep>in|near) (?P<val>.+)$"
        ),
        "{name} lives {prep} {val}",
        attribute="location",
        hints=_LOCATION_HINTS,
        clean=_place,
    ),
    _Spec(
        _re(r"^i (?:have )?(?:just |recently |finally |also )?(?:moved|relocated) to (?P<val>.+)$"),
        "{name} moved to {val}",
        attribute="location",
        hints=_LOCATION_HINTS,
        clean=_place,
    ),
    _Spec(
        _re(r"^i (?:am (?:originally )?|originally )?(?:come )?from (?P<val>.+)$"),
        "{name} is from {val}",
        attribute="origin",
        hints=_ORIGIN_HINTS,
        clean=_place,
    ),
    _Spec(
        _re(r"^i was born (?:and raised )?in (?P<val>.+)$"),
        "{name} was born in {val}",
        attribute="birthplace",
        hints=_ORIGIN_HINTS,
        clean=_place,
    ),
    _Spec(
        _re(r"^i grew up in (?P<val>.+)$"),
        "{name} grew up in {val}",
        attribute="origin",
        hints=_ORIGIN_HINTS,
        clean=_place,
    ),
    _Spec(
        _re(r"^i (?:currently |now |still )?work as (?:an? )?(?P<val>.+)$"),
        "{name} works as {a} {val}",
        attribute="job_title",
        hints=_WORK_HINTS,
        clean=_job,
    ),
    _Spec(
        re.compile(r"^[Ii] am married to (?P<val>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)[.!]?$"),
        "{name} is married to {val}",
        attribute="partner",
        hints=("who is {name}'s partner", "spouse"),
    ),
)
_NAME = _re(
    r"^(?:my name is|i am called|i go by|people call me|everyone calls me|you can call me|"
    r"call me) (?P<val>[A-Za-z][\w'-]*(?: [A-Z][\w'-]*){0,2})[.!]?$"
)
_INTRO = re.compile(r"^(?:I am|this is) (?P<val>[A-Z][a-z'-]+(?: [A-Z][a-z'-]+)?)[.!]?$")
_AGE = _re(
    r"^i am (?P<n>\d{1,3})(?: years? old| yrs? old| y/?o)?(?: now| today| this year)?$|"
    r"^i (?:just )?turned (?P<m>\d{1,3})\b"
)
_EMPLOYER = _re(
    r"^i (?:am |have been |have )?(?:currently |now |still )*(?:work|working|worked|"
    r"(?:just |recently )?(?:got a (?:new )?job|started (?:a new job|working)|landed a job)) "
    r"(?P<prep>at|for) (?P<org>.+?)(?: as (?:an? )?(?P<job>.+))?$"
)
_I_AM_A = _re(r"^i am (?P<art>an?) (?P<val>.+?)(?: (?:at|for) (?P<org>[A-Z].*))?$")
_JOB_SUFFIX = _re(
    r"(?:er|or|ist|ian|ant|ent|eer|ect|man|woman|person|nurse|chef|cook|pilot|coach|tutor|"
    r"student|judge|vet|medic|clerk|agent|intern|dev|ceo|cto|cfo|officer)$"
)
_NOT_JOB = _words(
    "believer lover fan beginner member user customer sucker winner loser fighter survivor "
    "mother father brother sister daughter son parent grandmother grandfather wife husband "
    "partner introvert extrovert ambivert vegetarian christian libertarian leo scorpio "
    "virgo gemini cancer person woman man owner other newcomer"
)
_NOT_IDENTITY = _words("fan lover believer user customer person human mess bit joke")
_VAGUE = _words("bit little lot tad kind sort few couple total complete real huge big")
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
    _re(rf"^my {_REL}(?:'s name is| is named| is called| name is) {_REL_VALUE}"),
    _re(rf"^i (?P<has>have|have got|got|own) (?:an?|one) {_REL} (?:named|called) {_REL_VALUE}"),
)
_SLOTS = {"mother": "mother mom mum", "father": "father dad", "boss": "boss manager"}
_HAVE = _re(
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


def _name(text: str, name: str) -> list[Extracted]:
    if not (m := _NAME.match(text)):
        return []
    if text.lower().startswith(("call me", "people", "everyone", "you can")) and m["val"].islower():
        return []  # "call me later"
    val = m["val"][:1].upper() + m["val"][1:]
    hints = (f"what is {name}'s name", "name")
    return _hit(Kind.FACT, f"{name}'s name is {val}", 0.9, attribute="name", value=val, hints=hints)


def _age(text: str, name: str) -> list[Extracted]:
    if not (m := _AGE.match(text)) or not (0 < (age := int(m["n"] or m["m"])) < 130):
        return []
    hints = (f"how old is {name}", "age")
    return _hit(
        Kind.FACT, f"{name} is {age} years old", attribute="age", value=str(age), hints=hints
    )


def _job_fact(name: str, job: str, confidence: float = 0.85) -> list[Extracted]:
    content = f"{name} works as {_article(job)} {job}"
    hints = tuple(h.format(name=name) for h in _WORK_HINTS)
    return _hit(Kind.FACT, content, confidence, attribute="job_title", value=job, hints=hints)


def _employer_fact(name: str, org: str, prep: str, confidence: float = 0.85) -> list[Extracted]:
    hints = tuple(h.format(name=name) for h in _EMPLOYER_HINTS)
    content = f"{name} works {prep.lower()} {org}"
    return _hit(Kind.FACT, content, confidence, attribute="employer", value=org, hints=hints)


def _employer(text: str, name: str) -> list[Extracted]:
    if not (m := _EMPLOYER.match(text)) or not (org := _place(m["org"])):
        return []
    job = _job(m["job"]) if m["job"] else ""
    return _employer_fact(name, org, m["prep"]) + (_job_fact(name, job) if job else [])


def _i_am_a(text: str, name: str) -> list[Extracted]:
    """'I am a nurse' is a job; 'I am an introvert' a looser identity fact."""
    if not (m := _I_AM_A.match(text)) or m["val"].split()[0].lower() in _VAGUE:
        return []
    job = _job(m["val"])
    head = job.split()[-1].lower() if job else ""
    if head and head not in _NOT_JOB and _JOB_SUFFIX.search(head):
        org = _place(m["org"]) if m["org"] else ""
        return _job_fact(name, job, 0.8) + (_employer_fact(name, org, "at", 0.8) if org else [])
    who = _value(m["val"], max_words=5)
    if not who or who.lower() in _NOT_IDENTITY:
        return []
    content = f"{name} is {m['art'].lower()} {_third(who)}"
    return _hit(Kind.FACT, content, 0.55, hints=(f"who is {name}",))


def _relation(text: str, name: str) -> list[Extracted]:
    if not (m := _RELATION[0].match(text) or _RELATION[1].match(text)):
        return []
    rel, val = m["rel"].lower(), m["val"][:1].upper() + m["val"][1:]
    has = "has" in m.groupdict()
    said = f"{name} has a {rel} named" if has else f"{name}'s {rel} is named"
    hints = (f"{name}'s {rel}", f"who is {name}'s {rel}", f"{rel}'s name")
    return _hit(Kind.FACT, f"{said} {val}", attribute=_slot(rel), value=val, hints=hints)


def _have(text: str, name: str) -> list[Extracted]:
    if not (m := _HAVE.match(text)):
        return []
    owned = _value(text[m.start("q") :], max_words=10) or f"{m['q']} {m['adj']}{m['noun']}"
    hints = (f"does {name} have {m['noun']}",)
    return _hit(Kind.FACT, f"{name} has {_third(owned)}", 0.75, hints=hints)


# --- habits and experiences ----------------------------------------------------------------

_HABIT = _re(
    r"^i (?P<adv>usually|normally|typically|generally|often|always|never|rarely|regularly|"
    r"frequently|sometimes) (?P<verb>[a-z]+)\b(?P<rest>.*)$"
)
_WHEN = (
    r"(?:yesterday|today|earlier today|this (?:morning|afternoon|evening|week|weekend|month|"
    r"year)|last (?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|\w+day)|"
    r"recently|on \w+day|(?:a|one|two|three|a few|\d+) (?:days?|weeks?|months?|years?) ago)"
)
_KNOWN_PAST = (
    r"went|visited|finished|completed|attended|traveled|travelled|ran|hiked|climbed|graduated|"
    r"started|began|met|saw|watched|read|bought|adopted|won|tried|joined|learned|learnt|baked|"
    r"cooked|painted|wrote|built|celebrated|spent|took|got|lost|flew|drove|made|had|did|ate"
)
_EXPERIENCE = _re(
    rf"^(?:(?P<when>{_WHEN}),? )?i (?:just |recently |finally |also |actually )?"
    rf"(?P<verb>{_KNOWN_PAST}|\w+ed)\b(?P<rest>.*)$"
)
_HAVE_DONE = _re(
    r"^i have (?:just |recently |finally |already |also )?(?P<pp>been to|visited|finished|"
    r"completed|started|read|seen|watched|tried|climbed|run|written|traveled to|travelled to)"
    r"\b(?P<rest>.*)$"
)
_LOOSE_VERBS = _words("got had made did took tried lost")
_NOT_HABIT_VERBS = _words("can will would should could might must am")


def _habit(text: str, name: str) -> list[Extracted]:
    if not (m := _HABIT.match(text)) or m["verb"].lower() in _NOT_HABIT_VERBS:
        return []
    if _PAST.match(m["verb"]) or m["verb"].lower().endswith("ly"):
        return []  # "I never decided", "I never really asked": no verb to conjugate
    rest = _value(m["rest"]) if m["rest"].strip() else ""
    if m["rest"].strip() and not rest:
        return []  # "I typically hold it for a minute": without its object it says nothing
    said = " ".join(p for p in (m["adv"].lower(), _third_verb(m["verb"]), _third(rest)) if p)
    polarity = -1 if m["adv"].lower() in ("never", "rarely") else 1
    hints = (f"{name}'s habits",)
    return _hit(Kind.FACT, f"{name} {said}", 0.6, hints=hints, polarity=polarity)


def _experience(text: str, name: str) -> list[Extracted]:
    if m := _HAVE_DONE.match(text):
        head, when, loose = f"has {m['pp'].lower()}", None, False
    elif m := _EXPERIENCE.match(text):
        head, when = m["verb"].lower(), m["when"]
        loose = head in _LOOSE_VERBS or not re.fullmatch(_KNOWN_PAST, head)
        if loose and not when:
            return []  # "I got confused": only with a time phrase is it an event
    else:
        return []
    rest = _value(m["rest"]) if m["rest"].strip() else ""
    if not rest and not when:
        return []
    content = " ".join(p for p in (name, head, _third(rest), when and when.lower()) if p)
    return _hit(Kind.EXPERIENCE, content, 0.55 if loose else 0.6, hints=(f"what did {name} do",))


_RULES: tuple[Rule, ...] = (
    _name,
    *_FAVOURITE,
    _dislike,
    _directive,
    _prefer_over,
    _RATHER,
    _like,
    _age,
    *_SIMPLE_FACTS,
    _employer,
    _relation,
    _have,
    _i_am_a,
    _habit,
    _experience,
)

# --- clauses, sentences, corrections ------------------------------------------------------

_SAID_NOT = _re(r"^i said (?P<x>.+?),? (?:and )?not (?P<y>.+)$")
_MEANT = _re(r"^i meant (?P<x>.+)$")


def _clause(text: str, name: str) -> list[Extracted]:
    text = _TAIL.sub("", text.strip())
    if greeting := _GREETING.match(text):
        text = text[greeting.end() :]
        if (m := _INTRO.match(text)) and m["val"].lower() not in _NOT_VALUES:
            hints = (f"what is {name}'s name", "name")
            content = f"{name}'s name is {m['val']}"
            return _hit(Kind.FACT, content, 0.6, attribute="name", value=m["val"], hints=hints)
    text = _FILLER.sub("", text)
    if not text or _QUESTION.match(text) or _HYPOTHETICAL.search(text):
        return []
    return next((found for rule in _RULES if (found := rule(text, name))), [])


_AND = _re(r"\s+and\s+")


def _statement(sentence: str, name: str) -> list[Extracted]:
    return [e for part in _CLAUSES.split(sentence) for e in _coordinated(part, name)]


def _coordinated(part: str, name: str) -> list[Extracted]:
    """A clause, or two that share their subject: "I live in Lyon and work as a sound
    engineer" states where and what, not that the user lives in "Lyon and work". Split
    at an "and" only where both sides say something on their own."""
    for joint in _AND.finditer(part):
        rest = part[joint.end() :]
        if rest[:1].isupper() or rest.lower().startswith(("i ", "my ")):
            continue  # "Tom and Jerry"; "and I ..." is split already
        second = _clause(f"I {rest}", name)
        first = _clause(part[: joint.start()], name) if second else []
        if first:
            return first + second
    return _clause(part, name)


def _corrected(rest: str, name: str) -> list[Extracted]:
    """What a correction says: a known pattern, or the sentence itself."""
    if m := _SAID_NOT.match(rest):
        x, y = _value(m["x"], max_words=8), _value(m["y"], max_words=8)
        if x and y:
            return _hit(Kind.FACT, f"{name} said {_third(x)}, not {_third(y)}", 0.95)
    if m := _MEANT.match(rest):
        if (found := _statement(m["x"], name)) or not (x := _value(m["x"])):
            return found
        return _hit(Kind.FACT, f"{name} meant {_third(x)}", 0.9)
    if found := _statement(rest, name):
        return found
    text = _value(rest)
    if len(text.split()) < 2 or _ACKNOWLEDGE.match(text) or _QUESTION.match(text):
        return []
    if _HYPOTHETICAL.search(text):
        return []
    right = _third(text)
    return [
        replace(e, detail=right)
        for e in _hit(Kind.FACT, f"{name} corrected the assistant: {right}", 0.9)
    ]


def _stated_before_question(sentence: str) -> str:
    """What a sentence ending in a question states before asking, or "" if it only asks."""
    if _QUESTION.match(sentence) or not (tail := _QUESTION_TAIL.search(sentence)):
        return ""
    return sentence[: tail.start()].strip()


def _as_correction(found: list[Extracted]) -> list[Extracted]:
    tags = (Tag.CORRECTION,)
    return [replace(e, confidence=max(e.confidence, 0.95), tags=e.tags + tags) for e in found]


def _sentences(text: str, *, to_assistant: bool) -> Iterator[tuple[str, bool]]:
    """A user's message, a sentence at a time, each with whether it corrects the
    assistant; ``to_assistant`` False for people talking to each other, where "No, ..."
    answers a question instead of correcting an assistant."""
    correcting = False
    for raw in _SENTENCES.split(_normalise(text)):
        sentence = raw.strip()
        if sentence.endswith("?"):
            sentence = _stated_before_question(sentence)
        if not sentence:
            correcting = False
            continue
        if m := _CORRECTION.match(sentence):
            sentence = sentence[m.end() :].strip()
            # "Actually I now love coffee": the user changed, the assistant erred in nothing
            correcting = to_assistant and not _CHANGED.search(sentence)
            if not sentence:
                continue  # "No." alone: the next sentence says what is right
        said_not = _SAID_NOT.match(sentence) or _MEANT.match(sentence)
        yield sentence, bool(correcting or (said_not and to_assistant))
        correcting = False


def _user_text(text: str, name: str, *, to_assistant: bool = True) -> list[Extracted]:
    """What a user's message states."""
    if _SYSTEMISH.match(text):
        return []  # a pasted or restated system prompt is not about the user
    out: list[Extracted] = []
    for sentence, correcting in _sentences(text, to_assistant=to_assistant):
        out += (
            _as_correction(_corrected(sentence, name)) if correcting else _statement(sentence, name)
        )
    return out


# --- tool results -----------------------------------------------------------------------

_FAILURE = _re(
    r"\b(?:error|errno|exception|traceback|failed|failure|fatal|panic|denied|refused|forbidden|"
    r"unauthori[sz]ed|timed?[\s-]?out|not found|segmentation fault|unreachable|aborted)\b|"
    r"\b\w+(?:Error|Exception)\b|\bexit(?:ed)? (?:with )?(?:code|status) ?[:=]? ?-?[1-9]\d*|"
    r"\bnon-zero exit|\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?: code)?) ?[:=]? ?[45]\d\d\b|"
    r"[\"']?(?:success|ok)[\"']? ?[:=] ?false\b"
)
_NOT_FAILURE = _re(
    r"[\"']?(?:errors?|exception|failures?)[\"']?\s*[:=]\s*(?:null|none|nil|false|\"\"|''|"
    r"\[\]|\{\}|0\b)|\b(?:0|no) (?:errors?|failures?|failed)\b|\bfailed[:=] ?0\b"
)
_EXCEPTION_LINE = _re(r"^[\w.]*(?:Error|Exception|Exit|Timeout)\w*\b")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _failed(text: str) -> bool:
    return bool(_FAILURE.search(_NOT_FAILURE.sub(" ", text)))


def _tool(content: str, name: str | None) -> list[Extracted]:
    """A failure with its error line, or a short summary of a result ("Tool weather
    returned: ...", or "A tool returned: ..." when the turn names none)."""
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    if not lines:
        return []
    tool, said = (name, f"Tool {name}") if name else ("tool", "A tool")
    if not _failed(content):
        line = _clip(lines[0], 120)
        hints = (tool, f"{tool} result")
        found = _hit(Kind.TOOL_RESULT, f"{said} returned: {line}", 0.4, hints=hints)
        return [replace(e, tool=tool, detail=line) for e in found]
    errors = [ln for ln in lines if _EXCEPTION_LINE.match(ln)] or [
        ln for ln in lines if _failed(ln)
    ]
    # a traceback ends with its exception; otherwise the first error line says most
    line = errors[-1] if errors and "traceback" in content.lower() else (errors or lines)[0]
    line = _clip(line, 160)
    found = _hit(Kind.TOOL_RESULT, f"{said} failed: {line}", 0.9, hints=(tool, f"{tool} error"))
    return [replace(e, tags=(Tag.TOOL_FAILURE,), tool=tool, detail=line) for e in found]


def events(turn: Turn) -> frozenset[Tag]:
    """The events a turn states, found without extracting the rest of it: a failed tool
    call, or the user correcting the assistant (the same :class:`Tag` that extraction
    gives the turn when it stands alone)."""
    role = turn.role.strip().lower()
    if role in _TOOL_ROLES:
        failed = bool(turn.content.strip()) and _failed(turn.content)
        return frozenset({Tag.TOOL_FAILURE}) if failed else frozenset()
    if role not in _USER_ROLES or _SYSTEMISH.match(turn.content):
        return frozenset()
    name = (turn.speaker or "User").strip() or "User"
    corrects = any(
        _corrected(sentence, name)
        for sentence, correcting in _sentences(turn.content, to_assistant=True)
        if correcting
    )
    return frozenset({Tag.CORRECTION}) if corrects else frozenset()


_DONE = _re(
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
    text = _normalise(turn.content)
    if role not in _SKIP_ROLES and _DONE.search(text) and not _QUESTION.match(text):
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
            return _tool(turn.content, turn.tool_name or turn.speaker)
        if role in _SKIP_ROLES or not (role in _USER_ROLES or (multi_party and turn.speaker)):
            return []
        name = (turn.speaker or subject).strip() or "User"
        limit = len(turn.content) + len(name) + _SLACK
        found = [
            e
            for e in _user_text(turn.content, name, to_assistant=not multi_party)
            if len(e.content) <= limit
        ]
        if turn.observed_at is None:
            return found
        # "... last week" would mean another week when read later: say which week
        return [replace(e, content=pinned(e.content, turn.observed_at)) for e in found]
