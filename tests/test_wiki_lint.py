"""Lint (every key, --fix, --create-stubs) and sync (hand edits, new and deleted files,
stat-based checks, the automatic sync before search, read and write)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import graphmem
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT
from graphmem.wiki import core as wiki_core
from graphmem.wiki.lint import LINT_KEYS


@pytest.fixture
def wkb(tmp_path):
    """A knowledge base without generated pages and with a full re-scan before every search."""
    with graphmem.open(tmp_path / "kb", config={"wiki": {"auto_pages": False, "autosync_interval": 0}}) as k:
        yield k


def line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in ln)


def test_report_has_the_seed_keys_and_ours(wkb):
    report = wkb.wiki.lint_wiki()
    assert set(report) == set(LINT_KEYS) | {"problems"}
    assert report["problems"] == 0 and report["broken_wikilinks"] == {}
    # A check writes nothing (issue 13): no event, no log.md line; a --fix run is logged.
    assert wkb.events.list(types=["wiki.lint"]) == [] and wkb.wiki.get_log() == []
    wkb.wiki.lint_wiki(fix=True)
    assert wkb.events.list(types=["wiki.lint"])[0].payload["problems"] == 0
    assert wkb.wiki.get_log()[-1]["operation"] == "lint"


def test_broken_isolated_and_unlinked(wkb):
    a = wkb.wiki.write_page("topic", "Links", "intro\n\nsee [[lonely]] and [[no-such-page]]\n")
    wkb.wiki.write_page("topic", "Lonely", "no links here\n")
    report = wkb.wiki.lint_wiki()
    line = line_of(Path(a["path"]), "[[no-such-page]]")
    assert report["broken_wikilinks"] == {"links": [{"target": "no-such-page", "line": line}]}
    assert report["isolated_pages"] == ["lonely"]
    assert report["unlinked_pages"] == ["links"]
    assert report["problems"] == 3


def test_hand_dropped_file_is_an_orphan_until_sync(wkb):
    (wkb.wiki.dir / "topic").mkdir(parents=True)
    (wkb.wiki.dir / "topic" / "hand-notes.md").write_text("# Hand Notes\n\nWritten in Obsidian. [[x]]\n", "utf-8")
    assert wkb.wiki.lint_wiki()["orphan_pages"] == ["topic/hand-notes.md"]
    assert wkb.wiki.lint_wiki()["orphan_pages"] == ["topic/hand-notes.md"]  # lint does not sync
    res = wkb.wiki.sync()
    assert res["indexed"] == ["topic/hand-notes"]
    report = wkb.wiki.lint_wiki()
    assert report["orphan_pages"] == [] and "hand-notes" in report["broken_wikilinks"]
    p = wkb.wiki.read_page_by_slug("hand-notes")
    assert (p["title"], p["category"], p["summary"]) == ("Hand Notes", "topic", "Written in Obsidian. [[x]]")
    assert wkb.events.list(types=["wiki.sync"])[0].payload["change"] == "added"


def test_lint_fix_indexes_orphans_and_drops_missing_pages(wkb):
    gone = wkb.wiki.write_page("topic", "Gone", "x\n")
    Path(gone["path"]).unlink()
    (wkb.wiki.dir / "topic" / "dropped.md").write_text("dropped in by hand\n", encoding="utf-8")
    report = wkb.wiki.lint_wiki()
    assert report["missing_pages"] == ["gone"] and report["orphan_pages"] == ["topic/dropped.md"]
    fixed = wkb.wiki.lint_wiki(fix=True)
    assert fixed["fixed"]["indexed"] == ["topic/dropped"] and fixed["fixed"]["removed"] == ["topic/gone"]
    assert fixed["missing_pages"] == [] and fixed["orphan_pages"] == []
    assert [p["slug"] for p in wkb.wiki.list_pages()] == ["dropped"]
    index = (wkb.wiki.dir / "index.md").read_text(encoding="utf-8")
    assert "[[dropped|dropped]]" in index and "[[gone|" not in index


def test_lint_fix_rewrites_a_damaged_index(wkb):
    wkb.wiki.write_page("topic", "Alpha", "x\n")
    (wkb.wiki.dir / "index.md").write_text("garbage\n", encoding="utf-8")
    wkb.wiki.lint_wiki(fix=True)
    assert "- [[alpha|Alpha]]" in (wkb.wiki.dir / "index.md").read_text(encoding="utf-8")


def test_stale_pages_cite_superseded_or_deleted_documents(wkb):
    wkb.ingest_with_content("doc_1", "T", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    wkb.documents.add("another text", doc_id="doc_2")
    wkb.wiki.write_page("topic", "Cites", "x\n", source_documents=["doc_1", "doc_2"])
    assert wkb.wiki.lint_wiki()["stale_pages"] == []
    wkb.ingest_with_content("doc_1", "T", "s", QUICKSTART_TEXT + " More.", QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    wkb.documents.delete("doc_2")
    stale = wkb.wiki.lint_wiki()["stale_pages"]
    assert [(s["slug"], s["doc_id"], s["cited_version"], s["latest_version"]) for s in stale] == [
        ("cites", "doc_1", 1, 2), ("cites", "doc_2", 1, None)]
    assert stale[1]["reason"] == "document deleted"


def test_uncited_claims(wkb):
    wkb.ingest_with_content("doc_1", "T", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    r = wkb.wiki.write_page("summary", "Claims", "- [[memory-leak]] causes [[system-crash]]\n"
                                                 "- [[memory-leak]] prevents [[system-crash]]\n")
    uncited = wkb.wiki.lint_wiki()["uncited_claims"]
    assert [(u["slug"], u["line"], u["reason"]) for u in uncited] == [
        ("claims", line_of(Path(r["path"]), "prevents"), "no such relation in the graph")]
    wkb.documents.delete("doc_1")  # the causes relation loses its only evidence
    reasons = {u["claim"]: u["reason"] for u in wkb.wiki.lint_wiki()["uncited_claims"]}
    assert reasons["- [[memory-leak]] causes [[system-crash]]"] == "no such relation in the graph"
    assert len(reasons) == 2


def test_entity_types_conflicting_across_pages(wkb):
    wkb.ingest_with_content("doc_1", "T", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    (wkb.wiki.dir / "entity").mkdir(parents=True)
    (wkb.wiki.dir / "entity" / "memory-leak.md").write_text("---\ntitle: memory leak\ntype: issue\n---\nx\n", "utf-8")
    (wkb.wiki.dir / "topic").mkdir()
    (wkb.wiki.dir / "topic" / "leaks.md").write_text("---\ntitle: Memory Leak\ntype: resource\n---\ny\n", "utf-8")
    wkb.wiki.sync()
    conflicts = [c for c in wkb.wiki.lint_wiki()["contradictions"] if c["kind"] == "entity types"]
    assert conflicts == [{"slug": "leaks", "kind": "entity types", "entity": "memory leak",
                          "types": {"leaks": "resource", "memory-leak": "issue"}}]


def test_missing_cross_references_are_fixed_inside_generated_blocks(wkb):
    ent = wkb.wiki.write_page("entity", "memory leak", "# memory leak\n\nMy own description.\n")
    wkb.wiki.write_page("summary", "Crash Summary", "Caused by a [[memory-leak]].\n")
    report = wkb.wiki.lint_wiki()
    assert report["missing_cross_references"] == [{"slug": "memory-leak", "missing_link_to": "crash-summary"}]
    fixed = wkb.wiki.lint_wiki(fix=True)
    assert fixed["missing_cross_references"] == []
    assert fixed["fixed"]["cross_references_added"] == ["entity/memory-leak"]
    text = Path(ent["path"]).read_text(encoding="utf-8")
    assert "# memory leak\n\nMy own description.\n" in text
    assert "<!-- graphmem:begin generated -->\n## See also\n\n- [[crash-summary]]\n" in text


def test_auto_pages_keep_cross_references_themselves(kb):
    kb.ingest_with_content("doc_1", "System Crash Analysis", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES,
                           QUICKSTART_RELATIONS)
    kb.wiki.write_page("summary", "System Crash Analysis Summary", "About [[memory-leak]] and [[system-crash]].\n")
    report = kb.wiki.lint_wiki()
    assert report["missing_cross_references"] == [] and report["broken_wikilinks"] == {}
    assert report["stubs"] == [] and report["orphan_pages"] == []


def test_stubs_and_create_stubs(wkb):
    wkb.wiki.write_page("entity", "Empty Thing", "# Empty Thing\n")
    wkb.wiki.write_page("topic", "Hub", "See [[new-idea]] and [[empty-thing]].\n")
    report = wkb.wiki.lint_wiki()
    assert report["stubs"] == ["empty-thing"] and report["broken_wikilinks"]["hub"][0]["target"] == "new-idea"
    after = wkb.wiki.lint_wiki(fix=True, create_stubs=True)
    assert after["fixed"]["stubs_created"] == ["topic/new-idea"]
    assert after["broken_wikilinks"] == {}
    assert "[[hub]]" in wkb.wiki.read_page_by_slug("new-idea")["content"]


def test_create_stubs_uses_the_entity_category_for_known_entities(kb):
    kb.ingest_with_content("doc_1", "T", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    (kb.wiki.dir / "entity" / "memory-leak.md").unlink()
    kb.wiki.sync()
    kb.wiki.write_page("topic", "Refs", "[[memory-leak]]\n")
    kb.wiki.lint_wiki(create_stubs=True)
    assert kb.wiki.read_page_by_slug("memory-leak")["category"] == "entity"


# -- sync ------------------------------------------------------------------------------------------


def test_hand_edits_are_picked_up_before_search_and_read(wkb):
    r = wkb.wiki.write_page("topic", "Notes", "nothing special\n")
    path = Path(r["path"])
    path.write_text(path.read_text(encoding="utf-8") + "\nzanzibar appears now, see [[elsewhere]]\n", "utf-8")
    assert [h["slug"] for h in wkb.wiki.search_wiki("zanzibar")] == ["notes"]
    assert "zanzibar" in wkb.wiki.read_page("topic", "Notes")["content"]
    assert wkb.wiki.backlinks("elsewhere")[0]["slug"] == "notes"
    assert [e.payload["change"] for e in wkb.events.list(types=["wiki.sync"])] == ["edited"]


def test_edit_of_a_hit_is_reindexed_even_between_full_scans(tmp_path):
    with graphmem.open(tmp_path / "kb", config={"wiki": {"auto_pages": False, "autosync_interval": 3600}}) as kb:
        r = kb.wiki.write_page("topic", "Notes", "apples and pears\n")
        kb.wiki.search_wiki("apples")  # the full scan happens here; the next is an hour away
        path = Path(r["path"])
        path.write_text(path.read_text(encoding="utf-8").replace("pears", "quinces"), encoding="utf-8")
        hit = kb.wiki.search_wiki("apples")[0]
        assert "quinces" in hit["snippet"] or kb.wiki.search_wiki("quinces")[0]["slug"] == "notes"
        assert kb.store.get_page("notes", with_content=True).content.endswith("apples and quinces\n")
        # A new file changes its folder's mtime: found without waiting for the next full scan.
        (path.parent / "fresh.md").write_text("# Fresh\n", encoding="utf-8")
        assert "fresh" in [p["slug"] for p in kb.wiki.list_pages()]


def test_deleted_file_is_missing_until_sync_then_gone(wkb):
    r = wkb.wiki.write_page("topic", "Temp", "x\n")
    Path(r["path"]).unlink()
    assert wkb.wiki.lint_wiki()["missing_pages"] == ["temp"]
    assert wkb.wiki.sync()["removed"] == ["topic/temp"]
    with pytest.raises(graphmem.NotFound):
        wkb.wiki.read_page("topic", "Temp")
    assert wkb.events.list(types=["wiki.delete"])[0].target == "temp"


def test_sync_is_stat_based(wkb, monkeypatch):
    for i in range(5):
        wkb.wiki.write_page("topic", f"P{i}", f"body {i}\n")
    reads = []
    real = wiki_core.read_file
    monkeypatch.setattr(wiki_core, "read_file", lambda root, p: reads.append(p) or real(root, p))
    assert wkb.wiki.sync()["indexed"] == [] and reads == []  # nothing changed: no file read
    target = wkb.wiki.dir / "topic" / "p1.md"
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # touched, same content
    events = len(wkb.events.list(limit=10000))
    res = wkb.wiki.sync()
    assert res["indexed"] == [] and reads == [target] and len(wkb.events.list(limit=10000)) == events
    reads.clear()
    assert wkb.wiki.sync()["indexed"] == [] and reads == []  # the new mtime was recorded


def test_sync_skips_files_it_cannot_index(wkb):
    (wkb.wiki.dir / "topic").mkdir(parents=True)
    (wkb.wiki.dir / "topic" / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    (wkb.wiki.dir / "topic" / "ok.md").write_text("fine\n", encoding="utf-8")
    (wkb.wiki.dir / "other").mkdir()
    (wkb.wiki.dir / "other" / "ok.md").write_text("same name elsewhere\n", encoding="utf-8")
    (wkb.wiki.dir / "loose.md").write_text("not in a category folder\n", encoding="utf-8")
    (wkb.wiki.dir / ".obsidian").mkdir()
    (wkb.wiki.dir / ".obsidian" / "workspace.md").write_text("settings\n", encoding="utf-8")
    res = wkb.wiki.sync()
    assert len(res["indexed"]) == 1 and res["indexed"][0] in ("topic/ok", "other/ok")
    reasons = sorted(s["reason"].split(";")[0] for s in res["skipped"])
    assert reasons[0].startswith("not UTF-8") and "already used" in reasons[1]
    assert len(wkb.wiki.list_pages()) == 1


def test_a_hub_entity_past_its_bounded_lists_is_no_finding_but_one_inside_them_is(tmp_path):
    """An entity named by more documents than its page lists (max_documents, then a See also window of
    max_backlinks summaries by slug, less those listed) is not a finding for the summaries past those bounds.
    The old rule counted the missing links instead: on a freshly generated wiki every entity named by 11
    or more documents was reported (the bundled examples: pgbouncer) and --fix could not clear it."""
    cfg = {"wiki": {"max_documents": 3, "max_backlinks": 2, "autosync_interval": 0}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        for i in range(8):
            text = f"Incident {i} was caused by PgBouncer."
            kb.ingest_with_content(f"inc-{i}", f"Incident {i}", "s", text,
                                   [{"name": "PgBouncer", "type": "service", "supporting_text": text}])
        assert kb.wiki.lint_wiki()["missing_cross_references"] == []
        assert kb.wiki.lint_wiki(fix=True)["missing_cross_references"] == []
    # A summary that sorts into the See also window is one the page should list: written where pages are not
    # regenerated (auto_pages off), the entity page misses it, and that is a finding.
    with graphmem.open(tmp_path / "kb", config={"wiki": {**cfg["wiki"], "auto_pages": False}}) as kb:
        kb.wiki.write_page("summary", "Aaa notes", "About [[pgbouncer]].\n")
        report = kb.wiki.lint_wiki()
        assert report["missing_cross_references"] == [{"slug": "pgbouncer", "missing_link_to": "aaa-notes"}]


def test_links_to_attachments_that_exist_are_not_broken(tmp_path):
    """![[arch.png]] and [[spec.pdf]] were reported broken although both files sat in wiki/attachments/."""
    import graphmem

    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        att = tmp_path / "kb" / "wiki" / "attachments"
        att.mkdir(parents=True)
        (att / "Arch.png").write_bytes(b"\x89PNG\r\n")
        (att / "spec.pdf").write_bytes(b"%PDF-1.4\n")
        kb.wiki.write_page("notes", "Design", "![[Arch.png]] and [[attachments/spec.pdf]], not [[missing.png]].")
        broken = kb.wiki.lint_wiki()["broken_wikilinks"]
        assert [b["target"] for b in broken["design"]] == ["missing.png"]


def test_a_deleted_index_is_reported_by_check_and_written_again_by_sync(tmp_path):
    """rm index.md (and _index/): lint said 0 problems, check said consistent, sync wrote nothing back."""
    import shutil

    import graphmem
    from graphmem.portability import check

    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        kb.wiki.write_page("notes", "Design", "About the design.")
        wiki = tmp_path / "kb" / "wiki"
        before = (wiki / "index.md").read_text(encoding="utf-8")
        (wiki / "index.md").unlink()
        shutil.rmtree(wiki / "_index", ignore_errors=True)
        assert "wiki/index.md is missing (run `graphmem wiki sync` to write it again)" in check(kb.ctx)["wiki"]
        kb.wiki.sync()
        assert (wiki / "index.md").read_text(encoding="utf-8") == before
        assert check(kb.ctx)["ok"] is True


@pytest.mark.parametrize("setting, folder", [("_index", "index"), ("Notes", "notes")])
def test_stubs_go_to_the_stub_category_as_a_folder_name(tmp_path, setting, folder):
    """wiki.stub_category = "_index" wrote stubs into graphmem's index folder, gone at the next sync."""
    import graphmem

    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"},
                                                "wiki": {"stub_category": setting}}) as kb:
        kb.wiki.write_page("notes", "Design", "See [[Nowhere Yet]].")
        done = kb.wiki.lint_wiki(fix=True, create_stubs=True)
        assert done["fixed"]["stubs_created"] == [f"{folder}/nowhere-yet"]
        kb.wiki.sync()
        assert (tmp_path / "kb" / "wiki" / folder / "nowhere-yet.md").is_file()
        assert kb.wiki.read_page_by_slug("nowhere-yet")["category"] == folder


def test_a_stub_category_that_is_no_folder_name_is_refused(tmp_path):
    import graphmem

    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"stub_category": "."}}) as kb:
        kb.wiki.write_page("notes", "Design", "See [[Nowhere Yet]].")
        with pytest.raises(graphmem.InvalidInput, match="wiki.stub_category"):
            kb.wiki.lint_wiki(fix=True, create_stubs=True)
        assert not (tmp_path / "kb" / "wiki" / "nowhere-yet.md").exists()
