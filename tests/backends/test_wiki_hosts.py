"""Two folders sharing one store (what `[store] url` makes of several hosts): each folder's wiki/ is
regenerated from the store, edits made in one reach the other, hand deletes and remote deletes are told
apart by the folder's ledger. The store here is one SQLite file opened by both folders (the logic is the
same on every backend; tests/backends/test_backends_kb.py runs it on PostgreSQL)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import threading
from pathlib import Path

import pytest

import graphmem
from graphmem.config import load_config
from graphmem.kb import KnowledgeBase
from graphmem.store import open_store
from graphmem.wiki.hosts import CONFLICTS_DIR, LEDGER_LOCK, LEDGER_NAME

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
    # a page deleted with wiki delete on a is deleted from the store, and b's copy goes at its next sync
    a.wiki.delete_page("topic", "Runbook")
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


def conflict_copies(kb: KnowledgeBase) -> dict[str, str]:
    root = kb.home / CONFLICTS_DIR
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))}


def test_a_hand_delete_on_a_shared_store_is_written_back_not_deleted(two_hosts):
    a, b = two_hosts
    a.wiki.write_page("topic", "Runbook", "Step one.")
    b.wiki.sync()
    (a.home / "wiki/topic/runbook.md").unlink()
    res = a.wiki.sync()
    assert res.removed == [] and res.restored == ["topic/runbook.md"]
    assert "Step one." in (a.home / "wiki/topic/runbook.md").read_text(encoding="utf-8")
    assert a.store.get_page("runbook") is not None
    b.wiki.sync()
    assert "Step one." in (b.home / "wiki/topic/runbook.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("how", ["emptied", "missing"])
def test_an_emptied_or_missing_wiki_folder_never_deletes_shared_pages(two_hosts, how):
    a, b = two_hosts
    for title in ("Runbook", "Oncall", "Postmortem"):
        a.wiki.write_page("topic", title, f"{title} text written on host a.")
    b.wiki.sync()
    before = files(a)
    shutil.rmtree(b.home / "wiki")
    if how == "emptied":
        (b.home / "wiki").mkdir()  # an unmounted share leaves its empty mount point
    res = b.wiki.sync()
    assert res.removed == []
    assert sorted(res.restored) == ["topic/oncall.md", "topic/postmortem.md", "topic/runbook.md"]
    assert sorted(p.slug for p in a.wiki.list_pages()) == ["oncall", "postmortem", "runbook"]
    a.wiki.sync()
    assert files(a) == before
    assert {k: v for k, v in files(b).items() if k != "index.md"} == {k: v for k, v in before.items()
                                                                      if k != "index.md"}


@pytest.mark.parametrize("how", ["ledger lost", "ledger unreadable", "copied folder"])
def test_a_stale_copy_without_a_ledger_entry_does_not_overwrite_the_store(two_hosts, tmp_path, how):
    a, b = two_hosts
    a.wiki.write_page("topic", "Runbook", "Version one.")
    b.wiki.sync()
    if how == "ledger lost":
        (b.home / LEDGER_NAME).unlink()
    elif how == "ledger unreadable":
        (b.home / LEDGER_NAME).write_text("{not json", encoding="utf-8")
    else:  # b's wiki/ copied into a new folder, without the dotfile
        c_home = tmp_path / "c"
        shutil.copytree(b.home / "wiki", c_home / "wiki")
        b.close()
        b = host(c_home, tmp_path / "db")
    a.wiki.write_page("topic", "Runbook", "Version two, written on host a.")
    stale = (b.home / "wiki/topic/runbook.md").read_text(encoding="utf-8")
    res = b.wiki.sync()
    try:
        assert res.indexed == [] and res.removed == []
        assert "Version two" in a.store.get_page("runbook", with_content=True).text
        assert "Version two" in (b.home / "wiki/topic/runbook.md").read_text(encoding="utf-8")
        # b's own text is not lost: saved outside wiki/ and named in the result
        saved = conflict_copies(b)
        assert list(saved.values()) == [stale]
        assert [c["path"] for c in res.conflicts] == ["topic/runbook.md"]
        assert res.conflicts[0]["saved_to"] == str(b.home / CONFLICTS_DIR / next(iter(saved)))
        a.wiki.sync()
        assert "Version two" in (a.home / "wiki/topic/runbook.md").read_text(encoding="utf-8")
    finally:
        if how == "copied folder":
            b.close()


def test_concurrent_hand_edits_on_two_hosts_keep_both_texts(two_hosts):
    a, b = two_hosts
    a.wiki.write_page("topic", "Runbook", "Step one.")
    b.wiki.sync()
    pa, pb = a.home / "wiki/topic/runbook.md", b.home / "wiki/topic/runbook.md"
    pa.write_text(pa.read_text(encoding="utf-8").replace("Step one.", "Step one. EDIT-ON-A"), encoding="utf-8")
    pb.write_text(pb.read_text(encoding="utf-8").replace("Step one.", "Step one. EDIT-ON-B"), encoding="utf-8")
    edit_b = pb.read_text(encoding="utf-8")
    assert a.wiki.sync().indexed == ["topic/runbook"]
    res = b.wiki.sync()
    assert res.indexed == [] and [c["path"] for c in res.conflicts] == ["topic/runbook.md"]
    # the store (and so every folder) keeps A's edit, which reached it first; B's is saved, not lost
    assert "EDIT-ON-A" in a.store.get_page("runbook", with_content=True).text
    assert "EDIT-ON-A" in pb.read_text(encoding="utf-8") and "EDIT-ON-B" not in pb.read_text(encoding="utf-8")
    assert list(conflict_copies(b).values()) == [edit_b]
    assert a.wiki.sync().indexed == [] and "EDIT-ON-A" in pa.read_text(encoding="utf-8")
    # an edit made on one host only is still an edit (indexed, no conflict)
    pb.write_text(pb.read_text(encoding="utf-8").replace("EDIT-ON-A", "EDIT-ON-A, then B"), encoding="utf-8")
    res = b.wiki.sync()
    assert res.indexed == ["topic/runbook"] and res.conflicts == []
    assert "then B" in a.store.get_page("runbook", with_content=True).text


def test_the_ledger_update_keeps_entries_of_another_process(two_hosts):
    """Two writers of one folder's ledger at once: this test holds the ledger lock as another process in
    the middle of its load-merge-save would; the mirror's update waits for it and keeps its entry (without
    the lock it would save first and then be overwritten by the other's stale merge)."""
    a, _ = two_hosts
    a.wiki.write_page("topic", "Runbook", "Step one.")
    mirror = a.wiki._core.mirror
    assert mirror is not None
    fd = os.open(a.home / LEDGER_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the other writer: lock, load ...
        theirs = json.loads((a.home / LEDGER_NAME).read_text(encoding="utf-8"))
        update = threading.Thread(target=mirror._update, args=({"topic/mine.md": ["h1", 1, 2]}, []))
        update.start()
        update.join(0.5)  # (with the lock it waits here; without it, it would be done)
        theirs["topic/theirs.md"] = ["h2", 3, 4]  # ... merge, save, unlock
        (a.home / LEDGER_NAME).write_text(json.dumps(theirs), encoding="utf-8")
    finally:
        os.close(fd)
    update.join()
    assert {"topic/runbook.md", "topic/mine.md", "topic/theirs.md"} <= set(mirror.load())


def _hosts_with_legacy_summary_shards(a: KnowledgeBase, b: KnowledgeBase) -> None:
    """Three summary pages whose rows say shard "do", as the code before summary pages were sharded by title kept
    them, and both hosts' index files rendered from those rows."""
    from graphmem.wiki.lint import rewrite_index

    for i in range(3):
        a.ingest_with_content(f"d{i}", f"Topic {i}", f"t{i}.md", f"Topic {i} is about item {i}.", [], [])
    a.store.conn.execute("UPDATE pages SET shard = 'do' WHERE category = 'summary'")  # type: ignore[attr-defined]
    a.store.conn.commit()  # type: ignore[attr-defined]
    rewrite_index(a.wiki._core)
    b.wiki.sync()
    rewrite_index(b.wiki._core)


def _index_is_a_full_render(kb: KnowledgeBase) -> None:
    from graphmem.wiki.indexfiles import INDEX_DIR, render_root, render_shard, shard_file

    live = set()
    for category, shard, _ in kb.store.wiki_index_counts():
        path = shard_file(kb.wiki.dir, category, shard)
        live.add(path)
        assert path.read_text(encoding="utf-8") == render_shard(kb.store, category, shard), (category, shard)
    assert set((kb.wiki.dir / INDEX_DIR).rglob("*.md")) <= live
    inline_max = kb.ctx.config.wiki.index_inline_max
    assert (kb.wiki.dir / "index.md").read_text(encoding="utf-8") == render_root(kb.store, inline_max)


def test_a_remote_delete_of_a_page_in_its_old_index_shard_leaves_no_line_behind(two_hosts):
    """Summary rows written before summary pages were sharded by title say shard "do"; a host that removes
    such a page because another host deleted it renders that shard again, not only the page's new one."""
    from graphmem.wiki.indexfiles import shard_file

    a, b = two_hosts
    _hosts_with_legacy_summary_shards(a, b)
    assert "doc-topic-1" in shard_file(b.wiki.dir, "summary", "do").read_text(encoding="utf-8")
    a.documents.delete("d1")
    b.wiki.sync()
    assert not (b.wiki.dir / "summary" / "doc-topic-1.md").exists()
    _index_is_a_full_render(b)
    assert "doc-topic-1" not in shard_file(b.wiki.dir, "summary", "do").read_text(encoding="utf-8")


def test_a_remote_rewrite_of_a_page_in_its_old_index_shard_leaves_no_line_behind(two_hosts):
    """The same for a page another host wrote again (its row moved out of "do"): this host renders the old shard
    too, or the page is listed twice (found in review)."""
    from graphmem.wiki.indexfiles import shard_file

    a, b = two_hosts
    _hosts_with_legacy_summary_shards(a, b)
    a.ingest_with_content("d1", "Topic 1", "t1.md", "Topic 1 is about something else now.", [], [])
    b.wiki.sync()
    _index_is_a_full_render(b)
    assert "doc-topic-1" not in shard_file(b.wiki.dir, "summary", "do").read_text(encoding="utf-8")
