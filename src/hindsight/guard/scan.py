"""The safety scan: what in a text addresses the agent, sends data away, hides itself,
weakens security, or is a secret.

:func:`scan` reads a text as a model would see it and as a person would not: zero-width
characters are removed, HTML and markdown comments are read, and long base64 runs are
decoded, before the patterns below look at it. It returns the flags it found, each
with the piece of text that raised it; :func:`redact` replaces secrets.

The patterns describe how an attack is shaped, not what one says: a text that speaks
to an AI ("Note to AI assistants", "SYSTEM:"), overrides its instructions ("ignore
previous instructions"), scripts its future answers ("when the user asks about X,
tell them Y", "for any question about X"), tells it to keep a secret from the user,
or asks for credentials or personal data to be sent to an address. The same words are
legitimate from the user ("always answer me in French"): the guard scans only what
comes from sources it does not trust as it trusts the user.
"""

from __future__ import annotations

import base64
import binascii
import enum
import re
import unicodedata
from dataclasses import dataclass
from typing import Final


class Flag(enum.StrEnum):
    """What the scan found in a text."""

    INSTRUCTION = "instruction"  # addresses the agent: orders, role claims, scripted answers
    EXFILTRATION = "exfiltration"  # asks for data to be sent somewhere
    HIDDEN = "hidden"  # hides text: zero-width characters, comments, hidden HTML, base64
    UNSAFE_ACTION = "unsafe_action"  # a step that weakens security (curl | sh, verify=False)
    SECRET = "secret"  # held a secret: an API key, a card number, a password


# Flags that make an untrusted memory an attack, not data (SECRET is redacted instead;
# HIDDEN text is scanned as revealed, and is not an attack by itself).
ATTACKS: Final = frozenset({Flag.INSTRUCTION, Flag.EXFILTRATION, Flag.UNSAFE_ACTION})


@dataclass(frozen=True, slots=True)
class Finding:
    flag: Flag
    evidence: str  # the text that raised it (shortened)


_I = re.IGNORECASE
_ZERO_WIDTH = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\u00ad]")
_HIDING = re.compile(
    r"<!--(.*?)-->|\[//\]:\s*#\s*\((.*?)\)|<[^>]+(?:display\s*:\s*none|visibility\s*:\s*hidden"
    r"|font-size\s*:\s*0)[^>]*>(.*?)</",
    _I | re.DOTALL,
)
_BASE64 = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")
# a word written with digits for letters ("4lw4ys", "wh3n"), and what each digit stands for
_LEET = re.compile(r"\b(?=[a-z0-9]*[a-z])(?=[a-z0-9]*[013457])[a-z0-9]{2,}\b", re.IGNORECASE)
_UNLEET = str.maketrans("013457", "oieast")
_LEET_WORDS: Final = 4  # so many such words before a text is read so (not "mp3", "4G")
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){16,}\b")

_Rule = tuple[tuple[tuple[str, ...], ...], re.Pattern[str]]
"""A pattern, and the words it cannot match without: one of each group, in the lowered
text (a cheap test that spares most texts the pattern)."""


def _rule(needles: tuple[tuple[str, ...], ...], pattern: re.Pattern[str]) -> _Rule:
    return needles, pattern


def _first(rules: list[_Rule], shown: str, low: str) -> re.Match[str] | None:
    for needles, pattern in rules:
        wanted = all(any(n in low for n in group) for group in needles)
        if wanted and (match := pattern.search(shown)):
            return match
    return None


