"""Full text with real BM25 on PostgreSQL: term statistics kept by graphmem.

Text is tokenised as SQLite FTS5's ``porter unicode61`` tokenizer does (tokens are runs of Unicode
letters, numbers and private-use characters, folded to lower case without diacritics, Porter-stemmed), and
each indexed table ``T`` gets (see :func:`fts_schema`): ``T_fts_docs`` (row id, its length in tokens),
``T_fts_terms`` (term, row id, term frequency per column), ``T_fts_df`` (rows per term) and ``T_fts_stats``
(rows, tokens), the last two kept by statement triggers, the first two cascading with their row. A query
is scored like FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)), at least 1e-6;
the row length is the sum over its columns, each column's term frequency multiplied by its weight), so
the rankings are the SQLite backend's. User text never becomes query syntax: it is reduced to words by
:func:`graphmem.text.query_words`, exactly as the SQLite backend builds its FTS5 expression (same stop
words, the same pruning of words found in more than a fifth of the rows).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from ...text import query_words
from .pgbase import PgHelpers
from .porter import stem
from .unicode61 import FOLD, SEPARATOR_RANGES

__all__ = ["FtsPgMixin", "FTS_SOURCES", "fts_schema", "term_counts", "tokens", "token_spans", "query_terms", "snippet",
           "K1", "B"]

FTS_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "chunks": ("id", ("text", "title")),
    "node_names": ("id", ("alias",)),
    "pages": ("id", ("title", "content")),
    "skills": ("rid", ("name", "triggers", "tags", "description", "body")),
    "memories": ("rowid_", ("text",)),
}
"""Each table with term statistics (:func:`fts_schema`): its row id column and the SQL of its indexed
columns, in order. Checks, repairs and loads re-index from these; a mixin adding an indexed table adds it."""

K1, B = 1.2, 0.75
_PRUNE_SHARE, _PRUNE_FLOOR = 0.2, 2000  # sqlite/fts.py's pruned_fts_query
_MAX_WORDS = 64

# unicode61's token characters: ASCII letters and digits, and every other code point that is not one of its
# separators (unicode61.py, read off SQLite: its tables are Unicode 6.1's, not Python's).
_SEPARATORS = "".join(re.escape(chr(c)) for c in range(0x80) if not chr(c).isalnum()) + "".join(
    f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in SEPARATOR_RANGES)
_TOKEN = re.compile(f"[^{_SEPARATORS}]+")


@lru_cache(maxsize=100_000)
def _fold(token: str) -> str:
    if token.isascii():
        return token.lower()
    return "".join(FOLD.get(ord(ch), ch.lower()) for ch in token)


def token_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, term)`` of every token of ``text``, in order (offsets into ``text``)."""
    return [(m.start(), m.end(), stem(_fold(m.group()))) for m in _TOKEN.finditer(text)]


def tokens(text: str) -> list[str]:
    """The terms FTS5's ``porter unicode61`` tokenizer makes of ``text``, in order."""
    return [stem(_fold(m)) for m in _TOKEN.findall(text)]


def query_terms(text: str) -> list[list[str]]:
    """The phrases of the SQLite backend's FTS5 expression for ``text`` (each a list of terms; a word of
    several tokens, like ``foo_bar``, is a phrase of several), before pruning."""
    words = list(dict.fromkeys(query_words(text) or query_words(text, keep_stop_words=True)))[:_MAX_WORDS]
    return [t for t in (tokens(w) for w in words) if t]


def fts_schema(table: str, key: str, columns: int) -> str:
    """The DDL of the term statistics of ``table`` (row id column ``key``, ``columns`` indexed columns)."""
    t = f"{table}_fts"
    return f"""
CREATE TABLE {t}_docs (
    rid BIGINT PRIMARY KEY REFERENCES {table} ({key}) ON DELETE CASCADE,
    len INTEGER NOT NULL
);
CREATE TABLE {t}_terms (
    term TEXT COLLATE "C" NOT NULL,
    rid BIGINT NOT NULL REFERENCES {t}_docs (rid) ON DELETE CASCADE,
    tfs INTEGER[] NOT NULL,
    PRIMARY KEY (term, rid)
);
CREATE INDEX {t}_terms_rid ON {t}_terms (rid);
CREATE TABLE {t}_df (term TEXT COLLATE "C" PRIMARY KEY, df BIGINT NOT NULL);
CREATE TABLE {t}_stats (one INTEGER PRIMARY KEY CHECK (one = 1), n BIGINT NOT NULL, tokens BIGINT NOT NULL,
    columns INTEGER NOT NULL);
INSERT INTO {t}_stats VALUES (1, 0, 0, {int(columns)});
CREATE FUNCTION {t}_terms_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {t}_df AS d (term, df) SELECT term, count(*) FROM added GROUP BY term
        ON CONFLICT (term) DO UPDATE SET df = d.df + excluded.df;
    RETURN NULL;
END $$;
CREATE TRIGGER {t}_terms_ai AFTER INSERT ON {t}_terms REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION {t}_terms_added();
CREATE FUNCTION {t}_terms_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE {t}_df d SET df = d.df - g.n FROM (SELECT term, count(*) AS n FROM gone GROUP BY term) g
        WHERE d.term = g.term;
    DELETE FROM {t}_df WHERE df <= 0;
    RETURN NULL;
END $$;
CREATE TRIGGER {t}_terms_ad AFTER DELETE ON {t}_terms REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION {t}_terms_gone();
CREATE FUNCTION {t}_docs_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE {t}_stats SET n = n + (SELECT count(*) FROM added),
        tokens = tokens + (SELECT coalesce(sum(len), 0) FROM added);
    RETURN NULL;
END $$;
CREATE TRIGGER {t}_docs_ai AFTER INSERT ON {t}_docs REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION {t}_docs_added();
CREATE FUNCTION {t}_docs_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE {t}_stats SET n = n - (SELECT count(*) FROM gone),
        tokens = tokens - (SELECT coalesce(sum(len), 0) FROM gone);
    RETURN NULL;
END $$;
CREATE TRIGGER {t}_docs_ad AFTER DELETE ON {t}_docs REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION {t}_docs_gone();
"""


