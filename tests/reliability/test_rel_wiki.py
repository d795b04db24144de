"""Reliability of the wiki (issue 12): concurrent sync never drops a committed page, nothing
is read, written or deleted through a symlink inside wiki/, a title with nothing to make a
slug of never blocks page regeneration, and temp files of dead processes are cleaned up."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.errors import StoreBusy

pytestmark = pytest.mark.reliability


# -- defect 2: a concurrent sync deletes pages another process just committed ------------------------

WRITERS = 3
PAGES_PER_WRITER = 400


def _write_pages(home: str, writer: int, n: int, out: Any) -> None:
    """Write ``n`` pages; put the (slug, path) of every acknowledged write on ``out``."""
    os.environ["GRAPHMEM_EMBED_MODEL"] = "none"
    acked = []
    with graphmem.open(home, config={"store": {"busy_timeout": 60.0}}) as kb:
        for i in range(n):
            r = kb.wiki.write_page("notes", f"writer {writer} page {i}", f"Page {i} of writer {writer}.\n")
            acked.append((r["slug"], r["path"]))
    out.put(acked)


def _list_and_sync(home: str, stop: Any, rounds: Any) -> None:
    """Loop list_pages and sync until ``stop`` is set (the process that used to drop pages)."""
    os.environ["GRAPHMEM_EMBED_MODEL"] = "none"
    with graphmem.open(home, config={"store": {"busy_timeout": 60.0}, "wiki": {"autosync_interval": 0}}) as kb:
        n = 0
        while not stop.is_set():
            try:
                kb.wiki.list_pages()
                kb.wiki.sync()
            except StoreBusy:
                pass
            n += 1
        rounds.value = n


def test_concurrent_writers_and_sync_lose_no_acknowledged_page(tmp_path: Path) -> None:
    home = str(tmp_path / "kb")
    graphmem.open(home).close()
    ctx = multiprocessing.get_context("spawn")
    out, stop, rounds = ctx.Queue(), ctx.Event(), ctx.Value("i", 0)
    syncer = ctx.Process(target=_list_and_sync, args=(home, stop, rounds))
    syncer.start()
    writers = [ctx.Process(target=_write_pages, args=(home, w, PAGES_PER_WRITER, out)) for w in range(WRITERS)]
    for p in writers:
        p.start()
    acked = [item for _ in writers for item in out.get(timeout=120)]
    for p in writers:
        p.join(timeout=60)
    stop.set()
    syncer.join(timeout=60)
    assert [p.exitcode for p in writers] == [0] * WRITERS and syncer.exitcode == 0
    assert rounds.value > 0
    assert len(acked) == WRITERS * PAGES_PER_WRITER
    with graphmem.open(home) as kb:
        rows = kb.store.pages_by_slug(slug for slug, _ in acked)
        lost_rows = sorted(slug for slug, _ in acked if slug not in rows)
        lost_files = sorted(path for _, path in acked if not Path(path).is_file())
    assert lost_rows == [] and lost_files == [], f"{len(lost_rows)} rows, {len(lost_files)} files lost"