_AI = (
    r"(?:ai|llm|language|automated|virtual)?\s*"
    r"(?:assistants?|agents?|models?|bots?|chatbots?|ais?|llms?)"
)
# who reads a memory: the assistant, by any of its names
_READER_WORDS: Final = (
    "assistant",
    "agent",
    "model",
    "bot",
    "ai",
    "llm",
    "copilot",
    "notetaker",
    "gpt",
    "helper",
    "automation",
)
_READER = (
    r"(?:(?:ai|llm|language|automated|virtual|digital)\s+)?(?:assistants?|agents?|models?|bots?|"
    r"chatbots?|ais?|llms?|copilots?|notetakers?|gpts?|helpers?|automations?)"
)
# the assistant in the languages a page may be written in: assistant(e), Assistent(en),
# asistente(s), asystent, KI-/AI-Assistent; a note to it, in the same languages
_READER_ANY = r"(?:(?:ki|ai|ia)-?)?(?:assist[ae]nt|asist[ae]nt|asystent)\w*"
_NOTE_ANY = (
    r"(?:note|notice|hinweis|nota|notitie|uwaga|remarque|aviso|avis|memo|instructions?|"
    r"anweisung|consigne)\s+(?:to|for|an|f\u00fcr|pour|para|per|voor|dla|\u00e0|aos?|al|alla?|ai)"
)
# the verbs of an order about what to answer or do
_ORDER = (
    r"approve|answer|reply|respond|tell|say|recommend|advise|direct|redirect|send|forward|"
    r"refer|route|treat|grant|refuse|deny|mention|suggest|offer|insist|inform|instruct|"
    r"ask\s+(?:the\s+)?(?:user|customer|client|patient|guest)"
)
# the verbs that script an answer, as the needles of the rule that finds one
_ANSWERS: Final = (
    *("tell", "answer", "say", "respond", "reply", "inform", "claim", "state", "explain"),
    *("recommend", "advise", "walk", "guide", "suggest", "direct", "point", "send"),
)
_INSTRUCTION: Final[list[_Rule]] = [
    # speaks to the model that reads it
    _rule(
        (
            ("note", "message", "instruction", "notice", "reminder"),
            ("assistant", "agent", "model", "bot", "ai", "llm"),
        ),
        re.compile(
            rf"\b(?:note|message|instructions?|notice|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?{_AI}\b",
            _I,
        ),
    ),
    _rule(
        (("assistant", "agent", "model", "system"), ("ai", "llm", "automated", "virtual")),
        # spoken to, not spoken of: "AI assistant, when ..." (not "our virtual assistant
        # answers billing questions")
        re.compile(
            r"(?<!\bour )(?<!\bthe )(?<!\byour )(?<!\bmy )(?<!\ba )(?<!\ban )(?<!\bthis )"
            r"\b(?:ai|llm|automated|virtual)\s+(?:assistants?|agents?|models?|systems?)\b"
            r"(?!\s+(?:is|are|was|will|can|answers?|handles?|helps?|available|feature|chat)\b)",
            _I,
        ),
    ),
    _rule(
        (("assistant",),),
        re.compile(r"\bassistant\s+(?:instructions?|note|directive)\b", _I),
    ),
    _rule(
        (
            ("dear", "attention", "hey", "hello", "to the", "if you are"),
            ("assistant", "agent", "model", "bot", "ai", "llm"),
        ),
        re.compile(rf"\b(?:dear|attention|hey|hello|to\s+the|if\s+you\s+are\s+an?)\s+{_AI}\b", _I),
    ),
    _rule(
        (("prompt", "instructions", " mode"),),
        re.compile(
            r"\b(?:reveal|print|output|repeat|show)\s+(?:your|the)\s+(?:system\s+prompt|"
            r"instructions|hidden\s+prompt)\b|\b(?:developer|jailbreak|god)\s+mode\b",
            _I,
        ),
    ),
    _rule(
        (("system", "assistant", "developer", "agent"),),
        re.compile(
            r"(?:^|[\n|.!\"']\s*|\[)\s*(?:system|assistant|developer|agents?)\s*(?::|\])", _I
        ),
    ),
    _rule(
        (("im_start", "system", "inst"),),
        re.compile(r"<\|?(?:im_start|system|inst)\|?>|\[/?inst\]", _I),
    ),
    # a note to the assistant, in whatever language: "Note pour l'assistant numérique :",
    # "Hinweis an KI-Assistenten:", "Para los asistentes de IA:"
    _rule(
        (("assist", "asist", "asyst"),),
        re.compile(
            rf"\b{_NOTE_ANY}\s+(?:[\w'\u2019]+\s+){{0,2}}?(?:l['\u2019])?{_READER_ANY}\b"
            rf"|\b(?:para|pour|f\u00fcr|per|voor|dla|to|for)\s+(?:[\w'\u2019]+\s+){{0,2}}?"
            rf"(?:l['\u2019])?{_READER_ANY}(?:\s+(?:de|di|der|van)\s+(?:ia|ki|ai))?\s*:",
            _I,
        ),
    ),
    # addressed to whatever reads it: "for whoever summarises this page", "to anyone
    # processing this e-mail", "per chi elabora", "voor wie", "para quem", "pour qui"
    _rule(
        (("whoever", "anyone", "chi ", "wie ", "quem", "qui ", "wer "),),
        re.compile(
            r"\b(?:to|for)\s+(?:whoever|anyone|any\s+one|whatever)\s+(?:\w+\s+)?"
            r"(?:reads?|reading|process(?:es|ing)?|summari[sz](?:es|ing)|pars(?:es|ing)|"
            r"handl(?:es|ing)|index(?:es|ing))\b"
            r"|\b(?:per\s+chi|voor\s+wie|para\s+quem|para\s+quien|pour\s+qui|f\u00fcr\s+wen)\b",
            _I,
        ),
    ),
    # tells its reader what to do: the assistant as the subject of a duty ("the assistant
    # should tell ..."), asked to ("it would help the assistant to always ..."), or
    # addressed by name before an order ("AI notetaker / assistant: from now on, ...")
    _rule(
        (_READER_WORDS,),
        re.compile(
            rf"\b{_READER}\s+(?:should|must|shall|needs?\s+to|has\s+to|is\s+to|are\s+to|"
            rf"ought\s+to|is\s+(?:expected|required|instructed|asked)\s+to|will\s+need\s+to|"
            rf"always|never|(?:is|are)\s+(?:never\s+|always\s+)?(?:allowed|permitted)\s+to)\b"
            rf"|\b(?:help|helps|allow|allows|let|ask|asks|want|wants|require|requires|instruct|"
            rf"instructs|tell|tells|remind|reminds)\s+(?:the\s+|your\s+|any\s+|all\s+)?"
            rf"{_READER}\s+to\b"
            rf"|\b{_READER}\s*(?::|,)\s*(?:from\s+now\s+on|going\s+forward|always|never|please|"
            rf"{_ORDER})\b"
            rf"|\b{_READER}\s+(?:reading|processing|summari[sz]ing|seeing)\s+this\b",
            _I,
        ),
    ),
    # a standing order for every later question on a subject
    _rule(
        (("question", "quer", "request", "ask", "enquir", "inquir"),),
        re.compile(
            r"\b(?:for|on|to|with|in|answer\s+to)\s+(?:any|every|all|each)\b[^.\n]{0,60}?"
            r"\b(?:questions?|quer(?:y|ies)|requests?|enquir(?:y|ies)|inquir(?:y|ies))\b"
            r"[^.\n]{0,80}?\b(?:"
            rf"{_ORDER}|should|must|is\s+to|the\s+(?:answer|policy|reply|response)\s+is)\b"
            r"|\b(?:if|when(?:ever)?)\s+(?:the\s+)?(?:question|query|request)\b[^.\n]{0,200}?"
            r"\b(?:the\s+)?(?:reply|answer|response)\s+(?:should|must|is\s+to|shall)\s+be\b"
            r"|\b(?:whatever|whichever|no\s+matter\s+(?:what|which))\s+(?:the\s+)?"
            r"(?:questions?|quer(?:y|ies)|requests?|they\s+ask|the\s+user\s+asks)\b",
            _I,
        ),
    ),
    _rule(
        (("from now on", "going forward", "henceforth", "from today"),),
        re.compile(
            rf"\b(?:from\s+now\s+on|going\s+forward|henceforth|from\s+today)\s*,?\s*"
            rf"(?:you\s+(?:must|should|will)\s+)?(?:always\s+|never\s+)?(?:{_ORDER})\b",
            _I,
        ),
    ),
    _rule(
        (("decode", "decoded"),),
        re.compile(
            r"\bdecode\b[^.\n]{0,20}\b(?:and|then)\s+(?:execute|run|follow|apply|obey)\b"
            r"|\b(?:execute|run|follow|apply|obey)\s+(?:the\s+)?decoded\b",
            _I,
        ),
    ),
    # overrides what it was told
    _rule(
        (
            ("ignore", "disregard", "forget", "override", "bypass"),
            ("instruction", "rule", "prompt", "guideline", "direction", "polic"),
        ),
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?"
            r"\b(?:instructions?|rules|prompts?|guidelines|directions|policies)\b",
            _I,
        ),
    ),
    _rule(
        (("you are now", "new instruction"),),
        re.compile(
            r"\byou are now (?:a|an|the|my)\s+(?:\w+\s+){0,2}?(?:agent|assistant|bot|ai|model|"
            r"system|admin|administrator|persona|character)\b|\bnew instructions?\s*:",
            _I,
        ),
    ),
    # scripts its future answers
    _rule(
        (
            ("ask", "mention", "request", "want", "enquir", "inquir"),
            _ANSWERS,
        ),
        re.compile(
            r"\b(?:when(?:ever)?|if|each\s+time|every\s+time)\b[^.\n]{0,60}?\b(?:users?|"
            r"customers?|clients?|someone|anyone|people|readers?|they|he|she|members?|patients?|"
            r"guests?|students?|parents?)\b[^.\n]{0,20}?\b(?:asks?|asking|mentions?|requests?|"
            r"wants?|enquires?|inquires?)\b[^.\n]{0,160}?\b(?:tell|answer|say|respond|reply|"
            r"inform|claim|state|explain|recommend|advise|walk|guide|suggest|direct|point|send)\b",
            _I,
        ),
    ),
    _rule(
        (("question", "quer", "request", "message"),),
        re.compile(
            r"\b(?:for|to)\s+(?:any|every|all)\s+(?:questions?|queries|requests?|messages?)\s+"
            r"(?:about|on|regarding|concerning)\b",
            _I,
        ),
    ),
    _rule(
        (("answer for",),),
        re.compile(r"\banswer\s+for\s+(?:anyone|everyone|all)\b", _I),
    ),
    _rule(
        (("asked", "questioned"),),
        re.compile(
            r"\b(?:when(?:ever)?|if)\s+(?:you\s+are\s+|you're\s+)?(?:asked|questioned)\b"
            r"[^.\n]{0,80}?\b(?:say|tell|answer|respond|reply|claim|state)\b",
            _I,
        ),
    ),
    _rule(
        (("tell", "inform", "assure"),),
        re.compile(
            r"\b(?:tell|inform|assure)\s+(?:the\s+)?(?:users?|customers?|readers?|them)\s+(?:that|they)\b",
            _I,
        ),
    ),
    # keeps secrets from the user
    _rule(
        (("do not", "don't", "never"),),
        re.compile(
            r"\b(?:do\s+not|don't|never)\s+(?:mention|tell|reveal|disclose|inform)\b[^.\n]{0,30}?"
            r"\b(?:users?|customers?|this|anyone|them|it|note|step)\b",
            _I,
        ),
    ),
]

