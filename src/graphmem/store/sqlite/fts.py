"""Building FTS5 expressions from free text (never from user syntax)."""

from __future__ import annotations

from ...text import query_words

__all__ = ["_fts_query", "fts_query"]


def _fts_query(text: str) -> str | None:
    """A safe FTS5 expression from free text: every word quoted, OR-ed.

    User text never reaches FTS5 syntax: quotes, ``*``, ``NEAR``, ``-`` and ``:`` are just
    characters inside a quoted string here.
    """
    words = query_words(text) or query_words(text, keep_stop_words=True)
    if not words:
        return None
    seen: list[str] = []
    for w in words:
        if w not in seen:
            seen.append(w)
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in seen[:64])


fts_query = _fts_query
