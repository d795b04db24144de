"""Where a supporting quote sits in one document: its character span (exact, else after case and
whitespace folding), the chunk that holds it, or the chunk whose words overlap it most when it
cannot be found — evidence never gets made-up offsets."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from ..models import Chunk
from ..text import FoldedText

__all__ = ["Locator"]

_WORDS = re.compile(r"\w+")


class Locator:
    """Finds supporting quotes in one document and the chunk that holds them."""

    def __init__(self, content: str, chunks: Sequence[Chunk]) -> None:
        self.content = content
        self.chunks = list(chunks)
        self.starts = [c.start for c in self.chunks]
        self._folded: FoldedText | None = None
        self._chunk_words: list[set[str]] | None = None

    def span(self, quote: str) -> tuple[int, int] | None:
        q = quote.strip()
        if not q:
            return None
        pos = self.content.find(q)
        if pos >= 0:
            return pos, pos + len(q)
        if self._folded is None:
            self._folded = FoldedText(self.content)
        return self._folded.find(q)

    def chunk_for_span(self, start: int, end: int) -> Chunk | None:
        if not self.chunks:
            return None
        i = bisect.bisect_right(self.starts, start) - 1
        best, best_overlap = None, -1
        # With overlaps the span may lie in chunk i-1 as well as i: prefer the earliest
        # chunk that holds it whole, so that one passage carries as much evidence as it can.
        for c in self.chunks[max(i - 1, 0) : i + 2]:
            if c.start <= start and end <= c.end:
                return c
            overlap = min(end, c.end) - max(start, c.start)
            if overlap > best_overlap:
                best, best_overlap = c, overlap
        return best

    def pieces(self, start: int, end: int) -> list[tuple[Chunk | None, int, int]]:
        """``(chunk, start, end)`` parts of a span, each inside its chunk: the whole span in the
        chunk that holds it, else consecutive non-overlapping parts that together cover it."""
        whole = self.chunk_for_span(start, end)
        if whole is None or (whole.start <= start and end <= whole.end):
            return [(whole, start, end)]
        out: list[tuple[Chunk | None, int, int]] = []
        pos = start
        i = max(bisect.bisect_right(self.starts, start) - 1, 0)
        for c in self.chunks[i:]:
            if c.start >= end or pos >= end:
                break
            s, e = max(pos, c.start), min(end, c.end)
            while s < e and self.content[s].isspace():
                s += 1
            while e > s and self.content[e - 1].isspace():
                e -= 1
            if e > s:
                out.append((c, s, e))
                pos = max(pos, min(end, c.end))
        return out or [(whole, start, end)]

    def best_overlap_chunk(self, quote: str) -> Chunk | None:
        words = {w.lower() for w in _WORDS.findall(quote)}
        if not words or not self.chunks:
            return None
        if self._chunk_words is None:
            self._chunk_words = [{w.lower() for w in _WORDS.findall(c.text)} for c in self.chunks]
        scores = [len(words & cw) for cw in self._chunk_words]
        top = max(scores)
        return self.chunks[scores.index(top)] if top > 0 else None