_SEND = (
    r"(?<![@.])\b(?:send|email|e-mail|mail|forward|post|upload|submit|transmit|share|paste|leak|"
    r"render|include|fill(?:ed)?\s+in|reply\s+with|respond\s+with|read(?:\s+out)?|dictate|"
    r"text|give|provide|export|sync)\b(?!\s*:)"  # a verb, not a label ("Email: ...")
)
_DATA = (
    r"(?:\.env\b|\b(?:passwords?|passcodes?|credentials?|api[_ -]?keys?|tokens?|secrets?|"
    r"pins?|cvv|cvc|"
    r"card\s+(?:numbers?|details)|iban|passport|date\s+of\s+birth|social\s+security|ssn|"
    r"environment\s+variables|e-?mail\s+address(?:es)?|phone(?:\s+number)?|full\s+name|"
    r"home\s+address|personal\s+(?:data|details|information)|records|membership\s+number|"
    r"usernames?|logins?|account\s+numbers?|conversation|chat\s+history|transcripts?|"
    r"2fa|otp|one-time\s+(?:code|password)|(?:verification|security|login|reset|entry|door|"
    r"access|alarm)\s+codes?|expiry|id\s+cards?|scans?\s+of|bank\s+statements?|"
    r"(?:medical|health)\s+(?:records|data|history)|\w+\s+history|diagnos[ie]s|inbox)\b)"
)
_DESTINATION = (
    r"(?:https?://|www\.|[\w.+-]+@[\w-]+\.[\w.-]+|webhook|"
    r"(?:\+|\b00)\d[\d ().-]{6,}\d)"  # an address, or an international phone number
)
_EXFILTRATION: Final[list[_Rule]] = [
    _rule(
        (("http", "www.", "@", "webhook", "+", "00"),),
        re.compile(rf"{_SEND}[^\n]{{0,160}}?{_DATA}[^\n]{{0,160}}?{_DESTINATION}", _I),
    ),
    _rule(
        (("http", "www.", "@", "webhook", "+", "00"),),
        re.compile(rf"{_DATA}[^\n]{{0,80}}?{_SEND}[^\n]{{0,80}}?{_DESTINATION}", _I),
    ),
    # a link whose address is a template for the reader's data
    _rule(
        (("={",),),
        re.compile(r"https?://\S*[?&]\w+=\{[^}\s]{1,40}\}", _I),
    ),
]
_UNSAFE: Final[list[_Rule]] = [
    _rule(
        (("curl", "wget"), ("|",)),
        re.compile(r"\b(?:curl|wget)\b[^\n|]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b", _I),
    ),
    _rule(
        (("verify", "--trusted-host", "--insecure", "--no-check"),),
        re.compile(
            r"\bverify\s*=\s*false\b|--trusted-host\b|--insecure\b|--no-check-certificate\b", _I
        ),
    ),
    _rule(
        (("disable", "turn off"),),
        re.compile(
            r"\b(?:disable|turn\s+off)\s+(?:the\s+)?(?:firewall|antivirus|2fa|mfa|two-factor)", _I
        ),
    ),
    _rule(
        (("open port", "chmod"),),
        re.compile(r"\bopen\s+port\s+\d+\b[^.\n]{0,40}\binternet\b|\bchmod\s+(?:-R\s+)?777\b", _I),
    ),
    _rule(
        (("--force", "force push", "force-push"),),
        re.compile(r"\bpush\b[^.\n]{0,20}--force\b|\bforce[- ]push\b", _I),
    ),
]

