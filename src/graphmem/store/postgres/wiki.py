"""The wiki's SQL (PostgreSQL backend): pages, their links, claims and cited documents, the index
counts, regeneration marks and lint queries. The port of ``store/sqlite/wiki.py``; the contract is
:class:`graphmem.store.protocols.WikiStore`.
"""

from __future__ import annotations

import dataclasses
import json
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
from ..sqlite.highlight import HIT_CLOSE, HIT_OPEN, bold_hits
from .fts import FtsPgMixin, query_terms, snippet, tokens
from .pgbase import Row

__all__ = ["WikiPgMixin"]

_PAGE_COLS = (
    "id, slug, category, shard, title, title_norm, path, summary, tags, front_matter, content_hash, size,"
    " mtime_ns, node_id, subject, entity_type, contradictions, stub, created_at, updated_at"
)
_SAVED = ("category", "shard", "title", "title_norm", "path", "summary", "tags", "front_matter", "content",
          "content_hash", "size", "mtime_ns", "node_id", "subject", "entity_type", "contradictions", "stub",
          "updated_at", "text")
# Page.text (the file's exact text) exists once the multi-host wiki work is merged; until then it is not read.
_HAS_TEXT = "text" in {f.name for f in dataclasses.fields(Page)}


def _page(r: Row) -> Page:
    keys = r.keys()
    extra = {"text": r["text"]} if _HAS_TEXT and "text" in keys else {}
    return Page(
        slug=r["slug"], category=r["category"], title=r["title"], path=r["path"], summary=r["summary"],
        tags=json.loads(r["tags"]), front_matter=json.loads(r["front_matter"]),
        content=r["content"] if "content" in keys else "", content_hash=r["content_hash"], size=r["size"],
        mtime_ns=r["mtime_ns"], node_id=r["node_id"], subject=r["subject"], entity_type=r["entity_type"],
        contradictions=r["contradictions"], stub=bool(r["stub"]), created_at=r["created_at"],
        updated_at=r["updated_at"], shard=r["shard"], id=r["id"], **extra,
    )


