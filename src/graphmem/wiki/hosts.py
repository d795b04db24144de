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
present                    missing (deleted by hand, an   written back from the store (reported as
                           emptied or unmounted wiki/,    ``restored``): a file missing here never
                           a fresh folder)                deletes a shared page; ``graphmem wiki
                                                          delete`` / ``kb.wiki.delete_page`` does
present, hash differs      as agreed (stat unchanged)     rewritten from the store (edited elsewhere)
present, hash differs      changed since agreed, row as   edited here: sync indexes the file
                           agreed
present, hash differs      changed since agreed AND the   conflict: the store wins in the folder; the
                           row changed since agreed       text here is saved in
                                                          ``<home>/.wiki-conflicts/`` and reported
present, hash differs      no ledger entry (ledger lost,  the same conflict (nothing says which text
                           a copied folder)               is newer, so the store's is kept)
present, same hash         any stat                       agreed: nothing to re-index
missing                    as agreed                      deleted elsewhere: the file is removed
missing                    new or changed here            added here: sync indexes it
=========================  =============================  ===========================================

Every decision is made from what the files and the store hold, so a folder that was offline for a week
catches up at its next sync. Page files are written and removed through :class:`FileTxn` (temp file +
rename, links never followed; the conflict copies too, under ``<home>/.wiki-conflicts/``), and the index
files of the categories touched are rendered again from the store. ``log.md`` stays this folder's own log;
the shared history is the store's events (which hold no page text: a text replaced in a conflict survives
only in the conflict copy). The ledger's load-merge-save runs under ``flock`` on ``<home>/.wiki-ledger.lock``,
so two processes of one folder keep each other's entries.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..context import Context
from ..errors import BackendError
from ..models import Page
from ..store.rows import PageStat
from ..text import content_hash
from .files import FileTxn, UnsafePath, lstat, read_file
from .indexfiles import stage_index
from .slugs import legacy_shard_of, shard_of

__all__ = ["CONFLICTS_DIR", "LEDGER_LOCK", "LEDGER_NAME", "Reconciled", "WikiMirror"]

LEDGER_NAME = ".wiki-ledger.json"
LEDGER_LOCK = ".wiki-ledger.lock"
CONFLICTS_DIR = ".wiki-conflicts"

# path -> [content hash, size, mtime_ns] of the file when it last agreed with the store
Ledger = dict[str, list[object]]


@dataclass
class Reconciled:
    """What :meth:`WikiMirror.reconcile` did: the paths sync must leave alone, the page files written back
    from the store because they were missing here, and the conflicts (``{"path", "saved_to"}``: the text
    this folder held, kept outside wiki/, the store's text now in the file)."""

    leave: set[str] = field(default_factory=set)
    restored: list[str] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)


