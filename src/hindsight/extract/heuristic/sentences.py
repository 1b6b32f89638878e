"""A message read as the heuristic extractor reads it: normalised, then a sentence at a time.

:func:`normalise` spells contractions out and blanks code and prompt blocks;
:func:`split_sentences` yields each sentence with whether it corrects the assistant. The
shapes a clause is told by (a question, a hypothetical, filler, an acknowledgement)
are here too, for the rules to skip what states nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hindsight.extract.base import PROMPT_BLOCK
from hindsight.extract.heuristic.wording import regex

_CONTRACTIONS = tuple(
    (regex(p), r)
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
SYSTEMISH = regex(
    r"^\s*(?:system\s*:|<\|?system|\[system\]|as an ai\b|you are (?:an? |the )?(?:helpful |"
    r"friendly |expert |smart |ai |)(?:assistant|ai|agent|bot|chatbot|language model))"
)
_SENTENCES = re.compile(
    r"(?<=[.!?])(?<!\bSt\.)(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\be\.g\.)"
    r"(?<!\bi\.e\.)[\s\"')\]]+|\n+"
)
CLAUSES = regex(r"[,;]?\s+(?:and|but|though|although|whereas|while|so|plus)\s+(?=(?:i|my)\b)|;\s*")
FILLER = regex(
    r"^(?:(?:well|oh|ah|so|and|but|also|plus|yeah|yes|yep|ok|okay|honestly|personally|frankly|"
    r"basically|anyway|btw|by the way|fyi|lol|haha|um|uh|hmm|fun fact|just so you know|"
    r"for the record|for what it is worth|you know what|to be honest|tbh)\b[\s,:;!.\-]*)+"
)
GREETING = regex(r"^(?:hi|hello|hey)(?: there)?\b[\s,!.:-]*")
QUESTION = regex(
    r"^(?:do|does|did|is|are|am|was|were|can|could|would|will|should|shall|may|might|where|"
    r"what|who|whom|whose|when|why|how|which|have|has|had)\b"
)
# "I'm trying to X, and I prefer Y, can you help me?": before the question, the user states
_QUESTION_TAIL = regex(
    r",\s*(?:(?:and|so|but)\s+)?(?:do|does|did|is|are|am|can|could|would|will|should|what|how|"
    r"why|any)\b"
)
HYPOTHETICAL = regex(
    r"\b(?:if|suppose|supposing|imagine|hypothetically|pretend|wish|unless|whether|maybe|"
    r"perhaps|might|could|should|would(?! (?:much )?rather)|want to|wanna|going to|gonna|"
    r"plan to|planning to|hope to|hoping to|thinking about|thinking of|considering|"
    r"anymore|any more|no longer|used to)\b"
)
_CORRECTION = regex(
    r"^(?:(?:no|nope|nah)(?:[\s,.!:;-]*$|[,.!:;-]+\s*|\s+(?=(?:i|my|it|that|the)\b))|"
    r"(?:actually|not quite|wrong|incorrect|correction)\b[\s,.!:;-]*|"
    r"(?:that is|you are|this is) (?:wrong|not right|incorrect|not true|not correct|"
    r"not what i said|mistaken)\b[\s,.!:;-]*|you got (?:it|that) wrong\b[\s,.!:;-]*)"
)
_CHANGED = regex(r"\b(?:now|nowadays|these days|any ?more|no longer)\b")
ACKNOWLEDGE = regex(
    r"^(?:i think |i guess )?(?:thanks|thank you|that is fine|it is fine|fine|ok|okay|all good|"
    r"never mind|nevermind|not now|not yet|that is (?:all|it)|I am (?:good|fine|ok|all set))\b"
)


def normalise(text: str) -> str:
    """``text`` with curly quotes made straight, contractions spelt out ("I'm": "I am")
    and code, quoted and prompt blocks blanked."""
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return _BLOCKS.sub(" ", text)


# "I said X, not Y", "I meant X": corrections that say what was wrong
SAID_NOT = regex(r"^i said (?P<x>.+?),? (?:and )?not (?P<y>.+)$")
MEANT = regex(r"^i meant (?P<x>.+)$")


def _stated_before_question(sentence: str) -> str:
    """What a sentence ending in a question states before asking, or "" if it only asks."""
    if QUESTION.match(sentence) or not (tail := _QUESTION_TAIL.search(sentence)):
        return ""
    return sentence[: tail.start()].strip()


def split_sentences(text: str, *, to_assistant: bool) -> Iterator[tuple[str, bool]]:
    """A user's message, a sentence at a time, each with whether it corrects the
    assistant; ``to_assistant`` False for people talking to each other, where "No, ..."
    answers a question instead of correcting an assistant."""
    correcting = False
    for raw in _SENTENCES.split(normalise(text)):
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
        said_not = SAID_NOT.match(sentence) or MEANT.match(sentence)
        yield sentence, bool(correcting or (said_not and to_assistant))
        correcting = False
