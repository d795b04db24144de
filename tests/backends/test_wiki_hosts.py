"""Two folders sharing one store (what `[store] url` makes of several hosts): each folder's wiki/ is
regenerated from the store, edits made in one reach the other, hand deletes and remote deletes are told
apart by the folder's ledger. The store here is one SQLite file opened by both folders (the logic is the
same on every backend; tests/backends/test_backends_kb.py runs it on PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmem
from graphmem.config import load_config
from graphmem.kb import KnowledgeBase
from graphmem.store import open_store
from graphmem.wiki.hosts import LEDGER_NAME

SHARED = {"store": {"url": "postgresql://shared@db.invalid/kb"}, "embeddings": {"model": "none"}}


def host(home: Path, db_home: Path) -> KnowledgeBase:
    """A folder whose store is the one in ``db_home`` (as if ``[store] url`` named it)."""
    (home / "wiki").mkdir(parents=True, exist_ok=True)
    return KnowledgeBase(home, load_config(None, SHARED), open_store(db_home))


def files(kb: KnowledgeBase) -> dict[str, str]:
    root = kb.home / "wiki"
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))
            if p.name != "log.md"}


@pytest.fixture
def two_hosts(tmp_path):
    graphmem.open(tmp_path / "db", config={"embeddings": {"model": "none"}}).close()
    a, b = host(tmp_path / "a", tmp_path / "db"), host(tmp_path / "b", tmp_path / "db")
    yield a, b
    a.close()
    b.close()


def test_a_second_host_gets_the_same_pages(two_hosts):
    a, b = two_hosts
    a.ingest_with_content("doc_1", "System Crash Analysis", "crash.txt",
                          "System crashes due to memory leaks. Memory leaks occur when objects are not released.",
                          [{"name": "memory leak", "type": "issue", "supporting_text": "Memory leaks occur"}], [])
    a.wiki.write_page("topic", "Runbook", "Restart the [[memory-leak]] service.")
    assert "topic/runbook.md" in files(a)
    res = b.wiki.sync()
    assert res.removed == [] and res.indexed == []
    assert files(b) == files(a)  # page files and index files, byte for byte
    assert (b.home / LEDGER_NAME).is_file()
    assert [p.slug for p in b.wiki.list_pages()] == [p.slug for p in a.wiki.list_pages()]


def test_a_fresh_host_never_deletes_shared_pages(two_hosts):
    a, b = two_hosts
    a.wiki.write_page("topic", "Runbook", "Step one.")
    # b has an empty wiki/ and no ledger: a read (autosync) must fetch, not treat the pages as deleted
    assert b.wiki.read_page("topic", "Runbook").content.strip().endswith("Step one.")
    assert a.store.get_page("runbook") is not None


def test_edits_travel_both_ways_and_deletes_are_told_apart(two_hosts):
    a, b = two_hosts
    a.wiki.write_page("topic", "Runbook", "Step one.")
    b.wiki.sync()
    b.wiki.write_page("topic", "Runbook", "Step one. Step two.")
    a.wiki.sync()
    assert "Step two." in (a.home / "wiki/topic/runbook.md").read_text(encoding="utf-8")
    # an edit by hand on b reaches a through the store
    path_b = b.home / "wiki/topic/runbook.md"
    path_b.write_text(path_b.read_text(encoding="utf-8").replace("Step two.", "Step two, by hand."), encoding="utf-8")
    assert b.wiki.sync().indexed == ["topic/runbook"]
    a.wiki.sync()
    assert files(a) == files(b) and "by hand" in files(a)["topic/runbook.md"]
    # a page deleted by hand on a is deleted from the store, and b's copy goes at its next sync
    (a.home / "wiki/topic/runbook.md").unlink()
    assert a.wiki.sync().removed == ["topic/runbook"]
    assert b.wiki.sync().removed == [] and not path_b.exists()
    assert a.store.get_page("runbook") is None


def test_a_page_from_another_host_is_not_resurrected_or_overwritten_by_a_stale_copy(two_hosts):
    a, b = two_hosts
    a.wiki.write_page("topic", "Runbook", "Version one.")
    b.wiki.sync()
    a.wiki.write_page("topic", "Runbook", "Version two.")
    # b's file is as it agreed (version one): the store's newer version replaces it, not the other way round
    b.wiki.sync()
    assert "Version two." in (b.home / "wiki/topic/runbook.md").read_text(encoding="utf-8")
    assert "Version two." in b.store.get_page("runbook", with_content=True).content
    a.wiki.delete_page("topic", "Runbook")
    b.wiki.sync()
    assert not (b.home / "wiki/topic/runbook.md").exists() and b.store.get_page("runbook") is None
