"""Backup, restore and check of a knowledge base folder.

A backup is a folder: ``graph.db`` taken with SQLite's online backup API (a consistent snapshot while other
processes write: they are never blocked, and the copy holds exactly the commits before it started), the
``wiki/`` files copied after it, and ``config.toml``. Wiki pages written between the two steps show up in
``graphmem check`` on the backup as files without rows (``graphmem wiki sync`` indexes them).

The folder is written under a hidden temporary name beside ``out`` and renamed when complete, with a last
file ``graphmem-backup.json`` (what it holds): an interrupted backup leaves no ``out`` (a retry works), and
``restore`` refuses a folder that is not a whole backup.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from ..config import load_config, set_config_value
from ..context import Context
from ..errors import Conflict, InvalidInput
from ..wiki.files import TEMP_NAME, remove_abandoned, remove_stale_temps

__all__ = ["backup", "restore", "check"]

_WIKI_SKIP_DIRS = {"_index"}  # index shards are files graphmem writes from rows, not pages


def _copy_wiki(src: Path, dst: Path) -> int:
    copied = 0
    for root, dirs, files in os.walk(src):  # os.walk does not follow symlinked folders
        here = Path(root)
        (dst / here.relative_to(src)).mkdir(parents=True, exist_ok=True)
        for name in files:
            path = here / name
            if path.is_symlink() or TEMP_NAME.match(name):
                continue  # never follow a link out of the folder; a temp file is not part of the wiki
            shutil.copy2(path, dst / path.relative_to(src))
            copied += 1
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
    return copied


MARKER = "graphmem-backup.json"


def backup(ctx: Context, out: Path) -> dict[str, Any]:
    """Write a backup of the knowledge base to the new folder ``out``."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InvalidInput(f"out: {out} exists and is not an empty folder; give a new folder for the backup")
    if out.resolve().is_relative_to(ctx.home.resolve()):
        raise InvalidInput(f"out: {out} is inside the knowledge base folder; put the backup elsewhere")
    # A new folder is written under a hidden name beside it and renamed when complete; a folder that exists
    # (empty: a mount point, a volume, one made for the user) is written in place, its marker last.
    in_place = out.is_dir()
    try:
        if in_place:
            work = out
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            _remove_dead_partials(out)
            work = out.parent / f".{out.name}.partial-{os.getpid()}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
    except OSError as exc:
        raise InvalidInput(f"out: cannot write {out} ({exc.strerror or exc}); choose a folder you may write to") \
            from None
    try:
        ctx.store.backup_to(work / "graph.db")
        files = _copy_wiki(ctx.home / "wiki", work / "wiki") if (ctx.home / "wiki").is_dir() else 0
        if (ctx.home / "config.toml").is_file():  # late: an older restore took config.toml for "complete"
            shutil.copy2(ctx.home / "config.toml", work / "config.toml")
        done = {"out": str(out), "graph_db_bytes": (work / "graph.db").stat().st_size, "wiki_files": files,
                "last_event_id": ctx.store.last_event_id(), "store": "postgresql" if ctx.config.store.url else
                "sqlite"}
        (work / MARKER).write_text(json.dumps(done, indent=1) + "\n", encoding="utf-8")  # last: the backup is whole
        if not in_place:
            work.rename(out)
    except BaseException as exc:  # Ctrl-C included: nothing half-written is left where the backup was asked for
        if in_place:
            for child in list(out.iterdir()):
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
        else:
            shutil.rmtree(work, ignore_errors=True)
        if isinstance(exc, OSError):
            raise InvalidInput(f"out: writing the backup to {out} failed ({exc.strerror or exc}); nothing was "
                               "kept") from None
        raise
    return done


def _remove_dead_partials(out: Path) -> None:
    """The hidden folders of earlier backups to ``out`` whose process is gone (killed: SIGKILL, power loss).
    Each holds a copy of the database; one of a backup still running is left alone."""
    left = [(old, int(pid)) for old in out.parent.glob(f".{out.name}.partial-*")
            if (pid := old.name.rpartition("-")[2]).isdigit()]
    remove_abandoned(left)