class WikiPgMixin(FtsPgMixin):
    """Wiki persistence over the connection of the store it is mixed into."""

    def get_page(self, slug: str, with_content: bool = False) -> Page | None:
        """The page with this slug."""
        cols = _PAGE_COLS + (", content, text" if with_content else "")
        r = self._one(f"SELECT {cols} FROM pages WHERE slug = %s", [slug])
        return _page(r) if r is not None else None

    def find_page(self, category: str, title_norm: str) -> Page | None:
        """The page of a category with this normalised title."""
        r = self._one(f"SELECT {_PAGE_COLS} FROM pages WHERE category = %s AND title_norm = %s ORDER BY id LIMIT 1",
                      [category, title_norm])
        return _page(r) if r is not None else None

    def find_pages(self, category: str, title_norms: Iterable[str]) -> dict[str, Page]:
        """:meth:`find_page` for many titles at once: ``{normalised title: its oldest page}`` (titles
        without a page left out)."""
        wanted = list(dict.fromkeys(title_norms))
        if not wanted:
            return {}
        rows = self._rows(f"SELECT DISTINCT ON (title_norm) {_PAGE_COLS} FROM pages WHERE category = %s"
                          " AND title_norm = ANY(%s) ORDER BY title_norm, id", [category, wanted])
        return {r["title_norm"]: _page(r) for r in rows}

    def _pages_where(self, column: str, keys: Iterable[str]) -> list[Row]:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return []
        return self._rows(f"SELECT {_PAGE_COLS} FROM pages WHERE {column} = ANY(%s)", [wanted])

    def pages_by_subject(self, subjects: Iterable[str]) -> dict[str, Page]:
        """Generated pages by subject (``entity:<id>``, ``doc:<id>``)."""
        return {r["subject"]: _page(r) for r in self._pages_where("subject", subjects)}

    def subject_slugs(self, subjects: Iterable[str]) -> dict[str, str]:
        """``subject -> slug`` of generated pages (no row decoding: for links)."""
        wanted = list(dict.fromkeys(subjects))
        if not wanted:
            return {}
        return {r[0]: r[1] for r in self._rows("SELECT subject, slug FROM pages WHERE subject = ANY(%s)", [wanted])}

    def slug_subjects(self, slugs: Iterable[str]) -> dict[str, str | None]:
        """``slug -> subject`` (None for pages nobody generates) of existing pages."""
        wanted = list(dict.fromkeys(slugs))
        if not wanted:
            return {}
        return {r[0]: r[1] for r in self._rows("SELECT slug, subject FROM pages WHERE slug = ANY(%s)", [wanted])}

    def pages_by_slug(self, slugs: Iterable[str]) -> dict[str, Page]:
        """Pages by slug (content omitted)."""
        return {r["slug"]: _page(r) for r in self._pages_where("slug", slugs)}

    def slugs_taken(self, base: str) -> set[str]:
        """``base`` and ``base-*`` slugs in use (one index range, compared bytewise)."""
        return {r[0] for r in self._rows("SELECT slug FROM pages WHERE slug = %s OR (slug > %s AND slug < %s)",
                                         [base, base + "-", base + "."])}

    def save_page(self, page: Page, links: Sequence[PageLink], claims: Sequence[PageClaim],
                  sources: Sequence[PageSource]) -> None:
        """Insert or replace (by slug) a page with its links, claims ``(edge id, line, text)``
        and cited documents ``(doc id, version)``; keeps its graph node (kind page) in step."""
        values = [
            page.slug, page.category, page.shard, page.title, normalize_name(page.title), page.path,
            page.summary, json.dumps(page.tags, ensure_ascii=False), json.dumps(page.front_matter, ensure_ascii=False),
            page.content, page.content_hash, page.size, page.mtime_ns, page.node_id, page.subject, page.entity_type,
            page.contradictions, int(page.stub), page.created_at, page.updated_at, getattr(page, "text", ""),
        ]
        saved = self._one(
            "INSERT INTO pages (slug, category, shard, title, title_norm, path, summary, tags, front_matter, content,"
            " content_hash, size, mtime_ns, node_id, subject, entity_type, contradictions, stub, created_at,"
            f" updated_at, text) VALUES ({', '.join(['%s'] * len(values))}) ON CONFLICT (slug) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in _SAVED) + " RETURNING id",
            values,
        )
        assert saved is not None
        self._fts_remove("pages", [int(saved[0])])
        self._fts_add("pages", [(int(saved[0]), [page.title, page.content])])
        self._exec("DELETE FROM page_links WHERE source = %s", [page.slug])
        self._exec("DELETE FROM page_claims WHERE page = %s", [page.slug])
        self._exec("DELETE FROM page_sources WHERE page = %s", [page.slug])
        self._execmany("INSERT INTO page_links (source, target, label, line) VALUES (%s, %s, %s, %s)",
                       [(page.slug, ln.target, ln.label, ln.line) for ln in links])
        self._execmany("INSERT INTO page_claims (page, edge_id, line, text) VALUES (%s, %s, %s, %s)",
                       [(page.slug, e, line, text) for e, line, text in claims])
        self._execmany("INSERT INTO page_sources (page, doc_id, version) VALUES (%s, %s, %s)"
                       " ON CONFLICT (page, doc_id) DO UPDATE SET version = excluded.version",
                       [(page.slug, d, v) for d, v in sources])
        if page.node_id:
            props = json.dumps({"slug": page.slug, "category": page.category, "path": page.path}, ensure_ascii=False)
            self._exec(
                "INSERT INTO nodes (id, kind, name, type, properties, created_at, updated_at, manual)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, 1) ON CONFLICT (id) DO UPDATE SET name = excluded.name,"
                " type = excluded.type, properties = excluded.properties, updated_at = excluded.updated_at",
                [page.node_id, PAGE, page.title, page.category, props, page.created_at, page.updated_at],
            )
            name = self._one("INSERT INTO node_names (kind, norm, alias, node_id) VALUES (%s, %s, %s, %s)"
                             " ON CONFLICT (kind, norm) DO NOTHING RETURNING id",
                             [PAGE, page.slug, page.slug, page.node_id])
            if name is not None:
                self._fts_add("node_names", [(int(name[0]), [page.slug])])

    def set_page_stat(self, slug: str, size: int, mtime_ns: int) -> None:
        """Record the file's size and mtime after a sync found its content unchanged."""
        self._exec("UPDATE pages SET size = %s, mtime_ns = %s WHERE slug = %s", [size, mtime_ns, slug])

    def delete_page_row(self, slug: str) -> bool:
        """Remove a page from the index with its links, claims, sources and graph node."""
        gone = self._rows("DELETE FROM pages WHERE slug = %s RETURNING node_id", [slug])
        if not gone:
            return False
        if gone[0][0]:
            self._exec("DELETE FROM nodes WHERE id = %s AND kind = %s", [gone[0][0], PAGE])
        return True

    def list_pages(self, category: str | None = None, limit: int | None = None, offset: int = 0) -> list[Page]:
        """Pages by category and title (content omitted)."""
        sql = f"SELECT {_PAGE_COLS} FROM pages"
        params: list[Any] = []
        if category is not None:
            sql += " WHERE category = %s"
            params.append(category)
        sql += " ORDER BY category, title_norm, slug LIMIT %s OFFSET %s"
        params += [limit, offset]
        return [_page(r) for r in self._rows(sql, params)]

    def page_files(self) -> dict[str, PageStat]:
        """Every indexed page: ``path -> (slug, size, mtime_ns, content_hash)``."""
        return {r[0]: PageStat(r[1], r[2], r[3], r[4])
                for r in self._rows("SELECT path, slug, size, mtime_ns, content_hash FROM pages")}

    def page_stats(self, paths: Iterable[str]) -> dict[str, PageStat]:
        """Like :meth:`page_files` for some paths."""
        wanted = list(dict.fromkeys(paths))
        if not wanted:
            return {}
        return {r[0]: PageStat(r[1], r[2], r[3], r[4]) for r in self._rows(
            "SELECT path, slug, size, mtime_ns, content_hash FROM pages WHERE path = ANY(%s)", [wanted])}

    def search_pages(self, text: str, k: int = 10, category: str | None = None) -> list[PageHit]:
        """BM25 over title (weighted x5) and body; ``(page, score, snippet)`` best first (matched
        words in the snippet are in ``**bold**``: square brackets would read as wikilinks).

        As on SQLite, words in half of the pages or more are left out of a query that has rarer
        words (their idf is at the 1e-6 floor: the top k are the same), unless that leaves fewer than
        k pages, and then the whole query is ranked."""
        words = list(dict.fromkeys(query_words(text) or query_words(text, keep_stop_words=True)))[:64]
        if not words or k <= 0:
            return []
        full = " ".join(words)
        expr = full
        if len(words) > 1:
            half = sum(n for _, _, n in self.wiki_index_counts()) / 2
            firsts = {w: t[0] for w in words if (t := tokens(w))}
            df = {r[0]: int(r[1]) for r in self._rows("SELECT term, df FROM pages_fts_df WHERE term = ANY(%s)",
                                                      [list(set(firsts.values()))])}
            rare = [w for w in words if w in firsts and df.get(firsts[w], 0) < half]
            if rare and len(rare) < len(words):
                expr = " ".join(rare)
        top = self._rank_pages(expr, k, category)
        if expr != full and len(top) < k:
            top = self._rank_pages(full, k, category)
        if not top:
            return []
        wanted = {t for phrase in query_terms(full) for t in phrase}
        rows = self._rows(f"SELECT {_PAGE_COLS}, content FROM pages WHERE id = ANY(%s)", [[rid for rid, _ in top]])
        pages = {r["id"]: r for r in rows}
        out: list[PageHit] = []
        for rid, score in top:
            r = pages.get(rid)
            if r is None:
                continue
            # As FTS5's snippet() over every column: the body's best window, the title if only it matched.
            body_matches = any(t in wanted for t in tokens(r["content"]))
            source = r["content"] if body_matches else r["title"]
            out.append(PageHit(_page(r), score, bold_hits(snippet(source, wanted, HIT_OPEN, HIT_CLOSE, "…", 16))))
        return out

    def _rank_pages(self, expr: str, k: int, category: str | None) -> list[tuple[int, float]]:
        if category is None:
            return self._fts_rank("pages", expr, k, weights=[5.0, 1.0], prune=False)
        return self._fts_rank("pages", expr, k, weights=[5.0, 1.0], join_sql="JOIN pages g ON g.id = p.rid",
                              where_sql="AND g.category = %s", params=[category], prune=False)

    def page_backlinks(self, slug: str, limit: int | None = None, category: str | None = None
                       ) -> list[Backlink]:
        """``(source slug, line)`` of links to ``slug`` from other pages (of ``category``), oldest
        first (index order: no sort over a hub's thousands of backlinks)."""
        if category is None:
            rows = self._rows("SELECT source, line FROM page_links WHERE target = %s AND source != %s"
                              " ORDER BY id LIMIT %s", [slug, slug, limit])
        else:
            rows = self._rows("SELECT l.source, l.line FROM page_links l JOIN pages p ON p.slug = l.source"
                              " WHERE l.target = %s AND l.source != %s AND p.category = %s ORDER BY l.id"
                              " LIMIT %s", [slug, slug, category, limit])
        return [Backlink(r[0], r[1]) for r in rows]

    def backlink_sources(self, slug: str, limit: int, category: str | None = None) -> list[str]:
        """Slugs of the other pages (of ``category``) linking to ``slug``, each once, in slug order, at
        most ``limit``."""
        if category is None:
            rows = self._rows("SELECT DISTINCT source FROM page_links WHERE target = %s AND source != %s"
                              " ORDER BY source LIMIT %s", [slug, slug, limit])
        else:
            rows = self._rows("SELECT DISTINCT l.source FROM page_links l JOIN pages p ON p.slug = l.source"
                              " WHERE l.target = %s AND l.source != %s AND p.category = %s ORDER BY l.source LIMIT %s",
                              [slug, slug, category, limit])
        return [r[0] for r in rows]

    def page_links_of(self, slug: str) -> list[PageLink]:
        """The links a page makes, in order."""
        return [PageLink(r[0], r[1], r[2]) for r in
                self._rows("SELECT target, line, label FROM page_links WHERE source = %s ORDER BY line, id", [slug])]

    def pages_linking_to(self, targets: Iterable[str], limit: int = 100) -> list[str]:
        """Slugs of pages linking to any of ``targets``."""
        wanted = list(dict.fromkeys(targets))
        if not wanted:
            return []
        return [r[0] for r in self._rows("SELECT DISTINCT source FROM page_links WHERE target = ANY(%s)"
                                         " ORDER BY source LIMIT %s", [wanted, limit])]

    def wiki_index_counts(self) -> list[IndexCount]:
        """``(category, shard, pages)`` for every non-empty shard."""
        return [IndexCount(r[0], r[1], r[2]) for r in
                self._rows("SELECT category, shard, n FROM wiki_index_counts WHERE n > 0 ORDER BY category, shard")]

    def wiki_index_rows(self, category: str, shard: str | None = None,
                        limit: int | None = None) -> list[IndexRow]:
        """``(slug, title, summary)`` of a category (or one shard of it), by title."""
        if shard is None:
            rows = self._rows("SELECT slug, title, summary FROM pages WHERE category = %s ORDER BY title_norm, slug"
                              " LIMIT %s", [category, limit])
        else:
            rows = self._rows("SELECT slug, title, summary FROM pages WHERE category = %s AND shard = %s"
                              " ORDER BY title_norm, slug LIMIT %s", [category, shard, limit])
        return [IndexRow(r[0], r[1], r[2]) for r in rows]

    def wiki_index_prev(self, category: str, shard: str, title_norm: str, slug: str) -> str | None:
        """The slug listed just before ``(title_norm, slug)`` in a shard (one index probe)."""
        r = self._one("SELECT slug FROM pages WHERE category = %s AND shard = %s AND (title_norm, slug) < (%s, %s)"
                      " ORDER BY title_norm DESC, slug DESC LIMIT 1", [category, shard, title_norm, slug])
        return r[0] if r is not None else None

    def mark_wiki_dirty(self, keys: Iterable[str]) -> None:
        """Mark generated pages for regeneration (inside the transaction that changed them)."""
        wanted = sorted(set(keys))  # sorted: two writers lock the rows in one order
        if wanted:
            self._exec("INSERT INTO wiki_dirty (key) SELECT unnest(%s::text[]) ON CONFLICT (key) DO NOTHING",
                       [wanted])

    def wiki_dirty(self, limit: int | None = None) -> list[str]:
        """Pages waiting for regeneration."""
        return [r[0] for r in self._rows("SELECT key FROM wiki_dirty ORDER BY key LIMIT %s", [limit])]

    def clear_wiki_dirty(self, keys: Iterable[str]) -> None:
        """Unmark regenerated pages."""
        wanted = list(dict.fromkeys(keys))
        if wanted:
            self._exec("DELETE FROM wiki_dirty WHERE key = ANY(%s)", [wanted])

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
            " ORDER BY s.page, s.doc_id COLLATE \"C\"")]

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
            " JOIN pages a ON a.slug = l.source AND a.category = %s"
            " JOIN pages b ON b.slug = l.target AND b.category = %s"
            " WHERE NOT EXISTS (SELECT 1 FROM page_links r WHERE r.source = l.target AND r.target = l.source)"
            " ORDER BY l.source, l.target", [from_category, to_category])]

    def wiki_stubs(self) -> list[str]:
        """Entity pages with no description, relations or mentions."""
        return [r[0] for r in self._rows("SELECT slug FROM pages WHERE stub = 1 ORDER BY slug")]