# Secrets: the shapes of common API keys, private keys and tokens; payment card numbers
# (13-19 digits, a card network's prefix, a valid Luhn check digit); a password given.
_KEYS = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|"
    r"github_pat_[A-Za-z0-9_]{22,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|"
    r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
    re.DOTALL,
)
_CARD = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
_PASSWORD = re.compile(
    r"\b(?P<label>password|passwd|passphrase|pin(?:\s+code)?)(?:\s*(?:is|:|=))+\s*"
    r"(?P<value>[^\s,;]{4,})",
    _I,
)


def reveal(text: str) -> str:
    """``text`` as a model reads it: normalised, zero-width characters removed, and the
    content of comments, hidden elements and base64 runs appended."""
    shown = _ZERO_WIDTH.sub("", unicodedata.normalize("NFKC", text))
    extra = [part for m in _HIDING.finditer(shown) for part in m.groups() if part]
    extra += [decoded for m in _BASE64.finditer(shown) if (decoded := _decoded(m.group(0)))]
    extra += [decoded for m in _HEX.finditer(shown) if (decoded := _unhexed(m.group(0)))]
    if len(_LEET.findall(shown)) >= _LEET_WORDS:  # "wh3n 4sk3d, 4lw4ys s4y": as read
        extra.append(_LEET.sub(lambda m: m.group(0).translate(_UNLEET), shown))
    return "\n".join([shown, *extra])


