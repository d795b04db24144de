"""The wiki's SQL (SQLite backend): pages, their links, claims and cited documents, the
index counts, regeneration marks, lint queries, and the bounded graph reads that generated
pages are built from (the bounded graph and evidence reads are in graph.py and evidence.py).
Mixed into :class:`SqliteStore`; the contract is :class:`graphmem.store.protocols.WikiStore`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from ...models import PAGE, Page, PageLink
from ...text import normalize_name, query_words
from ..rows import (
    Backlink,
    BrokenLink,
    FlaggedPage,
    IndexCount,
    IndexRow,
    OneWayLink,
    PageClaim,
    PageHit,
    PageSource,
    PageStat,
    StaleSource,
    StatedType,
    UncitedClaim,
)
from .fts import _fts_query
from .highlight import HIT_CLOSE, HIT_OPEN, bold_hits
from .sqlbase import SqlHelpers, batches, marks

__all__ = ["WikiSqlMixin"]


_PAGE_COLS = (
    "id, slug, category, shard, title, title_norm, path, summary, tags, front_matter, content_hash, size,"
    " mtime_ns, node_id, subject, entity_type, contradictions, stub, created_at, updated_at"
)


def _page(r: sqlite3.Row) -> Page:
    keys = r.keys()
    return Page(
        slug=r["slug"], category=r["category"], title=r["title"], path=r["path"], summary=r["summary"],
        tags=json.loads(r["tags"]), front_matter=json.loads(r["front_matter"]),
        content=r["content"] if "content" in keys else "", text=r["text"] if "text" in keys else "",
        content_hash=r["content_hash"], size=r["size"],
        mtime_ns=r["mtime_ns"], node_id=r["node_id"], subject=r["subject"], entity_type=r["entity_type"],
        contradictions=r["contradictions"], stub=bool(r["stub"]), created_at=r["created_at"],
        updated_at=r["updated_at"], shard=r["shard"], id=r["id"],
    )


class WikiSqlMixin(SqlHelpers):
    """Wiki persistence over the SQLite connection of the store it is mixed into."""

    def get_page(self, slug: str, with_content: bool = False) -> Page | None:
        """The page with this slug."""
        cols = _PAGE_COLS + (", content, text" if with_content else "")
        rows = self._rows(f"SELECT {cols} FROM pages WHERE slug = ?", (slug,))
        return _page(rows[0]) if rows else None

    def find_page(self, category: str, title_norm: str) -> Page | None:
        """The page of a category with this normalised title."""
        rows = self._rows(f"SELECT {_PAGE_COLS} FROM pages WHERE category = ? AND title_norm = ? ORDER BY id LIMIT 1",
                        (category, title_norm))
        return _page(rows[0]) if rows else None

    def find_pages(self, category: str, title_norms: Iterable[str]) -> dict[str, Page]:
        """The oldest page of the category per normalised title, for many titles at once."""
        out: dict[str, Page] = {}
        sql = "SELECT " + _PAGE_COLS + " FROM pages WHERE category = ? AND title_norm IN ({ids}) ORDER BY id"
        for r in self._rows_in(sql, title_norms, before=[category]):
            out.setdefault(r["title_norm"], _page(r))
        return out

    def pages_by_subject(self, subjects: Iterable[str]) -> dict[str, Page]:
        """Generated pages by subject (``entity:<id>``, ``doc:<id>``)."""
        keys = list(dict.fromkeys(subjects))
        out: dict[str, Page] = {}
        for part in batches(keys):
            for r in self._rows(f"SELECT {_PAGE_COLS} FROM pages WHERE subject IN ({marks(len(part))})", part):
                out[r["subject"]] = _page(r)
        return out

    def subject_slugs(self, subjects: Iterable[str]) -> dict[str, str]:
        """``subject -> slug`` of generated pages (no row decoding: for links)."""
        keys = list(dict.fromkeys(subjects))
        out: dict[str, str] = {}
        for part in batches(keys):
            for r in self._rows(f"SELECT subject, slug FROM pages WHERE subject IN ({marks(len(part))})", part):
                out[r[0]] = r[1]
        return out

    def slug_subjects(self, slugs: Iterable[str]) -> dict[str, str | None]:
        """``slug -> subject`` (None for pages nobody generates) of existing pages."""
        keys = list(dict.fromkeys(slugs))
        out: dict[str, str | None] = {}
        for part in batches(keys):
            for r in self._rows(f"SELECT slug, subject FROM pages WHERE slug IN ({marks(len(part))})", part):
                out[r[0]] = r[1]
        return out

    def pages_by_slug(self, slugs: Iterable[str]) -> dict[str, Page]:
        """Pages by slug (content omitted)."""
        keys = list(dict.fromkeys(slugs))
        out: dict[str, Page] = {}
        for part in batches(keys):
            for r in self._rows(f"SELECT {_PAGE_COLS} FROM pages WHERE slug IN ({marks(len(part))})", part):
                out[r["slug"]] = _page(r)
        return out

    def slugs_taken(self, base: str) -> set[str]:
        """``base`` and ``base-*`` slugs in use (one index range)."""
        rows = self._rows("SELECT slug FROM pages WHERE slug = ? OR (slug > ? AND slug < ?)",
                        (base, base + "-", base + "."))
        return {r[0] for r in rows}

    def save_page(self, page: Page, links: Sequence[PageLink], claims: Sequence[PageClaim],
                  sources: Sequence[PageSource]) -> None:
        """Insert or replace (by slug) a page with its links, claims ``(edge id, line, text)``
        and cited documents ``(doc id, version)``; keeps its graph node (kind page) in step."""
        self.save_pages([(page, links, claims, sources)])

    def save_pages(self, pages: Sequence[tuple[Page, Sequence[PageLink], Sequence[PageClaim], Sequence[PageSource]]]
                   ) -> None:
        """:meth:`save_page` for each, in order, with one statement per table for all of them."""
        slugs = [p.slug for p, _, _, _ in pages]
        if len(set(slugs)) != len(slugs):  # the same page twice: the later save wins, as in order
            for item in pages:
                self.save_pages([item])
            return
        if not pages:
            return
        c = self.conn
        c.executemany(
            "INSERT INTO pages (slug, category, shard, title, title_norm, path, summary, tags, front_matter, content,"
            " content_hash, size, mtime_ns, node_id, subject, entity_type, contradictions, stub, created_at,"
            " updated_at, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (slug) DO UPDATE SET category = excluded.category, shard = excluded.shard,"
            " title = excluded.title, title_norm = excluded.title_norm, path = excluded.path,"
            " summary = excluded.summary, tags = excluded.tags, front_matter = excluded.front_matter,"
            " content = excluded.content, content_hash = excluded.content_hash, size = excluded.size,"
            " mtime_ns = excluded.mtime_ns, node_id = excluded.node_id, subject = excluded.subject,"
            " entity_type = excluded.entity_type, contradictions = excluded.contradictions, stub = excluded.stub,"
            " updated_at = excluded.updated_at, text = excluded.text",
            [(page.slug, page.category, page.shard, page.title, normalize_name(page.title), page.path,
              page.summary, json.dumps(page.tags, ensure_ascii=False),
              json.dumps(page.front_matter, ensure_ascii=False), page.content, page.content_hash, page.size,
              page.mtime_ns, page.node_id, page.subject, page.entity_type, page.contradictions, int(page.stub),
              page.created_at, page.updated_at, page.text) for page, _, _, _ in pages],
        )
        keys = [(slug,) for slug in slugs]
        c.executemany("DELETE FROM page_links WHERE source = ?", keys)
        c.executemany("DELETE FROM page_claims WHERE page = ?", keys)
        c.executemany("DELETE FROM page_sources WHERE page = ?", keys)
        c.executemany("INSERT INTO page_links (source, target, label, line) VALUES (?, ?, ?, ?)",
                      [(p.slug, ln.target, ln.label, ln.line) for p, links, _, _ in pages for ln in links])
        c.executemany("INSERT INTO page_claims (page, edge_id, line, text) VALUES (?, ?, ?, ?)",
                      [(p.slug, e, line, text) for p, _, claims, _ in pages for e, line, text in claims])
        c.executemany("INSERT OR REPLACE INTO page_sources (page, doc_id, version) VALUES (?, ?, ?)",
                      [(p.slug, d, v) for p, _, _, sources in pages for d, v in sources])
        nodes = [p for p, _, _, _ in pages if p.node_id]
        c.executemany(
            "INSERT INTO nodes (id, kind, name, type, properties, created_at, updated_at, manual)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 1) ON CONFLICT (id) DO UPDATE SET name = excluded.name,"
            " type = excluded.type, properties = excluded.properties, updated_at = excluded.updated_at",
            [(p.node_id, PAGE, p.title, p.category,
              json.dumps({"slug": p.slug, "category": p.category, "path": p.path}, ensure_ascii=False),
              p.created_at, p.updated_at) for p in nodes],
        )
        c.executemany("INSERT OR IGNORE INTO node_names (kind, norm, alias, node_id) VALUES (?, ?, ?, ?)",
                      [(PAGE, p.slug, p.slug, p.node_id) for p in nodes])

    def set_page_stat(self, slug: str, size: int, mtime_ns: int) -> None:
        """Record the file's size and mtime after a sync found its content unchanged."""
        self.conn.execute("UPDATE pages SET size = ?, mtime_ns = ? WHERE slug = ?", (size, mtime_ns, slug))

    def delete_page_row(self, slug: str) -> bool:
        """Remove a page from the index with its links, claims, sources and graph node."""
        rows = self._rows("SELECT node_id FROM pages WHERE slug = ?", (slug,))
        if not rows:
            return False
        self.conn.execute("DELETE FROM pages WHERE slug = ?", (slug,))
        if rows[0][0]:
            self.conn.execute("DELETE FROM nodes WHERE id = ? AND kind = ?", (rows[0][0], PAGE))
        return True

    def list_pages(self, category: str | None = None, limit: int | None = None, offset: int = 0) -> list[Page]:
        """Pages by category and title (content omitted)."""
        sql = f"SELECT {_PAGE_COLS} FROM pages"
        params: list[Any] = []
        if category is not None:
            sql += " WHERE category = ?"
            params.append(category)
        sql += " ORDER BY category, title_norm, slug LIMIT ? OFFSET ?"
        params += [-1 if limit is None else limit, offset]
        return [_page(r) for r in self._rows(sql, params)]

    def page_files(self) -> dict[str, PageStat]:
        """Every indexed page: ``path -> (slug, size, mtime_ns, content_hash)``."""
        return {r[0]: PageStat(r[1], r[2], r[3], r[4])
                for r in self._rows("SELECT path, slug, size, mtime_ns, content_hash FROM pages")}

    def page_stats(self, paths: Iterable[str]) -> dict[str, PageStat]:
        """Like :meth:`page_files` for some paths."""
        keys = list(dict.fromkeys(paths))
        out: dict[str, PageStat] = {}
        for part in batches(keys):
            for r in self._rows(f"SELECT path, slug, size, mtime_ns, content_hash FROM pages WHERE path IN"
                              f" ({marks(len(part))})", part):
                out[r[0]] = PageStat(r[1], r[2], r[3], r[4])
        return out

    def search_pages(self, text: str, k: int = 10, category: str | None = None) -> list[PageHit]:
        """BM25 over title (weighted x5) and body; ``(page, score, snippet)`` best first (matched
        words in the snippet are in ``**bold**``: square brackets would read as wikilinks).

        Cost: ranking touches every page that matches. Two things keep that small: the top k
        are ranked on rowids alone (the page rows and snippets are read for those k only), and
        words in half of the pages or more are left out of a query that has rarer words — BM25
        gives such a word an idf <= 0 (FTS5 clamps it to 1e-6), so the pages matching only
        it rank below all others and the top k are the same (they fill up if fewer than k match
        the rarer words).
        """
        words = list(dict.fromkeys(query_words(text) or query_words(text, keep_stop_words=True)))[:64]
        if not words or k <= 0:
            return []
        full = " OR ".join(e for e in (_fts_query(w) for w in words) if e)
        expr = full
        if len(words) > 1:
            half = sum(n for _, _, n in self.wiki_index_counts()) / 2
            rare = [w for w in words if self.conn.execute(
                "SELECT count(*) FROM pages_fts WHERE pages_fts MATCH ?", (_fts_query(w),)).fetchone()[0] < half]
            if rare and len(rare) < len(words):
                expr = " OR ".join(e for e in (_fts_query(w) for w in rare) if e)
        top = self._rank_pages(expr, k, category)
        if expr != full and len(top) < k:
            top = self._rank_pages(full, k, category)
        if not top:
            return []
        ids = [rowid for rowid, _ in top]
        in_ids = marks(len(ids))
        snips = {r[0]: r[1] for r in self._rows(
            f"SELECT rowid, snippet(pages_fts, -1, '{HIT_OPEN}', '{HIT_CLOSE}', '…', 16) FROM pages_fts"
            f" WHERE pages_fts MATCH ? AND rowid IN ({in_ids})", [full, *ids])}
        pages = {r["id"]: _page(r) for r in self._rows(f"SELECT {_PAGE_COLS} FROM pages WHERE id IN ({in_ids})", ids)}
        return [PageHit(pages[rowid], -score, bold_hits(snips.get(rowid, "")))
                for rowid, score in top if rowid in pages]

    def _rank_pages(self, expr: str, k: int, category: str | None) -> list[tuple[int, float]]:
        if category is None:
            rows = self._rows("SELECT rowid, bm25(pages_fts, 5.0, 1.0) AS s FROM pages_fts WHERE pages_fts MATCH ?"
                            " ORDER BY s LIMIT ?", (expr, k))
        else:
            rows = self._rows("SELECT pages_fts.rowid, bm25(pages_fts, 5.0, 1.0) AS s FROM pages_fts JOIN pages p"
                            " ON p.id = pages_fts.rowid WHERE pages_fts MATCH ? AND p.category = ? ORDER BY s LIMIT ?",
                            (expr, category, k))
        return [(int(r[0]), float(r[1])) for r in rows]

    def page_backlinks(self, slug: str, limit: int | None = None, category: str | None = None
                       ) -> list[Backlink]:
        """``(source slug, line)`` of links to ``slug`` from other pages (of ``category``), oldest
        first (index order: no sort over a hub's thousands of backlinks)."""
        if category is None:
            rows = self._rows("SELECT source, line FROM page_links WHERE target = ? AND source != ?"
                            " ORDER BY id LIMIT ?", (slug, slug, -1 if limit is None else limit))
        else:
            rows = self._rows("SELECT l.source, l.line FROM page_links l JOIN pages p ON p.slug = l.source"
                            " WHERE l.target = ? AND l.source != ? AND p.category = ? ORDER BY l.id"
                            " LIMIT ?", (slug, slug, category, -1 if limit is None else limit))
        return [Backlink(r[0], r[1]) for r in rows]

    def backlink_sources(self, slug: str, limit: int, category: str | None = None) -> list[str]:
        """Source slugs of links to ``slug`` (from pages of ``category``), slug order, at most
        ``limit``: one range of the (target, source) index, no sort over a hub's backlinks."""
        if category is None:
            rows = self._rows("SELECT DISTINCT source FROM page_links INDEXED BY page_links_target_source"
                              " WHERE target = ? AND source != ? ORDER BY source LIMIT ?", (slug, slug, limit))
        else:
            rows = self._rows("SELECT DISTINCT l.source FROM page_links l INDEXED BY page_links_target_source"
                              " JOIN pages p ON p.slug = l.source WHERE l.target = ? AND l.source != ?"
                              " AND p.category = ? ORDER BY l.source LIMIT ?", (slug, slug, category, limit))
        return [r[0] for r in rows]

    def page_links_of(self, slug: str) -> list[PageLink]:
        """The links a page makes, in order."""
        return [PageLink(r[0], r[1], r[2]) for r in
                self._rows("SELECT target, line, label FROM page_links WHERE source = ? ORDER BY line, id", (slug,))]

    def pages_linking_to(self, targets: Iterable[str], limit: int = 100) -> list[str]:
        """Slugs of pages linking to any of ``targets``."""
        keys = list(dict.fromkeys(targets))
        out: list[str] = []
        for part in batches(keys):
            for r in self._rows(f"SELECT DISTINCT source FROM page_links WHERE target IN ({marks(len(part))})"
                              " ORDER BY source LIMIT ?", [*part, limit]):
                if r[0] not in out:
                    out.append(r[0])
        return out[:limit]

    def wiki_index_counts(self) -> list[IndexCount]:
        """``(category, shard, pages)`` for every non-empty shard."""
        return [IndexCount(r[0], r[1], r[2]) for r in
                self._rows("SELECT category, shard, n FROM wiki_index_counts WHERE n > 0 ORDER BY category, shard")]

    def wiki_index_rows(self, category: str, shard: str | None = None,
                        limit: int | None = None) -> list[IndexRow]:
        """``(slug, title, summary)`` of a category (or one shard of it), by title."""
        if shard is None:
            rows = self._rows("SELECT slug, title, summary FROM pages WHERE category = ? ORDER BY title_norm, slug"
                            " LIMIT ?", (category, -1 if limit is None else limit))
        else:
            rows = self._rows("SELECT slug, title, summary FROM pages WHERE category = ? AND shard = ?"
                            " ORDER BY title_norm, slug LIMIT ?", (category, shard, -1 if limit is None else limit))
        return [IndexRow(r[0], r[1], r[2]) for r in rows]

    def wiki_index_prev(self, category: str, shard: str, title_norm: str, slug: str) -> str | None:
        """The slug listed just before ``(title_norm, slug)`` in a shard (one index probe)."""
        rows = self._rows("SELECT slug FROM pages WHERE category = ? AND shard = ? AND (title_norm, slug) < (?, ?)"
                        " ORDER BY title_norm DESC, slug DESC LIMIT 1", (category, shard, title_norm, slug))
        return rows[0][0] if rows else None

    def mark_wiki_dirty(self, keys: Iterable[str]) -> None:
        """Mark generated pages for regeneration (inside the transaction that changed them)."""
        self.conn.executemany("INSERT OR IGNORE INTO wiki_dirty (key) VALUES (?)", [(k,) for k in keys])

    def wiki_dirty(self, limit: int | None = None) -> list[str]:
        """Pages waiting for regeneration."""
        return [r[0] for r in self._rows("SELECT key FROM wiki_dirty ORDER BY key LIMIT ?",
                                       (-1 if limit is None else limit,))]

    def clear_wiki_dirty(self, keys: Iterable[str]) -> None:
        """Unmark regenerated pages."""
        self.conn.executemany("DELETE FROM wiki_dirty WHERE key = ?", [(k,) for k in keys])

    def wiki_broken_links(self) -> list[BrokenLink]:
        """``(source, target, line)`` of links to pages that do not exist."""
        return [BrokenLink(r[0], r[1], r[2]) for r in self._rows(
            "SELECT l.source, l.target, l.line FROM page_links l"
            " WHERE NOT EXISTS (SELECT 1 FROM pages p WHERE p.slug = l.target) ORDER BY l.source, l.line")]

    def wiki_isolated_pages(self) -> list[str]:
        """Pages with no wikilinks at all."""
        return [r[0] for r in self._rows(
            "SELECT slug FROM pages p WHERE NOT EXISTS (SELECT 1 FROM page_links l WHERE l.source = p.slug)"
            " ORDER BY slug")]

    def wiki_unlinked_pages(self) -> list[str]:
        """Pages no other page links to."""
        return [r[0] for r in self._rows(
            "SELECT slug FROM pages p WHERE NOT EXISTS (SELECT 1 FROM page_links l WHERE l.target = p.slug"
            " AND l.source != p.slug) ORDER BY slug")]

    def wiki_stale_sources(self) -> list[StaleSource]:
        """``(page, doc id, cited version, latest version or None if deleted)`` of citations
        of a superseded or deleted document."""
        return [StaleSource(r[0], r[1], r[2], r[3]) for r in self._rows(
            "SELECT s.page, s.doc_id, s.version, d.version FROM page_sources s"
            " LEFT JOIN documents d ON d.doc_id = s.doc_id AND d.is_latest = 1"
            " WHERE d.version IS NULL OR (s.version IS NOT NULL AND s.version < d.version)"
            " ORDER BY s.page, s.doc_id")]

    def wiki_flagged_pages(self) -> list[FlaggedPage]:
        """``(slug, flagged contradictions)`` of pages with a non-empty Contradictions section."""
        return [FlaggedPage(r[0], r[1]) for r in
                self._rows("SELECT slug, contradictions FROM pages WHERE contradictions > 0 ORDER BY slug")]

    def wiki_stated_types(self) -> list[StatedType]:
        """``(slug, subject, title_norm, stated type)`` of pages that state an entity type."""
        return [StatedType(r[0], r[1], r[2], r[3]) for r in self._rows(
            "SELECT slug, subject, title_norm, entity_type FROM pages WHERE entity_type IS NOT NULL ORDER BY slug")]

    def wiki_uncited_claims(self) -> list[UncitedClaim]:
        """``(page, edge id, line, text, relation missing)`` of claims with no evidence left
        (hand-made relations count as supported)."""
        return [UncitedClaim(r[0], r[1], r[2], r[3], bool(r[4])) for r in self._rows(
            "SELECT c.page, c.edge_id, c.line, c.text, e.id IS NULL FROM page_claims c"
            " LEFT JOIN edges e ON e.id = c.edge_id"
            " WHERE e.id IS NULL OR (e.manual = 0 AND NOT EXISTS (SELECT 1 FROM provenance p"
            " WHERE p.item_kind = 'edge' AND p.item_id = c.edge_id)) ORDER BY c.page, c.line")]

    def wiki_one_way_links(self, from_category: str, to_category: str) -> list[OneWayLink]:
        """``(a, b)``: a page of ``from_category`` links a page of ``to_category`` that does
        not link back."""
        return [OneWayLink(r[0], r[1]) for r in self._rows(
            "SELECT DISTINCT l.source, l.target FROM page_links l"
            " JOIN pages a ON a.slug = l.source AND a.category = ?"
            " JOIN pages b ON b.slug = l.target AND b.category = ?"
            " WHERE NOT EXISTS (SELECT 1 FROM page_links r WHERE r.source = l.target AND r.target = l.source)"
            " ORDER BY l.source, l.target", (from_category, to_category))]

    def wiki_stubs(self) -> list[str]:
        """Entity pages with no description, relations or mentions."""
        return [r[0] for r in self._rows("SELECT slug FROM pages WHERE stub = 1 ORDER BY slug")]