class WikiMirror:
    """Keeps one folder's ``wiki/`` in step with a store other folders write too."""

    def __init__(self, ctx: Context, wiki_dir: Path) -> None:
        self.ctx = ctx
        self.dir = wiki_dir
        self.path = ctx.home / LEDGER_NAME
        self.lock_path = ctx.home / LEDGER_LOCK
        self.conflicts_dir = ctx.home / CONFLICTS_DIR

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
        # Re-read before writing, under the folder's ledger lock: another process of this folder may be
        # recording its own writes at the same moment, and a load-merge-save without the lock drops them.
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            self.ctx.warn(f"{self.path} not updated ({exc.strerror}); the wiki folder re-checks at the next sync")
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            ledger = self.load()
            ledger.update(agreed)
            for rel in forgotten:
                ledger.pop(rel, None)
            self._save(ledger)
        finally:
            os.close(fd)  # releases the lock

    def note(self, saved: Iterable[Page], deleted: Iterable[Page]) -> None:
        """Record this folder's own committed page writes and deletes (its files agree with the store)."""
        agreed = {p.path: [p.content_hash, p.size, p.mtime_ns] for p in saved}
        gone = [p.path for p in deleted if p.path not in agreed]
        if agreed or gone:
            self._update(agreed, gone)

    # -- reconciling ------------------------------------------------------------------------------

    def reconcile(self, on_disk: dict[str, os.stat_result], rows: Mapping[str, PageStat]) -> Reconciled:
        """Bring the files of ``on_disk``/``rows`` (relative paths, as sync scanned them) in step with the
        store as the module docstring says; ``on_disk`` is updated for the files written or removed. Returns
        the paths sync must leave alone (they agree with the store, or could not be written from it), the
        files written back because they were missing, and the conflicts saved outside wiki/."""
        ledger = self.load()
        out = Reconciled()
        fetch: list[str] = []
        missing: list[str] = []
        conflicts: list[str] = []
        remove: list[str] = []
        agreed: dict[str, list[object]] = {}
        for rel, row in rows.items():
            st = on_disk.get(rel)
            seen = ledger.get(rel)
            if st is None:
                # Missing here never means "delete the shared page": the share may be unmounted, the folder
                # emptied or copied without its files. A page is deleted with `graphmem wiki delete`.
                fetch.append(rel)
                if seen is not None:
                    missing.append(rel)
                continue
            here = self._hash_here(rel, st, seen, row)
            if here == row.content_hash:
                agreed[rel] = [row.content_hash, st.st_size, st.st_mtime_ns]
                out.leave.add(rel)
            elif here is None:
                continue  # unreadable here (a link, not UTF-8): sync reports it and leaves the row alone
            elif seen is not None and here == seen[0]:
                fetch.append(rel)  # unchanged here, edited elsewhere
            elif seen is not None and seen[0] == row.content_hash:
                continue  # edited here only: sync indexes it
            else:
                # Edited here and elsewhere, or no agreement to tell which text is newer: the store's text
                # wins in the folder, and this folder's text is saved beside it, not lost.
                conflicts.append(rel)
                fetch.append(rel)
        for rel, st in on_disk.items():
            seen = ledger.get(rel)
            if rel not in rows and seen is not None and [seen[1], seen[2]] == [st.st_size, st.st_mtime_ns]:
                remove.append(rel)
        if fetch or remove:
            written, failed, saved = self._apply(fetch, remove, conflicts, rows, on_disk)
            agreed.update(written)
            out.leave |= set(written) | failed
            out.restored = sorted(rel for rel in missing if rel in written)
            out.conflicts = [{"path": rel, "saved_to": str(saved[rel])} for rel in conflicts if rel in saved]
        if remove or any(ledger.get(rel) != v for rel, v in agreed.items()):
            self._update(agreed, remove)
        for rel in out.restored:
            self.ctx.warn(f"wiki/{rel} was missing here and is written back from the shared store; to delete a "
                          "page on a shared store use `graphmem wiki delete` (kb.wiki.delete_page)")
        for c in out.conflicts:
            self.ctx.warn(f"wiki/{c['path']} differs from the shared store's newer or concurrent text: the "
                          f"store's text is in the file, the text this folder held is saved in {c['saved_to']}")
        return out

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

    def _save_conflicts(self, conflicts: list[str]) -> tuple[dict[str, Path], set[str]]:
        """Copy the files of ``conflicts`` to ``<home>/.wiki-conflicts/<category>/<name>.<hash>.md`` (the hash
        of the text: a second conflict never overwrites a first). Returns where each went, and the paths
        that could not be saved (they are then left as they are: never overwritten unsaved)."""
        ftx = FileTxn(self.conflicts_dir)
        saved: dict[str, Path] = {}
        failed: set[str] = set()
        for rel in conflicts:
            try:
                current = read_file(self.dir, self.dir / rel)
                if current is None:
                    continue
                raw = current[0]
                target = self.conflicts_dir / f"{rel[:-3]}.{content_hash(raw.decode('utf-8', 'replace'))[:12]}.md"
                ftx.write(target, raw)
            except (UnsafePath, OSError):
                failed.add(rel)
                continue
            saved[rel] = target
        try:
            ftx.commit()
        except (BackendError, OSError) as exc:
            self.ctx.warn(f"{self.conflicts_dir} could not be written ({exc}); the files in conflict are left as "
                          "they are until it can")
            return {}, set(conflicts)
        return saved, failed

    def _apply(self, fetch: list[str], remove: list[str], conflicts: list[str], rows: Mapping[str, PageStat],
               on_disk: dict[str, os.stat_result]) -> tuple[dict[str, list[object]], set[str], dict[str, Path]]:
        """Save the files of ``conflicts`` outside wiki/, write the pages of ``fetch`` from the store and
        remove the files of ``remove``; render the touched categories' index files again. Returns the ledger
        entries of the written files, the paths that could not be written (no text in the store: a row from
        before the text was kept; a conflict that could not be saved) and where the conflicts were saved."""
        store = self.ctx.store
        saved, unsaved = self._save_conflicts(conflicts) if conflicts else ({}, set())
        pages = {rows[rel].slug: rel for rel in fetch if rel not in unsaved}
        full = {slug: store.get_page(slug, with_content=True) for slug in pages}
        ftx = FileTxn(self.dir)
        written: dict[str, Page] = {}
        failed: set[str] = set(unsaved)
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
        # A row another host moved out of its old shard (written before summary pages were sharded by title)
        # leaves a line there too: render both.
        touched: dict[tuple[str, str], None] = {(p.category, s): None for p in written.values()
                                                 for s in dict.fromkeys((p.shard, legacy_shard_of(p.slug)))}
        for rel in remove:
            category, name = rel.split("/", 1)
            slug = rows.get(rel, PageStat(name[:-3], 0, 0, "")).slug
            for shard in dict.fromkeys((shard_of(slug), legacy_shard_of(slug))):  # the old shard too, as above
                touched[(category, shard)] = None
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
        return entries, failed, saved
