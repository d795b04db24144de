"""Split text into overlapping chunks cut at sentence or word boundaries.

The seed cut every 500 characters wherever that fell, splitting words. Here a chunk ends at
the last sentence end inside its window when there is one in the second half of the window,
else at the last whitespace, and only as a last resort (a single "word" longer than the
window) in the middle of a token. The next chunk starts ``overlap`` characters back, moved
forward to the start of a word. Offsets always index the original text exactly.
"""

from __future__ import annotations

import re

from ..errors import InvalidInput

__all__ = ["chunk_spans", "split_sentences"]

# A sentence ends at ., ! or ? (optionally followed by closing quotes/brackets) before
# whitespace, or at a blank line.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)|\n\s*\n")
_SPACE = re.compile(r"\s")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Return ``(start, end)`` spans of the sentences of ``text`` (whitespace trimmed)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _SENTENCE_END.finditer(text):
        _append_trimmed(text, pos, m.end(), spans)
        pos = m.end()
    _append_trimmed(text, pos, len(text), spans)
    return spans


def _append_trimmed(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        out.append((start, end))


def chunk_spans(text: str, size: int = 500, overlap: int = 100) -> list[tuple[int, int]]:
    """Return the ``(start, end)`` offsets of the chunks of ``text``.

    Every non-space character of ``text`` lies in at least one chunk; chunks are at most
    ``size`` characters; consecutive chunks share up to ``overlap`` characters.
    """
    if size < 50:
        raise InvalidInput(f"chunking.size must be at least 50 characters, got {size}")
    if overlap < 0 or overlap >= size // 2:
        raise InvalidInput(
            f"chunking.overlap must be between 0 and half of chunking.size ({size // 2}), got {overlap}"
        )
    n = len(text)
    spans: list[tuple[int, int]] = []
    start = _skip_space(text, 0)
    while start < n:
        end = min(start + size, n)
        if end < n:
            end = _cut_point(text, start, end, size)
        s, e = start, end
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
        if end >= n:
            break
        nxt = _next_start(text, start, end, overlap)
        start = nxt
    return spans


def _skip_space(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos].isspace():
        pos += 1
    return pos


def _cut_point(text: str, start: int, end: int, size: int) -> int:
    """Best end for a chunk starting at ``start`` whose window ends at ``end``."""
    floor = start + size // 2
    window = text[floor:end]
    # Last sentence end inside the second half of the window. A sentence end right at
    # the window end counts too, when whitespace follows it.
    best = -1
    for m in _SENTENCE_END.finditer(text, floor, min(end + 1, len(text))):
        if m.end() <= end:
            best = m.end()
    if best > floor:
        return best
    # Otherwise the last whitespace: never cut through a word when it can be avoided.
    if end < len(text) and text[end].isspace():
        return end
    idx = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
    if idx > 0:
        return floor + idx
    low = text.rfind(" ", start + 1, end)
    if low > start:
        return low
    return end  # one token longer than the window: a hard cut is the only option


def _next_start(text: str, start: int, end: int, overlap: int) -> int:
    """Start of the next chunk: ``overlap`` back from ``end``, moved to a word start."""
    if overlap == 0:
        return _skip_space(text, end)
    pos = max(end - overlap, start + 1)
    if pos > 0 and not text[pos - 1].isspace():
        m = _SPACE.search(text, pos, end)
        pos = m.start() if m else end
    pos = _skip_space(text, pos)
    if pos >= end:
        pos = _skip_space(text, end)
    return pos
