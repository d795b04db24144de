"""The wiki's bookkeeping: apply page changes (files + store + index + log) atomically, and
re-index files that changed on disk (sync).

Atomicity of one operation (a page write, a delete, a sync, a batch of generated pages):

1. every new file is written to a temp file next to its target (nothing visible yet);
2. in ONE store transaction: page rows, links, claims, cited documents, graph node and events
   are written; index.md and the touched index shards are rendered from that state and staged;
   then, as the last step before commit, the temp files are renamed into place;
3. log.md gets one line per operation after the transaction.

Inside a caller's transaction (an ingest regenerating its pages) step 2's renames and step 3
wait for the OUTERMOST commit (``store.on_commit``): renamed as its last step before COMMIT,
logged after it, and put back (with the write lock still held) when it fails.

A failure before the renames leaves the old files and rolls the store back; a failing rename
puts the already-renamed files back from their previous bytes and rolls back; a failing
commit is undone the same way. Only a process killed between the renames and the commit can
leave files newer than the store, and the next sync re-indexes them (their size/mtime no
longer match the store's), so the two agree again.

Sync is stat-based: a file whose size and mtime_ns match its row is not read; one that
differs is hashed and re-indexed only if its content changed. The scan only nominates
candidates; each is decided again inside the transaction from its file and row as they are
then, so a page is removed only when its file is absent with the write lock held (a page
another process committed during the scan is never taken for a deleted one).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BackendError
from ..models import ENTITY, Page, PageLink
from ..store.rows import PageClaim, PageSource
from ..text import content_hash, normalize_name, short_id
from .files import FileTxn, UnsafePath, append_line, checked, exists, lstat, read_file, remove_stale_temps
from .hosts import WikiMirror
from .indexfiles import stage_index
from .markdown import ParsedPage, html_safe, index_text, parse_page
from .scan import dir_state, index_temp_files, page_entries, scan
from .slugs import shard_of

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["PageWrite", "Plan", "WikiCore", "log_time", "page_summary"]

_LINK_REASON = "a symbolic link; graphmem does not follow links inside wiki/ (put the file itself there)"


@dataclass
class PageWrite:
    """One page to write: its full file text, where it goes, and what it replaces."""

    category: str
    slug: str
    path: str  # relative to wiki/, posix
    text: str
    subject: str | None = None
    old: bytes | None = None  # the file's current bytes (None: new file)
    existing: Page | None = None  # its current row
    op: str = "write"  # write | update | ingest | sync | fix
    summary: str = ""
    from_disk: bool = False  # the text is already the file's (sync): index, do not write
    stat: tuple[int, int] | None = None  # (size, mtime_ns) of the file on disk, with from_disk
    front_matter: dict[str, Any] | None = None  # what ``text`` was rendered with (skips re-parsing)
    parsed: ParsedPage | None = None  # ``parse_page`` of ``text``, when the planner needed it already
    extra: dict[str, Any] = field(default_factory=dict)
    drop_subject: bool = False  # the page stops being a generated page (its subject is gone)


@dataclass
class Plan:
    """What one operation changes; built inside its transaction by a ``make_plan`` callable."""

    writes: list[PageWrite] = field(default_factory=list)
    deletes: list[Page] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    events: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    clear_dirty: list[str] = field(default_factory=list)
    stat_only: list[tuple[str, int, int]] = field(default_factory=list)
    saved: list[Page] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def log_time(iso: str) -> str:
    """``2026-11-30T10:00:00.123Z`` -> ``2026-11-30T10:00:00Z`` (the log's form)."""
    return iso[:19] + "Z" if len(iso) >= 19 else iso


def page_summary(front_matter: dict[str, Any], body: str) -> str:
    """The one-line summary for the index: front matter ``summary``, else the first line of
    prose in the body (headings, markers and list bullets skipped)."""
    s = front_matter.get("summary")
    if isinstance(s, str) and s.strip():
        return " ".join(s.split())[:200]
    for line in body.split("\n"):
        t = line.strip()
        if not t or t.startswith(("#", "<!--", "---", "|", "```")):
            continue
        t = t.lstrip("-*+> ").replace("**", "").replace("`", "").strip()
        if t:
            return " ".join(t.split())[:200]
    return ""


class WikiCore:
    """Applies page changes and syncs files for one knowledge base."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.dir = ctx.home / "wiki"
        self._dirs_seen: dict[str, int] | None = None
        self._last_full = -1e18
        self._links_warned: set[str] = set()  # symbolic links autosync has warned about
        self._swept = False  # temp files of dead processes removed in this session
        self._pending: list[FileTxn] = []  # staged by applies whose outer transaction is still open
        # slug -> entity id known to the operation being applied (filled by generated-page
        # plans, which know them), so that claims resolve without a query per page.
        self.slug_hint: dict[str, str] = {}
        # A store outside this folder is shared with other folders: wiki/ is then a copy of it (hosts.py).
        self.mirror = WikiMirror(ctx, self.dir) if ctx.config.store.url else None

    # -- paths ------------------------------------------------------------------------------

    def abspath(self, rel: str) -> Path:
        """Absolute path of a page path relative to wiki/."""
        return self.dir / rel

    # -- indexing one page --------------------------------------------------------------------

    def _resolve_entities(self, slugs: Iterable[str]) -> dict[str, str]:
        """Entity ids that link targets stand for: the subject of the target's generated
        page, else the entity whose name or alias is the slug with ``-`` read as spaces."""
        store = self.ctx.store
        out = {s: self.slug_hint[s] for s in slugs if s in self.slug_hint}
        keys = [s for s in dict.fromkeys(slugs) if s not in out]
        if not keys:
            return out
        subjects = store.slug_subjects(keys)
        rest: dict[str, str] = {}
        for s in keys:
            subject = subjects.get(s)
            if subject and subject.startswith("entity:"):
                out[s] = subject[len("entity:"):]
            else:
                rest[normalize_name(s.replace("-", " "))] = s
        if rest:
            found = store.find_nodes(ENTITY, list(rest))
            for norm, nid in found.items():
                out[rest[norm]] = nid
        return out

    def build_row(self, w: PageWrite, size: int, mtime_ns: int, now: str
                  ) -> tuple[Page, list[PageLink], list[tuple[str, int, str]], list[tuple[str, int | None]]]:
        """The index row of a page from its file text."""
        parsed = w.parsed or parse_page(w.text, w.category, w.front_matter)
        fm = parsed.front_matter
        raw_title = fm.get("title")
        title = raw_title if isinstance(raw_title, str) and raw_title.strip() else None
        if title is None:
            title = next((ln.lstrip("#").strip() for ln in parsed.body.split("\n") if ln.startswith("# ")), None)
        title = (title or (w.existing.title if w.existing else w.slug)).strip()
        raw_tags = fm.get("tags")
        tags: list[Any] = raw_tags if isinstance(raw_tags, list) else []
        claims: list[tuple[str, int, str]] = []
        if parsed.claims:
            ends = {c.source for c in parsed.claims} | {c.target for c in parsed.claims}
            ents = self._resolve_entities(ends)
            onto = self.ctx.config.ontology
            for c in parsed.claims:
                a, b = ents.get(c.source), ents.get(c.target)
                norm = onto.normalize_relation(c.relation)
                if norm.swapped:
                    a, b = b, a
                src = a or f"?{c.source}"
                dst = b or f"?{c.target}"
                claims.append((short_id("r_", src, norm.type, dst), c.line, c.text))
        sources: list[tuple[str, int | None]] = []
        raw_sources = fm.get("source_documents")
        if isinstance(raw_sources, list):
            for item in raw_sources:
                if isinstance(item, str) and item.strip():
                    doc, _, ver = item.strip().rpartition("@v")
                    if doc and ver.isdigit():
                        sources.append((doc, int(ver)))
                    else:
                        sources.append((item.strip(), None))
        existing = w.existing
        page = Page(
            slug=w.slug, category=w.category, title=title, path=w.path,
            summary=w.summary or page_summary(fm, parsed.body), tags=[str(t) for t in tags], front_matter=fm,
            content=index_text(parsed.body), content_hash=content_hash(w.text), size=size, mtime_ns=mtime_ns,
            node_id=existing.node_id if existing and existing.node_id else short_id("p_", w.slug),
            subject=None if w.drop_subject else w.subject if w.subject is not None else (
                existing.subject if existing else None),
            entity_type=parsed.stated_type, contradictions=parsed.contradictions, stub=parsed.stub,
            created_at=existing.created_at if existing else now, updated_at=now, shard=shard_of(w.slug),
            text=w.text,
        )
        return page, parsed.links, claims, list(dict(sources).items())

    # -- applying changes ------------------------------------------------------------------------

    def apply(self, make_plan: Callable[[], Plan]) -> Plan:
        """Run one operation: ``make_plan()`` is called inside the store transaction (so what
        it reads is what gets written), then its pages are written, deleted, indexed and logged
        as described in the module docstring. Returns the plan, with ``saved`` filled in."""
        ctx, store = self.ctx, self.ctx.store
        if not self._swept:
            self.sweep_temp_files()
        pending = list(self._pending)
        ftx = FileTxn(self.dir, lambda path: any(f.touches(path) for f in pending))
        try:
            # The savepoint undoes a failed operation alone inside a caller's transaction (an
            # ingest regenerating its pages), so that a caller can go on after it. The renames
            # and the log line wait for the OUTERMOST commit (an ingest's): its failure undoes
            # them too, with the write lock still held.
            with store.transaction(), store.savepoint():
                plan = make_plan()
                if plan.log:  # refused before anything is written, not after the commit
                    checked(self.dir, self.dir / "log.md")
                now = ctx.now()
                shards: dict[tuple[str, str], dict[str, Page | None]] = {}
                # Rows are saved together (one statement per table), but always before a row is
                # deleted: the store then sees the same order as page by page.
                saves: list[tuple[Page, list[PageLink], list[PageClaim], list[PageSource]]] = []

                def save_now() -> None:
                    if saves:
                        store.save_pages(saves)
                        saves.clear()

                # Deletes first: a page written here may take over a deleted one's subject.
                for p in plan.deletes:
                    ftx.delete(self.abspath(p.path), keep_edits=True)
                    store.delete_page_row(p.slug)
                    shards.setdefault((p.category, p.shard), {})[p.slug] = None
                    store.append_event("wiki.delete", p.slug, now, {"category": p.category, "path": p.path,
                                                                    "title": p.title})
                for w in plan.writes:
                    path = self.abspath(w.path)
                    if w.from_disk:
                        assert w.stat is not None
                        size, mtime = w.stat
                    else:
                        st = (ftx.write(path, w.text.encode("utf-8"), old=w.old, keep_edits=True)
                              or lstat(self.dir, path))
                        if st is None:
                            raise BackendError(f"{path} vanished while it was being written; retry")
                        size, mtime = st.st_size, st.st_mtime_ns
                    page, links, claims, sources = self.build_row(w, size, mtime, now)
                    old_row = w.existing
                    if old_row is not None and old_row.path != page.path:
                        ftx.delete(self.abspath(old_row.path), keep_edits=True)
                    if old_row is not None and old_row.slug != page.slug:  # renamed: the old row goes first
                        save_now()
                        store.delete_page_row(old_row.slug)  # (it holds the page node that save_pages re-adds)
                        shards.setdefault((old_row.category, old_row.shard), {})[old_row.slug] = None
                        shards.setdefault((page.category, page.shard), {})[page.slug] = page
                    saves.append((page, links, claims, sources))
                    # The index lists slug, title and summary: rewrite it only when one changed.
                    if old_row is None or (old_row.category, old_row.shard, old_row.title, old_row.summary) != (
                            page.category, page.shard, page.title, page.summary):
                        if old_row is not None:
                            shards.setdefault((old_row.category, old_row.shard), {})[page.slug] = None
                        shards.setdefault((page.category, page.shard), {})[page.slug] = page
                    payload = {"category": page.category, "path": page.path, "title": page.title,
                               "content_hash": page.content_hash, **w.extra}
                    store.append_event(f"wiki.{w.op}", page.slug, now, payload)
                    plan.saved.append(page)
                save_now()
                for slug, size, mtime in plan.stat_only:
                    store.set_page_stat(slug, size, mtime)
                for etype, target, payload in plan.events:
                    store.append_event(etype, target, now, payload)
                if plan.clear_dirty:
                    store.clear_wiki_dirty(plan.clear_dirty)
                if shards:
                    stage_index(ftx, store, self.dir, shards, ctx.config.wiki.index_inline_max)
                self._pending.append(ftx)
                store.on_commit(before=ftx.commit, undo=lambda: self._drop(ftx, undo=True),
                                after=lambda: self._committed(ftx, plan.log, now, plan))
        except BaseException:
            self._drop(ftx, undo=True)
            raise
        finally:
            self.slug_hint = {}
        return plan

    def _drop(self, ftx: FileTxn, undo: bool) -> None:
        if ftx in self._pending:
            self._pending.remove(ftx)
        if undo:
            ftx.undo()

    def _committed(self, ftx: FileTxn, log: Sequence[str], now: str, plan: Plan | None = None) -> None:
        self._drop(ftx, undo=False)
        for path in ftx.kept:
            rel = path.relative_to(self.dir).as_posix()
            self.ctx.warn(f"wiki page {rel} changed on disk while graphmem was rewriting it: the version saved "
                          "there is kept (graphmem's change to it is not applied); the next sync indexes it and "
                          "the next change to its subject regenerates its generated block around it")
        if self.mirror is not None and plan is not None:
            self.mirror.note(plan.saved, plan.deletes)
        if log:
            try:
                self.append_log(log, now)
            except BackendError as exc:  # committed already: raising would claim it failed
                self.ctx.warn(f"the change is saved, but its log.md line is not: {exc}")
        self.note_own_writes()

    # -- log.md ------------------------------------------------------------------------------------

    def append_log(self, entries: Sequence[str], now: str) -> None:
        """Append ``## [time] entry`` lines to log.md (created with a title when absent)."""
        path = self.dir / "log.md"
        head = "" if exists(self.dir, path) else (
            "# Log\n\nOne line per wiki operation, newest last (grep '^## \\[').\n\n")
        stamp = log_time(now)
        lines = "".join(f"## [{stamp}] {html_safe(' '.join(e.split()))}\n" for e in entries)
        append_line(self.dir, path, head + lines)

    # -- sync ----------------------------------------------------------------------------------------

    def sweep_temp_files(self, seen: list[Path] | None = None) -> list[Path]:
        """Remove temp files that killed processes left in wiki/, its category folders and the
        index shard folders (see :func:`remove_stale_temps`); ``seen``: those a scan of the
        category folders just found (else they are listed here). Runs once per session, at the
        first full sync or the first write."""
        self._swept = True
        if seen is None:
            seen = []
            for _ in page_entries(self.dir, None, seen):
                pass
        candidates = seen + index_temp_files(self.dir)
        return remove_stale_temps(self.dir, candidates) if candidates else []

    def list_files(self) -> set[str]:
        """Relative paths of the page files on disk (names only: no stat, for lint)."""
        return {f"{cat}/{e.name}" for cat, e in page_entries(self.dir)}

    def note_own_writes(self) -> None:
        """Remember the folders' mtimes after our own change, so that it does not look like
        someone else's."""
        if self._dirs_seen is not None:
            self._dirs_seen = dir_state(self.dir)

    def sync(self, paths: Sequence[str] | None = None, sweep: bool = False) -> dict[str, Any]:
        """Re-index page files that changed on disk, index new ones, drop deleted ones.

        ``paths`` (relative to wiki/) limits the check to those files; None checks all (and
        removes temp files of dead processes: at the session's first full sync, or with ``sweep``).
        Returns ``{"indexed": [...], "removed": [...], "unchanged": n, "skipped": [...], "restored": [...],
        "conflicts": [...]}`` (the last two on a shared store only: see hosts.py).
        """
        store = self.ctx.store
        full = paths is None
        links: list[str] = []
        if full:
            temps: list[Path] | None = [] if sweep or not self._swept else None
            on_disk = scan(self.dir, links, temps)
            if temps is not None:
                self.sweep_temp_files(temps)
            rows = store.page_files()
            self._last_full = time.monotonic()
            self._dirs_seen = dir_state(self.dir)
        else:
            on_disk = self._stat_paths(paths or (), links)
            rows = store.page_stats(paths or ())
        # Files that agree with a shared store, or that it could not give back, are left alone.
        leave: set[str] = set()
        restored: list[str] = []
        conflicts: list[dict[str, str]] = []
        if self.mirror is not None:
            done = self.mirror.reconcile(on_disk, rows)
            leave, restored, conflicts = done.leave, done.restored, done.conflicts
            self.note_own_writes()  # the files it wrote are not someone's edits
        changed = [rel for rel, st in on_disk.items() if rel not in leave and (
                   rel not in rows or (rows[rel][1], rows[rel][2]) != (st.st_size, st.st_mtime_ns))]
        # A page whose file (or folder) is now a link is neither re-read nor removed.
        linked = set(links)
        gone = [rel for rel in rows if rel not in on_disk and rel not in linked and rel not in leave
                and rel.split("/", 1)[0] + "/" not in linked]
        result: dict[str, Any] = {"indexed": [], "removed": [], "unchanged": len(on_disk) - len(changed),
                                  "skipped": [{"path": rel, "reason": _LINK_REASON} for rel in sorted(linked)],
                                  "restored": restored, "conflicts": conflicts}
        if not changed and not gone:
            return result

        def make_plan() -> Plan:
            # Decide again inside the transaction, from each file and row as they are now. The
            # scan and the row read above are not one view: a page another process committed
            # between them looks deleted (its row without its file), and a directory listing
            # may miss a file renamed into place meanwhile. No graphmem process renames or
            # deletes a page file without holding this transaction's lock, so what is seen
            # here stays true until commit.
            candidates = sorted(set(changed) | set(gone))
            now_rows = store.page_stats(candidates)
            plan = Plan()
            existing = store.pages_by_slug(row[0] for row in now_rows.values())
            claimed: set[str] = set()
            vanished: list[str] = []
            for rel in candidates:
                row = now_rows.get(rel)
                try:
                    current = read_file(self.dir, self.abspath(rel))
                except UnsafePath:
                    result["skipped"].append({"path": rel, "reason": _LINK_REASON})
                    continue
                if current is None:
                    if row is not None:
                        vanished.append(rel)  # verifiably absent, with the lock held
                    continue
                raw, st = current
                if row is not None and (row[1], row[2]) == (st.st_size, st.st_mtime_ns):
                    continue  # indexed as it is (by another process meanwhile)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    result["skipped"].append({"path": rel, "reason": "not UTF-8 text; convert it to index it"})
                    continue
                if row is not None and row[3] == content_hash(text):
                    plan.stat_only.append((row[0], st.st_size, st.st_mtime_ns))
                    continue
                category, name = rel.split("/", 1)
                slug = row[0] if row else name[:-3].lower()
                if row is None:
                    other = store.get_page(slug)
                    if other is not None or slug in claimed:
                        where = other.path if other else "another new file"
                        result["skipped"].append({"path": rel, "reason": f"page name '{slug}' is already used by "
                                                                          f"{where}; rename the file"})
                        continue
                claimed.add(slug)
                plan.writes.append(PageWrite(category, slug, rel, text, old=raw, existing=existing.get(slug),
                                             op="sync", from_disk=True, stat=(st.st_size, st.st_mtime_ns),
                                             extra={"change": "edited" if row else "added"}))
            plan.deletes = [existing[now_rows[rel][0]] for rel in vanished if now_rows[rel][0] in existing]
            if plan.writes or plan.deletes:
                names = [f"{w.category}/{w.slug}" for w in plan.writes] + [f"-{p.category}/{p.slug}"
                                                                          for p in plan.deletes]
                plan.log.append(f"sync | wiki — {len(plan.writes)} indexed, {len(plan.deletes)} removed: "
                                + ", ".join(names[:8]) + (" …" if len(names) > 8 else ""))
            return plan

        plan = self.apply(make_plan)
        result["indexed"] = [f"{w.category}/{w.slug}" for w in plan.writes]
        result["removed"] = [f"{p.category}/{p.slug}" for p in plan.deletes]
        return result

    def _stat_paths(self, paths: Sequence[str], links: list[str]) -> dict[str, os.stat_result]:
        checked(self.dir, self.dir)
        out: dict[str, os.stat_result] = {}
        for rel in paths:
            try:
                st = lstat(self.dir, self.abspath(rel))
            except UnsafePath:
                links.append(rel)
                continue
            if st is not None and stat.S_ISREG(st.st_mode):
                out[rel] = st
        return out

    def autosync(self, paths: Sequence[str] = (), periodic: bool = True) -> None:
        """The cheap sync that runs before search, read and write: the given page files are
        always checked; the whole folder is re-scanned when a folder's mtime changed (a file
        was added, removed or renamed) or, with ``periodic`` (search, list), when
        ``wiki.autosync_interval`` seconds have passed since the last full scan (an in-place
        edit of a page nobody asked for is found then, or by ``wiki sync``)."""
        interval = float(self.ctx.config.wiki.autosync_interval)
        if (self._dirs_seen is None or (periodic and time.monotonic() - self._last_full >= interval)
                or dir_state(self.dir) != self._dirs_seen):
            res = self.sync()
        elif paths:
            res = self.sync(list(paths))
        else:
            return
        for s in res["skipped"]:
            if s["reason"] == _LINK_REASON and s["path"] not in self._links_warned:
                self._links_warned.add(s["path"])
                self.ctx.warn(f"wiki/{s['path']} skipped: {_LINK_REASON}")
