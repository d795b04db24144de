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

__all__ = ["chunk_spans", "split_sentences", "embedding_text"]

# A sentence ends at ., ! or ? (optionally followed by closing quotes/brackets) before
# whitespace, or at a blank line.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)|\n\s*\n")
_SPACE = re.compile(r"\s")
# A line of its own that is a heading, never the start of the sentence under it: a Markdown ATX
# heading anywhere, or a first line in title case ("Christopher Nolan\nChristopher Edward Nolan is
# ..."). A single newline is otherwise no boundary: hard-wrapped prose keeps its sentences whole.
_HEADING_LINE = re.compile(r"^[ \t]*#{1,6}[ \t]+[^\n]*\n", re.M)
_FIRST_LINE = re.compile(r"[ \t]*([^\n]{1,120})\n(?=[ \t]*\S)")
_TITLE_SMALL = frozenset({"a", "an", "and", "as", "at", "by", "de", "del", "der", "di", "du", "for", "from", "in",
                          "la", "le", "of", "on", "or", "the", "to", "van", "von", "with"})


def _title_line_end(text: str) -> int | None:
    """End (after the newline) of a title-case first line of ``text`` followed by more text, else None."""
    m = _FIRST_LINE.match(text)
    if m is None:
        return None
    line = m.group(1).strip()
    words = line.split()
    if not words or len(words) > 12 or line[-1] in ".!?:;,":
        return None
    if not all(w[:1].isupper() or w[:1].isdigit() or w[:1] in "(\"'" or w.lower() in _TITLE_SMALL for w in words):
        return None
    return m.end()


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Return ``(start, end)`` spans of the sentences of ``text`` (whitespace trimmed).

    Sentences end at ., ! or ? before whitespace and at blank lines; a heading line (Markdown
    ``#``, or a title-case first line) is a sentence of its own."""
    cuts = {m.end() for m in _SENTENCE_END.finditer(text)}
    cuts.update(m.end() for m in _HEADING_LINE.finditer(text))
    first = _title_line_end(text)
    if first is not None:
        cuts.add(first)
    spans: list[tuple[int, int]] = []
    pos = 0
    for cut in sorted(cuts):
        if cut > pos:
            _append_trimmed(text, pos, cut, spans)
            pos = cut
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


def embedding_text(title: str, text: str) -> str:
    """What a chunk's vector is computed from: its document's title as a header line, then the
    chunk's text. A passage split in several chunks keeps its topic in each one (the second chunk
    of "Christopher Nolan" never names him). No header when there is no title or when the text
    already starts with it (a Markdown heading, a record that glued its title into the text)."""
    head = " ".join(title.split())
    if not head:
        return text
    start = text.lstrip().lstrip("#").lstrip()
    if start[: len(head)].casefold() == head.casefold():
        return text
    return f"{head}\n{text}"