def restore(backup_dir: Path, home: Path, force: bool = False, read_only: bool = False) -> dict[str, Any]:
    """Copy a backup folder into ``home`` (refused over an existing knowledge base unless ``force``, which
    moves the old one aside to ``<home>.before-restore``). A backup taken from a PostgreSQL store is
    restored into this folder's ``graph.db`` (the copy of its rows), not onto the server."""
    if not (backup_dir / "graph.db").is_file():
        raise InvalidInput(f"backup: {backup_dir} has no graph.db; give a folder written by `graphmem backup`")
    marker = backup_dir / MARKER
    if not marker.is_file() and not (backup_dir / "config.toml").is_file():
        # Backups written before the marker copied config.toml last: without either, it was cut short.
        raise InvalidInput(f"backup: {backup_dir} is not a whole backup (no {MARKER}, no config.toml: an "
                           "interrupted `graphmem backup`?); take the backup again; nothing was restored")
    if read_only:
        raise InvalidInput(f"restore: {home} is opened read-only (--read-only); a restore replaces it")
    here, src = home.resolve(), backup_dir.resolve()
    if src == here or src.is_relative_to(here) or here.is_relative_to(src):
        raise InvalidInput(f"backup: {backup_dir} is {home} or inside it (or holds it); move the backup elsewhere "
                           "first; nothing was moved")
    moved: str | None = None
    if (home / "graph.db").exists() or (home / "config.toml").exists():
        if not force:
            raise Conflict(f"{home} already holds a knowledge base; restore into a new folder, or pass --force "
                           f"to move it aside to {home}.before-restore")
        aside = home.with_name(home.name + ".before-restore")
        if aside.exists():
            raise Conflict(f"{aside} exists from an earlier restore; remove or rename it first")
        home.rename(aside)
        moved = str(aside)
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy2(backup_dir / "graph.db", home / "graph.db")
    files = _copy_wiki(backup_dir / "wiki", home / "wiki") if (backup_dir / "wiki").is_dir() else 0
    notes: list[str] = []
    if (backup_dir / "config.toml").is_file():
        shutil.copy2(backup_dir / "config.toml", home / "config.toml")
        url = load_config(home, environ={}).store.url
        if url:  # the backup's rows are in graph.db; pointing at the live server would restore nothing
            set_config_value(home, "store", "url", "")
            notes.append("the backup was taken from a PostgreSQL store: the restored folder keeps its rows in "
                         "graph.db ([store] url cleared); to put them on a server, run `graphmem migrate --to URL`")
    if marker.is_file() and os.environ.get("GRAPHMEM_STORE"):
        notes.append("GRAPHMEM_STORE is set: while it is, this folder uses that server, not the restored graph.db; "
                     "unset it to use the restored copy")
    return {"home": str(home), "wiki_files": files, "moved_aside": moved, "notes": notes}


def _wiki_problems(ctx: Context, repair: bool) -> tuple[list[str], list[str]]:
    wiki = ctx.home / "wiki"
    rows = {r["path"] for _, r in ctx.store.dump_rows(["pages"])}
    on_disk: set[str] = set()
    temps: list[Path] = []
    if wiki.is_dir():
        for root, dirs, files in os.walk(wiki):
            here = Path(root)
            dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
            for name in files:
                rel = (here / name).relative_to(wiki).as_posix()
                if TEMP_NAME.match(name):
                    temps.append(here / name)
                elif rel.endswith(".md") and "/" in rel and rel.split("/", 1)[0] not in _WIKI_SKIP_DIRS:
                    on_disk.add(rel)
    problems = [f"page row {p} has no file (run `graphmem wiki sync`)" for p in sorted(rows - on_disk)]
    # sync indexes wiki/<category>/<page>.md only: for a file deeper down, "run sync" was advice that never
    # helped (it stayed unindexed, and was reported again at every check)
    problems += [f"page file {p} has no row (run `graphmem wiki sync`)" if p.count("/") == 1 else
                 f"page file {p} is in a subfolder, which graphmem does not index (pages are "
                 f"wiki/<category>/<page>.md): move it to {p.split('/', 1)[0]}/ to make it a page"
                 for p in sorted(on_disk - rows)]
    if rows and not (wiki / "index.md").is_file():
        problems.append("wiki/index.md is missing (run `graphmem wiki sync` to write it again)")
    temp_report = [f"temp file {t.relative_to(ctx.home).as_posix()}" for t in temps]
    if repair and temps:
        removed = remove_stale_temps(wiki, temps)
        temp_report = [f"{line} (removed)" if t in removed else f"{line} (a live writer's: kept)"
                       for line, t in zip(temp_report, temps)]
    return problems, temp_report


def check(ctx: Context, repair: bool = False) -> dict[str, Any]:
    """Integrity of the file, full-text and vector indexes against their tables, evidence pointing at missing
    chunks, wiki files against page rows, temp files left by killed writers. ``ok`` when nothing is found;
    with ``repair``, the indexes are rebuilt, dangling rows dropped and stale temp files removed (what was
    found is still reported)."""
    if repair:
        ctx.store.refuse_write()
    found: dict[str, Any] = dict(ctx.store.check_store(repair=repair))
    found["wiki"], found["temp_files"] = _wiki_problems(ctx, repair)
    problems = sum(len(v) for v in found.values())
    return {"ok": problems == 0, "problems": problems, "repaired": repair and problems > 0, **found}
