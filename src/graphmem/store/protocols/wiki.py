"""The wiki's index: pages (rows of the files under ``wiki/``), their links, claims, cited
documents, index.md counts, regeneration marks and lint queries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from ...models import Page, PageLink
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

__all__ = ["WikiStore"]


@runtime_checkable
class WikiStore(Protocol):
    """Pages by slug. A page with a ``node_id`` is also a graph node of kind ``page`` (manual), kept in
    step by :meth:`save_page` and :meth:`delete_page_row`. Reads without ``with_content`` leave
    ``Page.content`` empty."""

    # -- pages ------------------------------------------------------------------------------

    def save_page(self, page: Page, links: Sequence[PageLink], claims: Sequence[PageClaim],
                  sources: Sequence[PageSource]) -> None:
        """Insert, or replace by slug, a page with its links, claims and cited documents (the old
        ones are replaced, not merged; ``created_at`` of an existing page stays). Another page of
        the same ``subject``: BackendError."""
        ...

    def save_pages(self, pages: Sequence[tuple[Page, Sequence[PageLink], Sequence[PageClaim], Sequence[PageSource]]]
                   ) -> None:
        """:meth:`save_page` for each ``(page, links, claims, sources)``, in order (a batch of
        generated pages is one call: a backend may write each table once for all of them)."""
        ...

    def get_page(self, slug: str, with_content: bool = False) -> Page | None:
        """The page with this slug; None when there is none."""
        ...

    def find_page(self, category: str, title_norm: str) -> Page | None:
        """The (oldest) page of a category with this normalised title; None when there is none."""
        ...

    def find_pages(self, category: str, title_norms: Iterable[str]) -> dict[str, Page]:
        """:meth:`find_page` for many titles at once: ``{normalised title: its oldest page}``
        (titles without a page are left out)."""
        ...

    def pages_by_subject(self, subjects: Iterable[str]) -> dict[str, Page]:
        """Generated pages by subject (``entity:<id>``, ``doc:<id>``)."""
        ...

    def pages_by_slug(self, slugs: Iterable[str]) -> dict[str, Page]:
        """Pages by slug."""
        ...

    def subject_slugs(self, subjects: Iterable[str]) -> dict[str, str]:
        """``subject -> slug`` of generated pages."""
        ...

    def slug_subjects(self, slugs: Iterable[str]) -> dict[str, str | None]:
        """``slug -> subject`` (None: a page nobody generates) of existing pages."""
        ...

    def slugs_taken(self, base: str) -> set[str]:
        """``base`` and ``base-<suffix>`` slugs in use (not ``base<other>``)."""
        ...

    def set_page_stat(self, slug: str, size: int, mtime_ns: int) -> None:
        """Record a page file's size and mtime (content unchanged)."""
        ...

    def delete_page_row(self, slug: str) -> bool:
        """Remove a page with its links, claims, sources and graph node; False when there was none."""
        ...

    def list_pages(self, category: str | None = None, limit: int | None = None, offset: int = 0) -> list[Page]:
        """Pages (of a category) by category, normalised title, slug."""
        ...

    def page_files(self) -> dict[str, PageStat]:
        """Every page: ``path -> (slug, size, mtime_ns, content_hash)``."""
        ...

    def page_stats(self, paths: Iterable[str]) -> dict[str, PageStat]:
        """Like :meth:`page_files` for some paths (unknown paths absent)."""
        ...

    def search_pages(self, text: str, k: int = 10, category: str | None = None) -> list[PageHit]:
        """BM25 over titles (weighted more) and bodies, best first, at most ``k``, with a snippet
        marking matched words in ``**bold**``."""
        ...

    # -- links ------------------------------------------------------------------------------

    def page_backlinks(self, slug: str, limit: int | None = None, category: str | None = None
                       ) -> list[Backlink]:
        """Links to ``slug`` from other pages (of ``category``), oldest first; self-links left out."""
        ...

    def backlink_sources(self, slug: str, limit: int, category: str | None = None) -> list[str]:
        """Slugs of the other pages (of ``category``) that link to ``slug``, each once, in slug
        order, at most ``limit`` (an order that does not depend on when each page was saved)."""
        ...

    def page_links_of(self, slug: str) -> list[PageLink]:
        """The links a page makes, by line."""
        ...

    def pages_linking_to(self, targets: Iterable[str], limit: int = 100) -> list[str]:
        """Slugs of pages linking to any of ``targets``, each once, at most ``limit``."""
        ...

    # -- index.md ---------------------------------------------------------------------------

    def wiki_index_counts(self) -> list[IndexCount]:
        """Pages per ``(category, shard)``, non-empty shards only, sorted."""
        ...

    def wiki_index_rows(self, category: str, shard: str | None = None, limit: int | None = None) -> list[IndexRow]:
        """``(slug, title, summary)`` of a category (or one shard of it), by normalised title then slug."""
        ...

    def wiki_index_prev(self, category: str, shard: str, title_norm: str, slug: str) -> str | None:
        """The slug just before ``(title_norm, slug)`` in the shard's order; None when it is first."""
        ...

    # -- regeneration marks -----------------------------------------------------------------

    def mark_wiki_dirty(self, keys: Iterable[str]) -> None:
        """Mark generated pages (by subject key) for regeneration; marking twice keeps one mark."""
        ...

    def wiki_dirty(self, limit: int | None = None) -> list[str]:
        """Keys waiting for regeneration, sorted."""
        ...

    def clear_wiki_dirty(self, keys: Iterable[str]) -> None:
        """Unmark keys (unmarked keys are ignored)."""
        ...

    # -- lint -------------------------------------------------------------------------------

    def wiki_broken_links(self) -> list[BrokenLink]:
        """Links to pages that do not exist, by source and line."""
        ...

    def wiki_isolated_pages(self) -> list[str]:
        """Pages making no link, sorted."""
        ...

    def wiki_unlinked_pages(self) -> list[str]:
        """Pages no other page links to, sorted."""
        ...

    def wiki_stale_sources(self) -> list[StaleSource]:
        """Citations of a superseded document version or of a deleted document (latest None)."""
        ...

    def wiki_flagged_pages(self) -> list[FlaggedPage]:
        """Pages with flagged contradictions and their count, sorted."""
        ...

    def wiki_stated_types(self) -> list[StatedType]:
        """Pages stating an entity type, sorted."""
        ...

    def wiki_uncited_claims(self) -> list[UncitedClaim]:
        """Claims whose relation is gone or (not manual) has no evidence, by page and line."""
        ...

    def wiki_one_way_links(self, from_category: str, to_category: str) -> list[OneWayLink]:
        """Links from a page of one category to a page of the other that does not link back."""
        ...

    def wiki_stubs(self) -> list[str]:
        """Pages marked as stubs, sorted."""
        ...