def term_counts(texts: Sequence[str]) -> tuple[int, list[tuple[str, list[int]]]]:
    """A row's length in tokens (all columns) and ``(term, [frequency in each column])`` of its terms."""
    per_col = [Counter(tokens(t or "")) for t in texts]
    return (sum(sum(c.values()) for c in per_col),
            [(term, [c.get(term, 0) for c in per_col]) for term in dict.fromkeys(t for c in per_col for t in c)])


def snippet(text: str, terms: Iterable[str], open_: str = "[", close: str = "]", ellipsis: str = "…",
            size: int = 16) -> str:
    """A window of about ``size`` tokens of ``text`` with the most distinct matched ``terms``, each match
    between ``open_`` and ``close`` (the role of FTS5's ``snippet()``)."""
    wanted = set(terms)
    spans = token_spans(text)
    if not spans:
        return ""
    hits = [i for i, s in enumerate(spans) if s[2] in wanted]
    best, best_score = 0, -1
    for start in (hits or [0]):
        # Start a little before the first hit of the window, as FTS5 does, so the hit has some context.
        first = max(0, min(start - 2, len(spans) - size))
        window = spans[first:first + size]
        score = len({s[2] for s in window if s[2] in wanted}) * 1000 + sum(s[2] in wanted for s in window)
        if score > best_score:
            best, best_score = first, score
    window = spans[best:best + size]
    out: list[str] = []
    pos = window[0][0]
    for s, e, term in window:
        out.append(text[pos:s])
        out.append(f"{open_}{text[s:e]}{close}" if term in wanted else text[s:e])
        pos = e
    head = ellipsis if best > 0 else ""
    tail = ellipsis if best + size < len(spans) else text[pos:]
    return head + "".join(out) + tail


