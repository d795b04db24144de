"""``kb.wiki``: markdown pages the agent writes and graphmem keeps in order (index.md,
log.md, links, search, lint), plus the pages made from every ingest.

Pages are files under ``<home>/wiki/<category>/<slug>.md`` (Obsidian-compatible); the store
indexes them. See :mod:`graphmem.wiki.core` for how a write stays atomic and
:mod:`graphmem.wiki.generate` for the generated pages.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import GraphmemError, InvalidInput, NotFound, StoreBusy
from ..models import Page
from ..text import normalize_name
from ..validate import check_query, checked_inputs
from ..wiki.backlinks import LinkForms, links_to, pages_about_slugs, resolve_link_targets
from ..wiki.core import PageWrite, Plan, WikiCore
from ..wiki.files import exists, log_entries, read_bytes
from ..wiki.generate import DOC, ENT, legacy_slug_marks
from ..wiki.lint import fix as lint_fix
from ..wiki.lint import lint as lint_report
from ..wiki.lint import rewrite_index
from ..wiki.markdown import dump_front_matter, split_front_matter
from ..wiki.orphans import retire_pages
from ..wiki.pagewrite import (
    check_page_args,
    given_front_matter,
    keep_generated,
    merge_front_matter,
    pin_sources,
    summaries_beside_generated,
    summary_to_replace,
)
from ..wiki.regen import regenerate
from ..wiki.slugs import category_slug, check_text, page_path, slugify, unique_slug
from .results import (
    Backlink,
    LinkFrom,
    LintReport,
    LogEntry,
    PageDeleted,
    PageHit,
    PageInfo,
    PageRead,
    PageWritten,
    SyncReport,
)
from .wiki_checks import check_count, stat_key

if TYPE_CHECKING:
    from .host import FaceHost

__all__ = ["Wiki"]



@checked_inputs("wiki")
class Wiki:
    """The wiki face of a knowledge base."""

    def __init__(self, kb: FaceHost) -> None:
        self._kb = kb
        self._core = WikiCore(kb.ctx)
        self._read_sync_warned: set[str] = set()
        self._defer = 0
        self._since_flush = 0  # documents ingested under deferred() since the last flush
        self._failed: set[str] = set()  # marks whose pages failed: automatic flushes skip them
        self._link_forms = LinkForms()  # every page's link forms, for reading pages' links (kept while unchanged)

    @property
    def dir(self) -> Path:
        """The wiki folder (``<home>/wiki``)."""
        return self._core.dir

    # -- writing ------------------------------------------------------------------------------

    def write_page(
        self,
        category: str,
        title: str,
        content: str,
        summary: str | None = None,
        tags: Sequence[str] | None = None,
        source_documents: Sequence[str] | None = None,
        allow_empty: bool = False,
    ) -> PageWritten:
        """Create or replace the page ``title`` of ``category``; returns ``{slug, category,
        path, title, summary, created, ...}``.

        ``content`` is the markdown body; a front matter block at its top is merged into the
        page's (see :mod:`graphmem.wiki.pagewrite`: the other arguments win, then the content's
        keys, then the page's current ones). An empty body is refused unless ``allow_empty``
        (an empty stdin must not blank a page). ``source_documents`` are document ids, pinned
        to their latest version (``doc_1@v2``) so that lint can tell when the page goes stale;
        a ``summary`` page citing a document replaces that document's generated summary page.
        The slug is the title's (``memory-leak``), made unique in the wiki.
        """
        cat, title_s, body, summary_s, tag_list = check_page_args(category, title, content, summary, tags)
        given, body = given_front_matter(body)
        if not body.strip() and not allow_empty:
            raise InvalidInput(f"content: the body of page '{title_s}' is empty; nothing was written (pass "
                               "allow_empty=True, CLI: --allow-empty, to write an empty page)")
        kb, store = self._kb, self._kb.store
        sources = pin_sources(self._kb.store, source_documents)
        if sources is None and given.get("source_documents"):
            sources = pin_sources(self._kb.store, given.pop("source_documents"))
        self._catch_up()
        found = store.find_page(cat, normalize_name(title_s))
        self._core.autosync([found.path if found else f"{cat}/{slugify(title_s)}.md"], periodic=False)

        absorbed: list[Page] = []

        def make_plan() -> Plan:
            now = kb.now()
            absorbed.clear()
            existing = store.find_page(cat, normalize_name(title_s))
            old: bytes | None = None
            fm: dict[str, Any] = {}
            if existing is not None:
                slug, rel = existing.slug, existing.path
                old = read_bytes(self.dir, self._core.abspath(rel))
                if old is not None:
                    fm_old, _, _, error = split_front_matter(old.decode("utf-8", errors="replace"))
                    fm = dict(fm_old) if error is None else {}
            else:
                base = slugify(title_s)
                taken = store.slugs_taken(base)
                slug = unique_slug(base, taken)
                while exists(self.dir, page_path(self.dir, cat, slug)):  # an unindexed file there: never clobber it
                    taken.add(slug)
                    slug = unique_slug(base, taken)
                rel = f"{cat}/{slug}.md"
            fm = merge_front_matter(fm, given, title_s, cat, tag_list, sources, summary_s, now)
            generated = summary_to_replace(store, cat, slug, existing, fm["source_documents"])
            subject = generated.subject if generated else None
            text_body = keep_generated(self._core, body, generated or (existing if existing and existing.subject
                                                                       else None))
            text = dump_front_matter(fm) + text_body
            op = "update" if existing is not None else "write"
            plan = Plan(writes=[PageWrite(cat, slug, rel, text, old=old, existing=existing, op=op, front_matter=fm,
                                          subject=subject)])
            note = f" (replaces {generated.category}/{generated.slug})" if generated else ""
            plan.log.append(f"{op} | {cat}/{slug} — {summary_s or title_s}{note}")
            if generated is not None:
                plan.deletes.append(generated)
                absorbed.append(generated)
                # The pages that linked the generated summary are re-rendered to link this one.
                linking = store.slug_subjects(src for src, _ in store.page_backlinks(generated.slug, 1000))
                store.mark_wiki_dirty(sorted({s for s in linking.values() if s} | {generated.subject or ""}))
            return plan

        plan = self._core.apply(make_plan)
        page = plan.saved[0]
        out = PageWritten(self._page_out(page), plan.writes[0].op == "write")
        if absorbed:
            self.flush(label=f"{page.category}/{page.slug} replaces {absorbed[0].category}/{absorbed[0].slug}")
        self._refresh_linked(page)
        return out

    def _refresh_linked(self, page: Page) -> None:
        """Generated entity pages that a summary page links get their "See also" updated."""
        if page.category != "summary" or not self._kb.config.wiki.auto_pages or page.subject:
            return
        store = self._kb.store
        targets = {ln.target for ln in store.page_links_of(page.slug)}
        linked = store.pages_by_slug(sorted(targets)[:50])
        keys = sorted(p.subject for p in linked.values() if p.subject and p.subject.startswith(ENT)
                      and page.slug not in {ln.target for ln in store.page_links_of(p.slug)})
        if keys:
            with store.transaction():
                store.mark_wiki_dirty(keys)
            self.flush(label=f"cross reference to {page.category}/{page.slug}")

    def delete_page(self, category: str | None = None, title: str | None = None, *,
                    slug: str | None = None) -> PageDeleted:
        """Delete a page (by category and title, or by slug): its file, index entry and links
        from it. Links to it from other pages become broken links (lint reports them)."""
        page = self._find(category, title, slug)

        def make_plan() -> Plan:
            current = self._kb.store.get_page(page.slug)
            if current is None:
                raise NotFound(f"page '{page.slug}' was deleted meanwhile")
            return Plan(deletes=[current], log=[f"delete | {current.category}/{current.slug} — {current.title}"])

        self._core.apply(make_plan)
        return PageDeleted(page.slug, page.category, str(self._core.abspath(page.path)))

    # -- reading ------------------------------------------------------------------------------

    def read_page(self, category: str, title: str) -> PageRead:
        """A page by category and title: front matter, body (as in the file), links, backlinks."""
        return self._read(self._find(category, title, None))

    def read_page_by_slug(self, slug: str) -> PageRead:
        """A page by slug (``memory-leak``)."""
        return self._read(self._find(None, None, slug))

    def _catch_up(self) -> None:
        """Regenerate pages an earlier process left marked (it stopped before its flush), so
        that what is read is current; a failure here is a warning, not a failed read."""
        if self._defer or all(k in self._failed for k in self._kb.store.wiki_dirty(len(self._failed) + 1)):
            return
        warnings: list[str] = []
        self.flush(warnings)
        for w in warnings:
            self._kb.warn(w)

    def _sync_for_read(self, paths: Sequence[str] = (), periodic: bool = True) -> None:
        """Catch up and autosync before a read, without ever failing or slowing the read for
        it: a read-only knowledge base serves its index as it is, and while another process
        holds the write lock the sync is skipped (StoreBusy at once, not after busy_timeout)
        and the current index is served; the next read or write catches up."""
        store = self._kb.store
        if store.read_only:
            return
        try:
            with store.no_wait():
                self._catch_up()
                self._core.autosync(paths, periodic)
        except StoreBusy:
            self._core._dirs_seen = None  # the scan was not applied: the next read scans again
        except GraphmemError as exc:
            # A sync that cannot be applied (a symbolic link planted in wiki/, a full disk) must
            # not fail the read: serve the current index and say why, once per cause. A wiki/
            # that is itself a link is refused outright (every read would go through it).
            if self.dir.is_symlink():
                raise
            self._core._dirs_seen = None
            reason = str(exc)
            if reason not in self._read_sync_warned:
                self._read_sync_warned.add(reason)
                self._kb.warn(f"wiki index not refreshed before this read: {reason}")

    def _find(self, category: str | None, title: str | None, slug: str | None) -> Page:
        store = self._kb.store
        if slug is not None:
            # ``entity/dispatch-api`` (what list, search and read display) or ``dispatch-api``.
            folder, _, s = check_text("slug", slug, 200).lower().rpartition("/")
            page = store.get_page(s)
            self._sync_for_read([page.path] if page else [], periodic=False)
            page = store.get_page(s)
            if page is None:
                raise NotFound(f"no wiki page with slug '{s}'; list pages with `graphmem wiki list`")
            if folder and folder != page.category:
                raise NotFound(f"no wiki page '{folder}/{s}': '{s}' is {page.category}/{s}")
            return page
        if category is None or title is None:
            raise InvalidInput("give a category and a title, or a slug")
        cat = category_slug(category)
        title_s = check_text("title", title, 300)
        page = store.find_page(cat, normalize_name(title_s))
        guess = page.path if page else f"{cat}/{slugify(title_s)}.md"
        self._sync_for_read([guess], periodic=False)
        page = store.find_page(cat, normalize_name(title_s))
        if page is None:
            raise NotFound(f"no page titled '{title_s}' in category '{cat}'; list them with "
                           f"`graphmem wiki list --category {cat}`")
        return page

    def _page_out(self, page: Page) -> PageInfo:
        return PageInfo(page.slug, page.category, page.title, str(self._core.abspath(page.path)), page.summary,
                        page.tags, page.updated_at, page.created_at)

    def _read(self, page: Page) -> PageRead:
        raw = read_bytes(self.dir, self._core.abspath(page.path))
        if raw is None:
            raise NotFound(f"page '{page.slug}': its file {page.path} is gone; run `graphmem wiki sync`")
        fm, body, _, _ = split_front_matter(raw.decode("utf-8", errors="replace"))
        links = list(self._kb.store.page_links_of(page.slug))
        return PageRead(self._page_out(page), fm, body, links,
                        [LinkFrom(s, n) for s, n in links_to(self._kb.store, page.slug)[:200]],
                        resolve_link_targets(self._kb.store, {ln.target for ln in links}, self._link_forms)
                        if links else {})

    def list_pages(self, category: str | None = None, limit: int | None = None, offset: int = 0
                   ) -> list[PageInfo]:
        """Pages by category and title: ``[{slug, category, title, path, summary, tags, updated}]``."""
        cat = category_slug(category) if category is not None else None
        self._sync_for_read()
        return [self._page_out(p) for p in self._kb.store.list_pages(cat, limit, offset)]

    def search_wiki(self, query: str, k: int = 10, category: str | None = None) -> list[PageHit]:
        """Full-text search (BM25, title weighted) over pages:
        ``[{slug, category, path, title, snippet, score}]``, best first."""
        check_query(query)
        check_count("k", k)
        cat = category_slug(category) if category is not None else None
        store = self._kb.store
        self._sync_for_read()
        hits = store.search_pages(query, k, cat)
        # A hit whose file changed since it was indexed is re-indexed and the search re-run.
        stale = [p.path for p, _, _ in hits if stat_key(self.dir, self._core.abspath(p.path)) != (p.size, p.mtime_ns)]
        if stale and not store.read_only:
            self._sync_for_read(stale, periodic=False)
            hits = store.search_pages(query, k, cat)
        return [PageHit(p.slug, p.category, str(self._core.abspath(p.path)), p.title, snip, score)
                for p, score, snip in hits]

    def backlinks(self, slug: str) -> list[Backlink]:
        """Pages linking to ``slug`` (``dispatch-api`` or ``entity/dispatch-api``; it need not
        exist): ``[{slug, title, category, line}]``."""
        s = check_text("slug", slug, 200).lower().rpartition("/")[2]
        store = self._kb.store
        links = links_to(store, s)  # by slug, title or alias
        pages = store.pages_by_slug(src for src, _ in links)
        return [Backlink(src, line, pages[src].title if src in pages else src,
                         pages[src].category if src in pages else None) for src, line in links]

    def pages_about(self, entity: str, limit: int = 100) -> list[PageInfo]:
        """Pages that discuss an entity: its own page and every page linking to it (by its
        page's slug or the slug of its name or an alias)."""
        node = self._kb.graph.find(entity)
        if node is None:
            raise NotFound(f"no entity named '{entity}'")
        store = self._kb.store
        slugs = pages_about_slugs(store, node, limit)
        pages = store.pages_by_slug(slugs)
        return [self._page_out(pages[s]) for s in slugs if s in pages][:limit]

    def get_log(self, last_n: int = 20) -> list[LogEntry]:
        """The last ``last_n`` log.md entries, oldest first: ``[{timestamp, operation, target,
        summary, line}]`` (read from the end of the file: cost does not grow with the log)."""
        check_count("last_n", last_n)
        return [LogEntry(*entry) for entry in log_entries(self.dir, last_n)]

    # -- bookkeeping ----------------------------------------------------------------------------

    def sync(self) -> SyncReport:
        """Re-index pages edited, added or deleted by hand (by stat, then content hash), and
        regenerate generated pages left pending by an interrupted ingest."""
        res = self._core.sync(sweep=True)
        store = self._kb.store
        if self._kb.config.wiki.auto_pages:
            marks = legacy_slug_marks(store)  # pages an older graphmem named: regenerating moves them
            if marks:
                with store.transaction():
                    store.mark_wiki_dirty(marks)
            for page in summaries_beside_generated(store):  # rewritten, each replaces its generated twin
                raw = read_bytes(self.dir, self._core.abspath(page.path))
                if raw is not None:
                    body = split_front_matter(raw.decode("utf-8", errors="replace"))[1]
                    self.write_page(page.category, page.title, body, allow_empty=True)
        regen = self.flush(retry_failed=True)
        if not exists(self.dir, self.dir / "index.md") and store.wiki_index_counts():
            rewrite_index(self._core)  # deleted by hand: nothing else would write it before the next page change
        return SyncReport(res["indexed"], res["removed"], res["unchanged"], res["skipped"], regen["pages"],
                          regen["failed"], res.get("restored", []), res.get("conflicts", []))

    def lint_wiki(self, fix: bool = False, create_stubs: bool = False) -> LintReport:
        """Lint the wiki (no sync first). ``fix=True`` repairs what is mechanical — index
        orphans, drop missing entries, rewrite index.md, add missing cross references;
        ``create_stubs=True`` also creates stub pages for broken links — and returns the
        report of what is left, with ``fixed`` listing what was done."""
        self._catch_up()  # generated pages still marked are regenerated (that is not a sync)
        report = lint_report(self._core)
        if fix or create_stubs:
            done = lint_fix(self._core, report, create_stubs=create_stubs)
            report = lint_report(self._core)
            report["fixed"] = done
        if not (fix or create_stubs):
            return LintReport.from_report(report)  # a check writes nothing: no log.md line, no event
        counts = {k: (sum(len(v) for v in report[k].values()) if isinstance(report[k], dict) else len(report[k]))
                  for k in report if k not in ("problems", "fixed")}
        self._core.apply(lambda: Plan(log=[f"lint | wiki — {report['problems']} problems"
                                           + (" after fixes" if fix else "")],
                                      events=[("wiki.lint", "wiki", {"problems": report["problems"], **counts,
                                                                     "fix": bool(fix)})]))
        return LintReport.from_report(report)

    def close(self) -> None:
        """Regenerate pages still marked (``wiki.regenerate = "deferred"``); called by
        ``kb.close()``. A failure is a warning: the marks stay for the next session."""
        if self._since_flush:
            self._catch_up()

    @contextmanager
    def deferred(self, flush: bool = True) -> Iterator[None]:
        """Inside, ingests only mark the pages they make stale; leaving the outermost block
        regenerates them all at once (``flush=False``: the caller calls :meth:`flush`).

        Use it around a loop of ``ingest_with_content`` calls: a page touched by many of them
        is then written once instead of once per document.
        """
        self._defer += 1
        try:
            yield
        finally:
            self._defer -= 1
        if flush and not self._defer:
            self.flush()

    def flush_due(self, warnings: list[str] | None = None) -> dict[str, Any]:
        """:meth:`flush` once ``wiki.bulk_flush_docs`` documents have been ingested under
        :meth:`deferred` since the last one (bulk ingest calls this after every batch)."""
        if self._since_flush < int(self._kb.config.wiki.bulk_flush_docs):
            return {"pages": 0, "documents": 0}
        return self.flush(warnings)

    def after_ingest(self, doc_id: str, entity_ids: Sequence[str], warnings: list[str] | None = None) -> None:
        """Called inside an ingest's transaction: mark the document's summary page and its
        entities' pages for regeneration and regenerate them now — unless inside
        :meth:`deferred`, or ``wiki.regenerate = "deferred"`` (then they are regenerated every
        ``wiki.bulk_flush_docs`` documents, before the next wiki read, search, write or lint,
        and when the knowledge base is closed). A page that cannot be written does not fail
        the ingest: it stays marked (the next flush or ``wiki sync`` retries) and a warning
        says so. Its files are renamed into place at the ingest's COMMIT, so a failure there
        (of a rename or of the COMMIT) fails the ingest and leaves no wiki file or log line."""
        cfg = self._kb.config.wiki
        if not cfg.auto_pages:
            return
        store = self._kb.store
        keys = [DOC + doc_id, *(ENT + e for e in entity_ids)]
        store.mark_wiki_dirty(keys)
        self._failed.difference_update(keys)  # a page that failed earlier gets one more try
        if self._defer:
            self._since_flush += 1
            return
        if cfg.regenerate == "deferred":
            self._since_flush += 1
            if self._since_flush < int(cfg.bulk_flush_docs):
                return
        try:
            with store.savepoint():
                errors = list(dict.fromkeys(f["error"] for f in self._flush(None)["failed"]))
        except GraphmemError as exc:
            errors = [str(exc)]
        if errors:
            msg = (f"wiki pages for '{doc_id}' not updated ({'; '.join(errors[:3])}); they are retried by "
                   "`graphmem wiki sync`")
            if warnings is not None:
                warnings.append(msg)
            else:
                self._kb.warn(msg)

    def after_delete(self, doc_id: str, kept: Sequence[str], removed: Sequence[str]) -> None:
        """Called inside a document delete's transaction: the document's summary page and the pages of the
        entities it alone supported are retired (wiki/orphans.py), the pages of the entities it touched
        that remain are made again without it."""
        warnings: list[str] = []
        retire_pages(self._core, doc_id, removed, warnings)
        auto = self._kb.config.wiki.auto_pages
        keys = [ENT + e for e in kept]
        if not auto:  # pages off: only the pages made earlier (they still cite it) are marked, none is made
            keys = sorted(self._kb.store.pages_by_subject(keys))
        if keys:
            self._kb.store.mark_wiki_dirty(keys)
            if auto and not self._defer:
                self.flush(warnings, label=f"document {doc_id} deleted")
        for w in warnings:
            self._kb.warn(w)

    def flush(self, warnings: list[str] | None = None, label: str | None = None, retry_failed: bool = False
              ) -> dict[str, Any]:
        """Regenerate every generated page marked stale; ``{"pages": n, "documents": m,
        "failed": [{"key", "error"}]}``.

        A page that cannot be regenerated never stops the others: it stays marked, is reported
        (in ``failed`` and as a warning, or in ``warnings`` when given — bulk ingest) and is
        not tried again by this session's automatic flushes unless ``retry_failed`` (``wiki
        sync``). With ``warnings``, a failure of the whole flush (a busy store) is reported
        there instead of raised.
        """
        try:
            res = self._flush(label, retry_failed)
        except GraphmemError as exc:  # nothing regenerated (the store was busy)
            if warnings is None:
                raise
            warnings.append(f"wiki pages not updated ({exc}); they are retried by `graphmem wiki sync`")
            return {"pages": 0, "documents": 0, "failed": []}
        for f in res["failed"]:
            msg = (f"wiki page for {f['key']} not updated ({f['error']}); it stays marked and is retried by "
                   "`graphmem wiki sync`")
            if warnings is not None:
                warnings.append(msg)
            else:
                self._kb.warn(msg)
        return res

    def _flush(self, label: str | None, retry_failed: bool = False) -> dict[str, Any]:
        self._since_flush = 0
        res = regenerate(self._core, label, skip=frozenset() if retry_failed else frozenset(self._failed))
        failed = {f["key"] for f in res["failed"]}
        self._failed = failed if retry_failed else self._failed | failed
        return res
