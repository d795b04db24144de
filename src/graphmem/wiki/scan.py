"""Listing the wiki folder without following links: page files, folder mtimes, temp files.

Only ``wiki/<category>/<name>.md`` files are pages. Symbolic links (a category folder, a page
file) are never followed: they are reported so that sync can say why they are not indexed.
Temp files (``.name.<pid>-<n>.tmp``) met on the way are collected for the sweep of dead
processes' leftovers (:func:`graphmem.wiki.files.remove_stale_temps`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from .files import TEMP_NAME, UnsafePath, checked, lstat
from .indexfiles import INDEX_DIR
from .slugs import RESERVED_DIRS

__all__ = ["attachment_names", "dir_state", "index_temp_files", "page_entries", "scan"]


def page_entries(wiki_dir: Path, links: list[str] | None = None, temps: list[Path] | None = None
                 ) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """``(category, entry)`` of every page file ``<category>/<name>.md`` under ``wiki_dir``.
    Links (category folders, page files) are not followed: their paths are added to
    ``links`` (``evil/`` for a folder); temp files seen on the way to ``temps``."""
    checked(wiki_dir, wiki_dir)
    try:
        top = list(os.scandir(wiki_dir))
    except FileNotFoundError:
        return
    cats = []
    for e in top:
        if temps is not None and TEMP_NAME.match(e.name):
            temps.append(Path(e.path))
        if e.name.startswith(".") or e.name in RESERVED_DIRS:
            continue
        if e.is_symlink():
            if links is not None and not e.name.endswith(".md"):
                links.append(e.name + "/")
        elif e.is_dir(follow_symlinks=False):
            cats.append(e)
    for cat in cats:
        try:
            entries = list(os.scandir(cat.path))
        except OSError:
            continue
        for e in entries:
            if temps is not None and TEMP_NAME.match(e.name):
                temps.append(Path(e.path))
            if not e.name.endswith(".md") or e.name.startswith("."):
                continue
            if e.is_symlink():
                if links is not None:
                    links.append(f"{cat.name}/{e.name}")
            elif e.is_file(follow_symlinks=False):
                yield cat.name, e


def scan(wiki_dir: Path, links: list[str], temps: list[Path] | None = None) -> dict[str, os.stat_result]:
    """Every page file (relative path) with its stat; links go to ``links``, temp files to
    ``temps``."""
    out: dict[str, os.stat_result] = {}
    for cat, e in page_entries(wiki_dir, links, temps):
        try:
            out[f"{cat}/{e.name}"] = e.stat(follow_symlinks=False)
        except OSError:
            continue
    return out


def index_temp_files(wiki_dir: Path) -> list[Path]:
    """Temp files in the index shard folders ``_index/<category>/``."""
    index = wiki_dir / INDEX_DIR
    try:
        st = lstat(wiki_dir, index)
    except UnsafePath:
        return []
    out: list[Path] = []
    if st is not None and stat.S_ISDIR(st.st_mode):
        try:
            for sub in os.scandir(index):
                if sub.is_dir(follow_symlinks=False):
                    with os.scandir(sub.path) as it:
                        out += [Path(e.path) for e in it if TEMP_NAME.match(e.name)]
        except OSError:
            pass  # an unreadable shard folder: its temp files wait for the next session
    return out


def dir_state(wiki_dir: Path) -> dict[str, int]:
    """The mtimes of ``wiki_dir`` and its category folders (a file added, removed or renamed
    changes its folder's)."""
    state: dict[str, int] = {}
    checked(wiki_dir, wiki_dir)  # a wiki/ that became a link is refused, not listed
    try:
        state[""] = os.stat(wiki_dir).st_mtime_ns
        for e in os.scandir(wiki_dir):
            if e.is_dir(follow_symlinks=False) and not e.name.startswith(".") and e.name not in RESERVED_DIRS:
                state[e.name] = e.stat().st_mtime_ns
    except FileNotFoundError:
        pass
    return state


def attachment_names(wiki_dir: Path, limit: int = 100_000) -> set[str]:
    """Lower-cased names of the files under ``wiki_dir`` that are not pages (``arch.png``, ``spec.pdf``):
    what ``![[arch.png]]`` and ``[[spec.pdf]]`` mean in Obsidian, found in any folder. Hidden entries, links
    and graphmem's index folder are not walked; at most ``limit`` names (a vault of media is not read)."""
    names: set[str] = set()
    for folder, dirs, files in os.walk(wiki_dir):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not (folder == str(wiki_dir) and d == INDEX_DIR)
                   and not os.path.islink(os.path.join(folder, d))]
        for name in files:
            if not name.startswith(".") and not name.lower().endswith(".md"):
                names.add(name.lower())
                if len(names) >= limit:
                    return names
    return names
