"""Highlighting of full-text search snippets (the SQLite backend's FTS5 ``snippet()``)."""

from __future__ import annotations

import re

__all__ = ["HIT_CLOSE", "HIT_OPEN", "bold_hits"]

# FTS5 marks matched words with characters no page contains; bold_hits turns them into markdown.
HIT_OPEN, HIT_CLOSE = "\ue000", "\ue001"
_WIKILINK = re.compile(r"\[\[[^\[\]\n]*\]\]")


def bold_hits(snippet: str) -> str:
    """Matched words in ``**bold**``, once: the page's own bold markers are dropped (else a word
    already in bold reads ``****word****``), and a ``[[wikilink]]`` with a match inside is bolded
    whole (markers inside it would break the link)."""
    text = snippet.replace("**", "")

    def link(m: re.Match[str]) -> str:
        inner = m.group(0)
        if HIT_OPEN not in inner:
            return inner
        return "**" + inner.replace(HIT_OPEN, "").replace(HIT_CLOSE, "") + "**"

    text = _WIKILINK.sub(link, text)
    return text.replace(HIT_OPEN, "**").replace(HIT_CLOSE, "**")

