"""BERT's uncased WordPiece tokenizer, in Python: the token ids MiniLM was trained on.

The same steps, in the same order, as the reference (BERT's ``tokenization.py``; the
``tokenizers`` package's ``BertWordPieceTokenizer(lowercase=True)``), so the ids are
the same (a test compares them on every benchmark text and on random Unicode):

1. clean: drop NUL, U+FFFD and control, format and private-use characters, and make
   whitespace a space;
2. put spaces around CJK ideographs, which are words on their own;
3. strip accents (NFD, then drop the combining marks) and lower-case;
4. split at whitespace, and around each punctuation character (ASCII's, and Unicode's P*);
5. split each word greedily into the longest pieces the vocabulary holds, continuations
   prefixed ``##``; a word with a piece it lacks, or of over 100 characters, is ``[UNK]``;
6. ``[CLS]`` first and ``[SEP]`` last, at most ``max_tokens`` ids in all.
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Final

MAX_WORD_CHARS: Final = 100
# Unicode's White_Space property, as Rust's char::is_whitespace reads it
_WHITESPACE: Final = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_ASCII_PUNCTUATION: Final = frozenset(string.punctuation)
# control, format, private-use and surrogate characters; an unassigned one stays
_OTHER: Final = frozenset({"Cc", "Cf", "Co", "Cs"})
_CJK: Final = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


@lru_cache(maxsize=65_536)
def _kind(c: str) -> str:
    """What cleaning makes of a character: ' ' (a space), '' (dropped), 'c' (a CJK
    ideograph, spaced), or itself ('p' for punctuation, 'w' for the rest)."""
    if c in _WHITESPACE:
        return " "
    if c in ("\x00", "\ufffd") or unicodedata.category(c) in _OTHER:
        return ""
    if _is_punctuation(c):
        return "p"
    code = ord(c)
    return "c" if any(lo <= code <= hi for lo, hi in _CJK) else "w"


def _fold(text: str) -> str:
    """Accents stripped, lower case."""
    decomposed = unicodedata.normalize("NFD", text)
    # a character at a time, as the reference does: a final capital sigma becomes
    # U+03C3, not the final form U+03C2
    return "".join(c.lower() for c in decomposed if unicodedata.category(c) != "Mn")


def words(text: str) -> Iterator[str]:
    """The text's words and punctuation marks, cleaned and folded (steps 1-4)."""
    spaced = []
    for c in text:
        kind = _kind(c)
        if kind == "c":
            spaced.append(f" {c} ")
        elif kind:
            spaced.append(c)
    word: list[str] = []
    for c in _fold("".join(spaced)):
        kind = _kind(c)  # splitting keeps what folding made of the rest: all is a word
        if kind in (" ", "p"):
            if word:
                yield "".join(word)
                word = []
            if kind == "p":
                yield c
        else:
            word.append(c)
    if word:
        yield "".join(word)


def _is_punctuation(c: str) -> bool:
    return c in _ASCII_PUNCTUATION or unicodedata.category(c).startswith("P")


class WordPiece:
    """Token ids of texts, from a vocabulary file of one piece a line."""

    def __init__(self, vocab: Mapping[str, int], *, max_tokens: int) -> None:
        self.vocab = vocab
        self.max_tokens = max_tokens
        self.unk, self.cls, self.sep = vocab["[UNK]"], vocab["[CLS]"], vocab["[SEP]"]
        self._longest = max(len(piece) for piece in vocab)

    @classmethod
    def from_file(cls, path: Path, *, max_tokens: int) -> WordPiece:
        lines = path.read_text(encoding="utf-8").splitlines()
        return cls({piece: i for i, piece in enumerate(lines)}, max_tokens=max_tokens)

    def encode(self, text: str) -> list[int]:
        room = self.max_tokens - 2
        ids: list[int] = []
        for word in words(text):
            ids.extend(self._pieces(word))
            if len(ids) >= room:
                break
        return [self.cls, *ids[:room], self.sep]

    def _pieces(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self.unk]
        ids, start = [], 0
        while start < len(word):
            end = min(len(word), start + self._longest)
            while end > start:
                piece = word[start:end] if start == 0 else f"##{word[start:end]}"
                if piece in self.vocab:
                    ids.append(self.vocab[piece])
                    break
                end -= 1
            else:
                return [self.unk]
            start = end
        return ids
