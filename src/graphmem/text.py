"""Small text utilities shared by every layer: hashing, name normalisation, query words."""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = [
    "STOP_WORDS",
    "content_hash",
    "normalize_name",
    "query_words",
    "short_id",
    "FoldedText",
    "unique_names",
]

# The seed's stop list plus a few question words; query words in it never seed a search.
STOP_WORDS = frozenset(
    """a an the is are was were be been being have has had do does did will would could should
    may might shall can to of in on at by for with from and or but not it its this that these
    those i you he she we they what which who whom whose how why when where there here as so
    if then than into about over under me my our your their them us any all some no yes""".split()
)

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACES = re.compile(r"\s+")


def content_hash(text: str) -> str:
    """SHA-256 of the UTF-8 text, hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def short_id(prefix: str, *parts: str) -> str:
    """A stable id from ``parts``: ``prefix`` + 16 hex digits of their SHA-1."""
    h = hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]
    return f"{prefix}{h}"


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
    ``find()`` returns offsets into the *original* text.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        chars: list[str] = []
        index: list[int] = []
        prev_space = True
        for i, ch in enumerate(text):
            if ch.isspace():
                if prev_space:
                    continue
                chars.append(" ")
                index.append(i)
                prev_space = True
            else:
                low = ch.lower()
                # lower() may change length for a few characters; keep a 1:1 map.
                chars.append(low if len(low) == 1 else ch)
                index.append(i)
                prev_space = False
        self.folded = "".join(chars)
        self.index = index

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
        start = self.index[pos]
        end = self.index[pos + len(folded) - 1] + 1
        return start, end


def unique_names(names: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop empty and repeated normalised names from ``(alias, norm)`` pairs, keeping order."""
    seen: set[str] = set()
    out = []
    for alias, norm in names:
        if norm and norm not in seen:
            seen.add(norm)
            out.append((alias, norm))
    return out
