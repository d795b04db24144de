"""Building FTS5 expressions from free text (never from user syntax)."""

from __future__ import annotations

from typing import Any

from ...text import query_words

__all__ = ["_fts_query", "fts_query", "pruned_fts_query"]


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


def pruned_fts_query(conn: Any, table: str, text: str, total: int, max_share: float = 0.2,
                     floor: int = 2000, memo: dict[str, bool] | None = None) -> str | None:
    """Like :func:`fts_query`, minus words found in more than ``max_share`` of ``total`` rows
    (at least ``floor``), as long as a rarer word remains.

    BM25 gives such words almost no weight, but FTS5 still reads their whole posting lists:
    on a large corpus one of them costs hundreds of milliseconds. Each check reads at most
    the threshold number of postings, so it is bounded too. ``memo`` (word -> common) keeps the
    checks between calls; the caller empties it whenever the table may have changed.
    """
    words = list(dict.fromkeys(query_words(text) or query_words(text, keep_stop_words=True)))[:64]
    if len(words) <= 1:
        return _fts_query(" ".join(words))
    cap = max(floor, int(total * max_share))
    memo = {} if memo is None else memo
    for w in words:
        if w not in memo:
            memo[w] = conn.execute(
                f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                ('"' + w.replace('"', '""') + '"', cap)).fetchone()[0] >= cap
    keep = [w for w in words if not memo[w]]
    return _fts_query(" ".join(keep or words))
