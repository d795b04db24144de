"""Small text utilities shared by every layer: hashing, name normalisation, query words."""

from __future__ import annotations

import bisect
import functools
import hashlib
import re
import unicodedata
from array import array
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "STOP_WORDS",
    "content_hash",
    "memo_short",
    "normalize_name",
    "query_words",
    "short_id",
    "FoldedText",
    "unique_names",
]

# The seed's stop list plus a few question words; query words in it never seed a search.
STOP_WORDS = frozenset(
    [
        "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "do", "does",
        "did", "will", "would", "could", "should", "may", "might", "shall", "can", "to", "of", "in", "on", "at",
        "by", "for", "with", "from", "and", "or", "but", "not", "it", "its", "this", "that", "these", "those",
        "i", "you", "he", "she", "we", "they", "what", "which", "who", "whom", "whose", "how", "why", "when",
        "where", "there", "here", "as", "so", "if", "then", "than", "into", "about", "over", "under", "me",
        "my", "our", "your", "their", "them", "us", "any", "all", "some", "no", "yes"
    ]
)

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACES = re.compile(r"\s+")
_SPACE_RUN = re.compile(" {2,}")
# Every character for which str.isspace() is true (a test checks the list against Unicode).
WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
              "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_WHITESPACE_TO_SPACE = str.maketrans(WHITESPACE, " " * len(WHITESPACE))
_EXPANDING = re.compile("(\u0130+)")  # the only character whose lower() is longer than itself


def content_hash(text: str) -> str:
    """SHA-256 of the UTF-8 text, hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def short_id(prefix: str, *parts: str) -> str:
    """A stable id from ``parts``: ``prefix`` + 16 hex digits of their SHA-1."""
    h = hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]
    return f"{prefix}{h}"


_T = TypeVar("_T")


def memo_short(maxsize: int, longest: int = 256) -> Callable[[Callable[[str], _T]], Callable[[str], _T]]:
    """``functools.lru_cache`` for a pure function of one string that holds only strings of up to ``longest``
    characters: a cache keeps key and result for the life of the process, so names of any length (a client's
    200 KB "name") could pin 2 x ``maxsize`` times their size; longer ones are computed every time."""
    def wrap(fn: Callable[[str], _T]) -> Callable[[str], _T]:
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def call(text: str) -> _T:
            if type(text) is str and len(text) <= longest:
                return cached(text)
            return fn(text)
        return call
    return wrap


@memo_short(1 << 16)  # a pure function of the name, asked ~120 times per ingested document
def normalize_name(name: str) -> str:
    """Entity-name key: Unicode NFKC, casefolded, trimmed, inner whitespace collapsed."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", name).casefold()).strip()


def query_words(text: str, keep_stop_words: bool = False) -> list[str]:
    """Lowercased word tokens of ``text``; stop words dropped unless nothing else is left."""
    words = [w.casefold() for w in _WORD.findall(text)]
    if keep_stop_words:
        return words
    content = [w for w in words if w not in STOP_WORDS]
    return content


class FoldedText:
    """A case- and whitespace-folded view of a text that maps matches back to it.

    Used to locate supporting quotes that differ from the document only in case or spacing:
    ``find()`` returns offsets into the *original* text. Leading whitespace is dropped and every
    other whitespace run becomes one space; characters are lowercased where that keeps one
    character. The map back is sparse (one entry per multi-character whitespace run): a per-
    character list of offsets cost ~36 bytes a character (3 GB for a 30 MB document).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        # Per character, as before: str.lower() would give Σ its final form by context, and İ
        # lowers to two characters (kept as is, so offsets stay one to one).
        low = text.replace("\u03a3", "\u03c3").lower()
        if len(low) != len(text):
            parts = _EXPANDING.split(text.replace("\u03a3", "\u03c3"))
            low = "".join(part if i % 2 else part.lower() for i, part in enumerate(parts))
        # Segments of the folded text that map contiguously onto the original: folded offset
        # _seg_folded[k] is original offset _seg_orig[k]; only a run of 2+ whitespace shifts it.
        # Whitespace becomes " " by translate (no length change), then only runs of 2+ are cut:
        # re.sub over every single space built a list of millions of pieces (~13x the text).
        low = low.translate(_WHITESPACE_TO_SPACE)
        lead = len(low) - len(low.lstrip(" "))
        self._seg_folded = array("q", [0])
        self._seg_orig = array("q", [lead])
        shift = lead  # original offset minus folded offset, so far
        for m in _SPACE_RUN.finditer(low, lead):
            a, b = m.span()
            self._seg_folded.append(a - shift + 1)
            self._seg_orig.append(b)
            shift += b - a - 1
        self.folded = _SPACE_RUN.sub(" ", low[lead:] if lead else low)

    def _original(self, folded_pos: int) -> int:
        k = bisect.bisect_right(self._seg_folded, folded_pos) - 1
        return self._seg_orig[k] + folded_pos - self._seg_folded[k]

    @staticmethod
    def fold(text: str) -> str:
        """Fold a needle the same way as the haystack."""
        return FoldedText(text).folded.strip()

    def find(self, needle: str, start_hint: int = 0) -> tuple[int, int] | None:
        """Offsets ``(start, end)`` in the original text of ``needle``, or ``None``."""
        folded = self.fold(needle)
        if not folded:
            return None
        pos = self.folded.find(folded)
        if pos < 0:
            return None
        return self._original(pos), self._original(pos + len(folded) - 1) + 1


def unique_names(names: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop empty and repeated normalised names from ``(alias, norm)`` pairs, keeping order."""
    seen: set[str] = set()
    out = []
    for alias, norm in names:
        if norm and norm not in seen:
            seen.add(norm)
            out.append((alias, norm))
    return out
