"""Found by reviewing the trust work: reads that failed on a wiki sync they only do on the side,
a read-only fallback that could silently drop committed changes, and bookkeeping that hid a
damaged store."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import pytest

import graphmem
from graphmem.errors import BackendError, StoreBusy

pytestmark = pytest.mark.reliability


def test_a_symlinked_log_md_does_not_fail_wiki_reads(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    outside = tmp_path / "outside.md"
    outside.write_text("keep\n", encoding="utf-8")
    with graphmem.open(home) as kb:
        kb.wiki.write_page("topic", "Tea", "About green tea.\n")
    log = home / "wiki" / "log.md"
    log.unlink()
    log.symlink_to(outside)
    (home / "wiki" / "topic" / "coffee.md").write_text("# Coffee\n\nA page written by hand.\n", encoding="utf-8")
    with graphmem.open(home) as kb, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pages = [p["slug"] for p in kb.wiki.list_pages()]  # autosync has work: the hand-written page
        hits = kb.wiki.search_wiki("green tea")
    assert "tea" in pages and hits and hits[0]["slug"] == "tea"
    assert any("not refreshed" in str(w.message) and "log.md" in str(w.message) for w in caught)
    assert outside.read_text(encoding="utf-8") == "keep\n"


def test_read_only_fallback_refuses_a_wal_it_cannot_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.store.sqlite import connect as connect_mod

    home = tmp_path / "kb"
    graphmem.open(home).close()
    (home / "graph.db-wal").write_bytes(b"\x00" * 4096)  # stands for commits not yet checkpointed
    cls = next(c for c in vars(connect_mod).values() if isinstance(c, type) and hasattr(c, "_connect_uri"))
    real = cls._connect_uri

    def no_shm(self, uri: str) -> sqlite3.Connection:  # a folder where -shm cannot be created
        if "immutable" not in uri:
            raise sqlite3.OperationalError("unable to open database file")
        return real(self, uri)

    monkeypatch.setattr(cls, "_connect_uri", no_shm)
    with pytest.raises(BackendError, match="graph.db-wal"):
        graphmem.open(home, read_only=True)


def test_bookkeeping_skips_silently_when_busy_and_warns_on_a_storage_failure(kb: graphmem.KnowledgeBase) -> None:
    def busy() -> None:
        raise StoreBusy("held elsewhere")

    def broken() -> None:
        raise BackendError("disk full: the disk is full; nothing was written")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert kb.store.try_write(busy) is False
        assert not caught
        assert kb.store.try_write(broken) is False
    assert any("disk full" in str(w.message) for w in caught)