def scan(text: str) -> list[Finding]:
    """The flags ``text`` raises, each once, in :class:`Flag`'s order."""
    found: dict[Flag, str] = {}
    normal = unicodedata.normalize("NFKC", text)
    if _ZERO_WIDTH.search(normal):
        found[Flag.HIDDEN] = "zero-width characters"
    elif hiding := _HIDING.search(normal):
        found[Flag.HIDDEN] = _evidence(hiding)
    elif any(_decoded(m.group(0)) for m in _BASE64.finditer(normal)):
        found[Flag.HIDDEN] = "base64 text"
    elif any(_unhexed(m.group(0)) for m in _HEX.finditer(normal)):
        found[Flag.HIDDEN] = "hexadecimal text"
    shown = reveal(text)
    low = shown.lower()
    for flag, rules in (
        (Flag.INSTRUCTION, _INSTRUCTION),
        (Flag.EXFILTRATION, _EXFILTRATION),
        (Flag.UNSAFE_ACTION, _UNSAFE),
    ):
        if match := _first(rules, shown, low):
            found[flag] = _evidence(match)
    if secrets(text):
        found[Flag.SECRET] = "a secret"
    return [Finding(flag, found[flag]) for flag in Flag if flag in found]


def secrets(text: str) -> list[tuple[int, int, str]]:
    """Where the secrets in ``text`` are: (start, end, what), in order."""
    spans = [(m.start(), m.end(), "key") for m in _KEYS.finditer(text)]
    spans += [
        (m.start(), m.end(), "card number") for m in _CARD.finditer(text) if _is_card(m.group(0))
    ]
    spans += [
        (m.start("value"), m.end("value"), m.group("label").lower())
        for m in _PASSWORD.finditer(text)
    ]
    return sorted(spans)


