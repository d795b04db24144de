"""A folder's ``wiki/`` as a copy of a store that other folders share (``[store] url``: several homes, on
several hosts, pointing at one PostgreSQL database).

The store is the source of truth: every page row keeps its file's exact text (``Page.text``). Each folder
regenerates its ``wiki/`` from the store, and what a person edits in one folder reaches the others through
the store. To tell "another folder changed this page" from "someone edited or deleted the file here", the
folder keeps a ledger, ``<home>/.wiki-ledger.json``: for every page file, the content hash and the file's
size and mtime when the file and the store last agreed. Before every sync (the autosync before a read or a
write, ``graphmem wiki sync``), :meth:`WikiMirror.reconcile` compares the files, the store's rows and the ledger:

=========================  =============================  ===========================================
store row                  file here                      what happens
=========================  =============================  ===========================================
present                    missing, never agreed (or      written from the store (a new page from
                           the row changed since)         another folder, a fresh folder)
present                    missing, agreed on this hash   deleted here by hand: sync removes the page
present, hash differs      as agreed (stat unchanged)     rewritten from the store (edited elsewhere)
present, hash differs      changed since agreed           edited here: sync indexes the file (the
                                                          edit made here wins; the other is in events)
present, same hash         any stat                       agreed: nothing to re-index
missing                    as agreed                      deleted elsewhere: the file is removed
missing                    new or changed here            added here: sync indexes it
=========================  =============================  ===========================================

Every decision is made from what the files and the store hold, so a folder that was offline for a week
catches up at its next sync. Page files are written and removed through :class:`FileTxn` (temp file +
rename, links never followed), and the index files of the categories touched are rendered again from the
store. ``log.md`` stays this folder's own log; the shared history is the store's events.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..context import Context
from ..models import Page
from ..store.rows import PageStat
from ..text import content_hash
from .files import FileTxn, UnsafePath, lstat, read_file
from .indexfiles import stage_index
from .slugs import shard_of

__all__ = ["LEDGER_NAME", "WikiMirror"]

LEDGER_NAME = ".wiki-ledger.json"

# path -> [content hash, size, mtime_ns] of the file when it last agreed with the store
Ledger = dict[str, list[object]]


class WikiMirror:
    """Keeps one folder's ``wiki/`` in step with a store other folders write too."""

    def __init__(self, ctx: Context, wiki_dir: Path) -> None:
        self.ctx = ctx
        self.dir = wiki_dir
        self.path = ctx.home / LEDGER_NAME

    # -- the ledger -------------------------------------------------------------------------------

    def load(self) -> Ledger:
        """The ledger ({} when absent or unreadable: every file then counts as never agreed)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 3} if isinstance(data, dict) else {}

    def _save(self, ledger: Ledger) -> None:
        tmp = self.path.with_name(f".wiki-ledger.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(ledger, sort_keys=True), encoding="utf-8")
            tmp.replace(self.path)
        except OSError as exc:  # the next sync decides again; say why once
            self.ctx.warn(f"{self.path} not updated ({exc.strerror}); the wiki folder re-checks at the next sync")

    def _update(self, agreed: Mapping[str, list[object]], forgotten: Iterable[str]) -> None:
        # Re-read before writing: another process of this folder may have recorded its own writes meanwhile.
        ledger = self.load()
        ledger.update(agreed)
        for rel in forgotten:
            ledger.pop(rel, None)
        self._save(ledger)

    def note(self, saved: Iterable[Page], deleted: Iterable[Page]) -> None:
        """Record this folder's own committed page writes and deletes (its files agree with the store)."""
        agreed = {p.path: [p.content_hash, p.size, p.mtime_ns] for p in saved}
        gone = [p.path for p in deleted if p.path not in agreed]
        if agreed or gone:
            self._update(agreed, gone)

    # -- reconciling ------------------------------------------------------------------------------

    def reconcile(self, on_disk: dict[str, os.stat_result], rows: Mapping[str, PageStat]) -> set[str]:
        """Bring the files of ``on_disk``/``rows`` (relative paths, as sync scanned them) in step with the
        store as the module docstring says; ``on_disk`` is updated for the files written or removed. Returns
        the paths sync must leave alone (they agree with the store, or could not be written from it)."""
        ledger = self.load()
        leave: set[str] = set()
        fetch: list[str] = []
        remove: list[str] = []
        agreed: dict[str, list[object]] = {}
        for rel, row in rows.items():
            st = on_disk.get(rel)
            seen = ledger.get(rel)
            if st is None:
                if seen is None or seen[0] != row.content_hash:
                    fetch.append(rel)
                continue
            here = self._hash_here(rel, st, seen, row)
            if here == row.content_hash:
                agreed[rel] = [row.content_hash, st.st_size, st.st_mtime_ns]
                leave.add(rel)
            elif seen is not None and here == seen[0]:
                fetch.append(rel)
        for rel, st in on_disk.items():
            seen = ledger.get(rel)
            if rel not in rows and seen is not None and [seen[1], seen[2]] == [st.st_size, st.st_mtime_ns]:
                remove.append(rel)
        if fetch or remove:
            written, failed = self._apply(fetch, remove, rows, on_disk)
            agreed.update(written)
            leave |= set(written) | failed
        if remove or any(ledger.get(rel) != v for rel, v in agreed.items()):
            self._update(agreed, remove)
        return leave

    def _hash_here(self, rel: str, st: os.stat_result, seen: list[object] | None, row: PageStat) -> str | None:
        """The content hash of the file here, read only when neither the ledger nor the row knows it."""
        if seen is not None and [seen[1], seen[2]] == [st.st_size, st.st_mtime_ns]:
            return str(seen[0])
        if (row.size, row.mtime_ns) == (st.st_size, st.st_mtime_ns):
            return row.content_hash  # this folder wrote the row's file last
        try:
            current = read_file(self.dir, self.dir / rel)
        except UnsafePath:
            return None
        if current is None:
            return None
        try:
            return content_hash(current[0].decode("utf-8"))
        except UnicodeDecodeError:
            return None

    def _apply(self, fetch: list[str], remove: list[str], rows: Mapping[str, PageStat],
               on_disk: dict[str, os.stat_result]) -> tuple[dict[str, list[object]], set[str]]:
        """Write the pages of ``fetch`` from the store and remove the files of ``remove``; render the touched
        categories' index files again. Returns the ledger entries of the written files and the paths that
        could not be written (no text in the store: a row from before the text was kept)."""
        store = self.ctx.store
        pages = {rows[rel].slug: rel for rel in fetch}
        full = {slug: store.get_page(slug, with_content=True) for slug in pages}
        ftx = FileTxn(self.dir)
        written: dict[str, Page] = {}
        failed: set[str] = set()
        for slug, rel in pages.items():
            page = full.get(slug)
            if page is None or not page.text or content_hash(page.text) != page.content_hash:
                failed.add(rel)  # nothing exact to write: keep the row (never delete a page for it)
                continue
            try:
                ftx.write(self.dir / rel, page.text.encode("utf-8"))
            except UnsafePath:
                failed.add(rel)
                continue
            written[rel] = page
        for rel in remove:
            try:
                ftx.delete(self.dir / rel)
            except UnsafePath:
                continue
        touched: dict[tuple[str, str], None] = {(p.category, p.shard): None for p in written.values()}
        for rel in remove:
            category, name = rel.split("/", 1)
            touched[(category, shard_of(rows.get(rel, PageStat(name[:-3], 0, 0, "")).slug))] = None
        if touched:
            stage_index(ftx, store, self.dir, touched, self.ctx.config.wiki.index_inline_max)
        ftx.commit()
        entries: dict[str, list[object]] = {}
        for rel, page in written.items():
            st = lstat(self.dir, self.dir / rel)
            if st is not None:
                on_disk[rel] = st
                entries[rel] = [page.content_hash, st.st_size, st.st_mtime_ns]
        for rel in remove:
            on_disk.pop(rel, None)
        return entries, failed
