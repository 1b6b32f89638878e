"""Write a LoCoMo-layout file with the replies people send over and over around its turns.

    python bench/chats/with_reactions.py ../shared/data/locomo10.json reactions.json
    hindsight bench locomo reactions.json --json

Around a turn, its speaker sends one to three short reactions after it (six turns in ten)
and one or two before it (three in ten), in a row: "lol", "omg no way", "big mood",
"sorry was driving". They are built from an interjection and a stock phrase, about six
hundred different messages. A question's evidence stays the turns it named (renumbered);
no reaction answers a question. Real chats hold facts inside such runs; this stand-in
asks whether recall lets the reactions push evidence out of the first ten. Fixed seed:
the same input gives the same file.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path
from typing import Any

INTERJECTIONS = [
    "", "lol", "haha", "omg", "ugh", "aw", "wow", "hmm", "ok", "oh", "yeah", "lmao", "wait",
    "honestly", "ngl",
]  # fmt: skip
PHRASES = [
    "that's wild", "same here", "i'm dying", "can't believe it", "no way", "love it",
    "so true", "i feel that", "you're killing me", "that's so you", "classic", "typical",
    "i knew it", "called it", "good for you", "you deserve it", "proud of you", "stop it",
    "i'm screaming", "that's hilarious", "that's rough", "oof", "poor you", "sending hugs",
    "what a day", "what a mess", "tell me everything", "spill", "and then?", "go on",
    "no idea", "who knows", "fair enough", "makes sense", "i guess", "could be worse",
    "living the dream", "can relate", "big mood", "me too", "not me", "same tbh",
    "thats so cute", "adorable", "so sweet", "gross", "yikes", "eek", "phew", "finally",
    "about time", "typical monday", "long day", "need coffee", "need sleep", "brb food",
    "back", "sorry was driving", "phone died", "anyway where was i", "lol ok", "sounds fun",
]  # fmt: skip
AFTER = 0.6  # share of turns followed by reactions; half as many are preceded by some
SEED = 11


def reaction(rng: random.Random) -> str:
    interjection, phrase = rng.choice(INTERJECTIONS), rng.choice(PHRASES)
    if rng.random() < 0.7:
        return f"{interjection} {phrase}".strip()
    return interjection or phrase


def with_reactions(data: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    for sample in data:
        conversation, renamed = sample["conversation"], {}
        for key in [k for k in conversation if re.fullmatch(r"session_\d+", k)]:
            number, turns = key.split("_")[1], []

            def send(turn: dict[str, Any], text: str | None = None) -> str:
                sent = dict(turn) if text is None else {"speaker": turn["speaker"], "text": text}
                sent["dia_id"] = f"D{number}:{len(turns) + 1}"  # noqa: B023 - called at once
                turns.append(sent)  # noqa: B023
                return str(sent["dia_id"])

            for turn in conversation[key]:
                if rng.random() < AFTER / 2:
                    for _ in range(rng.randint(1, 2)):
                        send(turn, reaction(rng))
                renamed[turn["dia_id"]] = send(turn)
                if rng.random() < AFTER:
                    for _ in range(rng.randint(1, 3)):
                        send(turn, reaction(rng))
            conversation[key] = turns
        for question in sample["qa"]:
            question["evidence"] = [renamed.get(e, e) for e in question.get("evidence", [])]
    return data


def main(source: str, target: str) -> None:
    data = json.loads(Path(source).read_text(encoding="utf-8"))
    Path(target).write_text(json.dumps(with_reactions(data, random.Random(SEED))), "utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