def redact(text: str) -> str:
    """``text`` with each secret replaced by ``[redacted <what>]``."""
    out, last = [], 0
    for start, end, what in secrets(text):
        if start < last:
            continue  # overlapping spans: the first wins
        out += [text[last:start], f"[redacted {what}]"]
        last = end
    return "".join([*out, text[last:]])


def _is_card(candidate: str) -> bool:
    digits = [int(c) for c in candidate if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    prefix = "".join(map(str, digits[:4]))
    network = (
        prefix[0] == "4"  # Visa
        or 51 <= int(prefix[:2]) <= 55  # Mastercard
        or 2221 <= int(prefix) <= 2720
        or prefix[:2] in ("34", "37")  # American Express
        or prefix.startswith(("6011", "65", "35"))  # Discover, JCB
    )
    checksum = sum(
        d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(reversed(digits))
    )
    return network and checksum % 10 == 0


def _decoded(run: str) -> str | None:
    """A base64 run's text, if it decodes to readable words."""
    try:
        raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    readable = sum(c.isprintable() or c.isspace() for c in text)
    return text if text and readable / len(text) > 0.95 and " " in text else None


def _unhexed(run: str) -> str | None:
    """A hexadecimal run's text, if it decodes to readable words."""
    try:
        text = bytes.fromhex(run).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    readable = sum(c.isprintable() or c.isspace() for c in text)
    return text if readable / len(text) > 0.95 and " " in text else None


def _evidence(match: re.Match[str] | None) -> str:
    text = "" if match is None else match.group(0)
    text = " ".join(_ZERO_WIDTH.sub("", text).split())
    return text if len(text) <= 80 else text[:77] + "..."