class FtsPgMixin(PgHelpers):
    """Indexing rows into, and BM25 over, the term statistics of :func:`fts_schema` tables."""

    def _fts_add(self, table: str, rows: Iterable[tuple[int, Sequence[str]]]) -> None:
        """Index ``(row id, [text of each column])`` rows of ``table`` (call in the row's transaction)."""
        docs: list[tuple[int, int]] = []
        terms: list[tuple[str, int, list[int]]] = []
        for rid, texts in rows:
            length, row_terms = term_counts(texts)
            docs.append((rid, length))
            terms += [(term, rid, tfs) for term, tfs in row_terms]
        if not docs:
            return
        t = f"{table}_fts"
        with self._use() as conn, conn.cursor() as cur:
            # COPY: one round trip for every term row of a batch (an ingest writes thousands).
            with cur.copy(f"COPY {t}_docs (rid, len) FROM STDIN") as copy:
                for d in docs:
                    copy.write_row(d)
            with cur.copy(f"COPY {t}_terms (term, rid, tfs) FROM STDIN") as copy:
                for row in terms:
                    copy.write_row(row)

    def _fts_remove(self, table: str, rids: Iterable[int]) -> None:
        """Drop rows from ``table``'s index (before re-indexing changed text; deleted rows cascade)."""
        ids = list(dict.fromkeys(rids))
        if ids:
            self._exec(f"DELETE FROM {table}_fts_docs WHERE rid = ANY(%s)", (ids,))

    def _fts_stats(self, table: str) -> tuple[int, int]:
        row = self._one(f"SELECT n, tokens FROM {table}_fts_stats")
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def _fts_prepare(self, table: str, text: str, total: int | None, total_sql: str | None, prune: bool
                     ) -> tuple[list[tuple[list[str], float]], float] | None:
        """The query's phrases with their idf, and the average row length; None when ``text`` has no word
        or nothing is indexed. Words in more than a fifth of ``total`` rows (or of what ``total_sql``
        counts) are pruned, as long as a rarer one remains. One round trip."""
        phrases = query_terms(text)
        if not phrases:
            return None
        all_terms = sorted({t for p in phrases for t in p})
        row = self._one(f"SELECT s.n, s.tokens, ({total_sql or 'SELECT NULL::bigint'}), d.terms, d.dfs"
                        f" FROM {table}_fts_stats s, LATERAL (SELECT array_agg(term::text) AS terms,"
                        f" array_agg(df) AS dfs FROM {table}_fts_df WHERE term = ANY(%s)) d", (all_terms,))
        if row is None or not row[0]:
            return None
        n_rows, n_tokens = int(row[0]), int(row[1])
        total = int(row[2]) if row[2] is not None else total
        df = dict(zip(row[3] or [], (int(x) for x in row[4] or [])))
        if prune and total is not None and len(phrases) > 1:
            cap = max(_PRUNE_FLOOR, int(total * _PRUNE_SHARE))
            keep = [p for p in phrases if min(df.get(t, 0) for t in p) < cap]
            phrases = keep or phrases
        out = []
        for p in phrases:
            n = min(df.get(t, 0) for t in p)
            idf = math.log((n_rows - n + 0.5) / (n + 0.5))
            out.append((p, idf if idf > 0 else 1e-6))
        return out, (n_tokens / n_rows if n_tokens else 1.0)

    def _fts_rank(self, table: str, text: str, k: int | None, weights: Sequence[float] | None = None,
                  join_sql: str = "", where_sql: str = "", params: Sequence[Any] = (),
                  rids: Sequence[int] | None = None, total: int | None = None,
                  prune: bool = True, total_sql: str | None = None) -> list[tuple[int, float]]:
        """``(row id, BM25)`` of ``table``'s rows matching any phrase of ``text``, best first (ties by row
        id), at most ``k`` (None: all). ``join_sql`` (no parameters) and ``where_sql`` (with ``params``) filter the
        rows: the terms' alias is ``p``, e.g. ``JOIN chunks c ON c.id = p.rid`` and ``AND c.doc_id = %s``; ``rids``
        limits the rows scored; ``total`` (or the scalar query ``total_sql``) is the row count the pruning of
        common words is relative to."""
        return [(int(r[0]), float(r[1])) for r in self._fts_rank_rows(
            table, text, k, weights, join_sql, where_sql, params, rids, total, prune, total_sql)]

    def _fts_rank_rows(self, table: str, text: str, k: int | None, weights: Sequence[float] | None = None,
                       join_sql: str = "", where_sql: str = "", params: Sequence[Any] = (),
                       rids: Sequence[int] | None = None, total: int | None = None, prune: bool = True,
                       total_sql: str | None = None, outer_sql: str | None = None) -> list[Any]:
        """:meth:`_fts_rank`'s rows, or those of ``outer_sql`` (no parameters) wrapped around them: its
        ``{ranked}`` is the ranked query (columns ``rid``, ``score``), e.g. to read each row's key in the
        same round trip."""
        if k is not None and k <= 0:
            return []
        prepared = self._fts_prepare(table, text, total, total_sql, prune)
        if prepared is None:
            return []
        phrases, avgdl = prepared
        w = [float(x) for x in weights] if weights else [1.0]
        # One term per phrase: adjacency is not stored, so a word of several tokens (``foo_bar``, rare in
        # queries) counts by its first token.
        terms = [p[0] for p, _ in phrases]
        idfs = [idf for _, idf in phrases]
        tf = " + ".join(f"{x!r} * coalesce(p.tfs[{i + 1}], 0)" for i, x in enumerate(w))
        sql = (f"SELECT p.rid, sum(q.idf * (tf.f * {K1 + 1!r}) / (tf.f + {K1!r} * (1 - {B!r} + {B!r} * d.len / %s)))"
               f" AS score FROM unnest(%s::text[], %s::float8[]) AS q(term, idf)"
               f" JOIN {table}_fts_terms p ON p.term = q.term"
               f" JOIN {table}_fts_docs d ON d.rid = p.rid"
               f" CROSS JOIN LATERAL (SELECT ({tf})::float8 AS f) tf {join_sql}"
               " WHERE TRUE")
        args: list[Any] = [avgdl, terms, idfs]
        if rids is not None:
            sql += " AND p.rid = ANY(%s)"
            args.append(list(rids))
        sql += f" {where_sql} GROUP BY p.rid ORDER BY score DESC, p.rid"
        args += list(params)
        if k is not None:
            sql += " LIMIT %s"
            args.append(k)
        if outer_sql is not None:
            sql = outer_sql.format(ranked=sql)
        return self._rows(sql, args)
