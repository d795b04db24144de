"""Building FTS5 expressions from free text (never from user syntax)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...text import query_words

__all__ = ["_fts_query", "fts_query", "pruned_fts_query", "FTS_INDEXES", "MIN_SEGMENTS", "MIN_WRITTEN_SHARE",
           "fts_segments", "fts_due", "compact_fts"]


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


# The full-text indexes by the names callers use, and the least number of segments worth merging. FTS5 adds
# a segment per committed write and merges four of a level into one of the next (automerge), so a knowledge
# base built by many small transactions keeps ~3 segments per level: 21 on 2Wiki (6,119 passages). A term is
# looked up in every segment, and 'optimize' (one segment) made the default search's BM25 reads 15-20% cheaper
# there with the same rankings and scores (docs/benchmarks.md, "Compacted full-text indexes").
FTS_INDEXES = {"chunks": "chunks_fts", "names": "node_names_fts", "pages": "pages_fts", "memories": "memories_fts",
               "skills": "skills_fts"}
MIN_SEGMENTS = 8
# 'optimize' rewrites the whole index: it runs only when the caller's writes were at least this share of
# the index's rows, so that the writes pay for it (a 10-document ingest into a million passages does not).
MIN_WRITTEN_SHARE = 1 / 16


def fts_segments(conn: Any, table: str) -> int:
    """How many segments ``table``'s index has (one after 'optimize')."""
    return int(conn.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0])


def _table(name: str) -> str:
    table = FTS_INDEXES.get(name)
    if table is None:
        raise ValueError(f"no full-text index {name!r}; known: {', '.join(FTS_INDEXES)}")
    return table


def fts_due(conn: Any, written: dict[str, int]) -> list[str]:
    """The indexes of ``written`` (index name -> rows the caller wrote to it) with at least MIN_SEGMENTS
    segments, when those rows are at least MIN_WRITTEN_SHARE of the index's rows (a read)."""
    due = []
    for name, rows in sorted(written.items()):
        table = _table(name)
        if rows <= 0 or fts_segments(conn, table) < MIN_SEGMENTS:
            continue
        total = int(conn.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0])
        if rows >= total * MIN_WRITTEN_SHARE:
            due.append(name)
    return due


def compact_fts(conn: Any, names: Sequence[str]) -> None:
    """FTS5 'optimize' of each index in ``names`` (one segment each), inside the caller's transaction."""
    for name in names:
        table = _table(name)
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
