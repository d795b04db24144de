"""Pages from every ingest: summary and entity pages, hand edits kept byte for byte,
contradictions, dropped claims, bounded hub pages, bulk ingest batching, failures."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmem
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT
from graphmem.errors import BackendError
from graphmem.extraction import parse_extraction
from graphmem.ingest.extractors.base import SourceDocument
from graphmem.ingest.pipeline import ingest_documents
from graphmem.wiki import files as wiki_files
from graphmem.wiki.markdown import BEGIN, END

DOC2 = "Profiling found a memory leak in the cache. The memory leak causes high latency."
DOC2_ENTITIES = [
    {"name": "memory leak", "type": "issue", "supporting_text": "Profiling found a memory leak in the cache."},
    {"name": "high latency", "type": "issue", "supporting_text": "The memory leak causes high latency."},
]
DOC2_RELATIONS = [{"source": "memory leak", "target": "high latency", "type": "causes", "confidence": 0.9,
                   "supporting_text": "The memory leak causes high latency."}]


def page(kb: graphmem.KnowledgeBase, rel: str) -> str:
    return (kb.wiki.dir / rel).read_text(encoding="utf-8")


def test_ingest_writes_the_summary_page(kb, quickstart):
    text = page(kb, "summary/doc-system-crash-analysis.md")
    assert "title: System Crash Analysis" in text and "- doc_1@v1" in text
    assert "**Document:** `doc_1` · version 1 · source `notes/crash.txt` · 1 chunk" in text
    assert ("- [[memory-leak]] causes [[system-crash]] (confidence 1.00) — “System crashes due to memory leaks.” — "
            "chunk `doc_1:v1:c0`") in text
    assert "## Entities\n\n- [[memory-leak]] (issue)\n- [[system-crash]] (issue)" in text
    assert text.count(BEGIN) == 1 and text.count(END) == 1 and "Contradictions" not in text
    # The claim is tracked: lint can tell when it loses its evidence.
    assert kb.wiki.lint_wiki()["uncited_claims"] == []


def test_ingest_writes_one_page_per_entity(kb, quickstart):
    text = page(kb, "entity/memory-leak.md")
    assert "**Type:** issue" in text
    assert ("- **memory leak** causes [[system-crash]] (confidence 1.00) — “System crashes due to memory leaks.” — "
            "[[doc-system-crash-analysis]] v1, chunk `doc_1:v1:c0`") in text
    assert "## Documents\n\n- [[doc-system-crash-analysis]] — System Crash Analysis (`doc_1` v1)" in text
    other = page(kb, "entity/system-crash.md")
    assert "- [[memory-leak]] causes **system crash** (confidence 1.00)" in other  # the incoming direction
    assert [p["slug"] for p in kb.wiki.list_pages("entity")] == ["memory-leak", "system-crash"]
    assert {e.target for e in kb.events.list(types=["wiki.ingest"])} == {"memory-leak", "system-crash",
                                                                        "doc-system-crash-analysis"}
    assert kb.wiki.get_log()[-1]["line"].endswith("ingest | summary/doc-system-crash-analysis — doc_1; 2 entity pages "
                                                  "updated")


def test_second_document_updates_the_entity_page_and_hand_text_survives_byte_for_byte(kb, quickstart):
    path = kb.wiki.dir / "entity" / "memory-leak.md"
    original = path.read_text(encoding="utf-8")
    head, rest = original.split(BEGIN)
    block, tail = rest.split(END)
    mine_top = "A memory leak is memory that is never freed.  \r\n\tIndented — ünïcode, trailing spaces   \n\n"
    mine_bottom = "\n\n## My notes\n\nSee also the allocator docs.\n\n\n"
    edited = head + mine_top + BEGIN + block + END + mine_bottom
    path.write_bytes(edited.encode("utf-8"))

    kb.ingest_with_content("doc_2", "Cache Profiling", "notes/cache.txt", DOC2, DOC2_ENTITIES, DOC2_RELATIONS)
    after = path.read_bytes().decode("utf-8")
    new_head, new_rest = after.split(BEGIN)
    new_block, new_tail = new_rest.split(END)
    front_end = new_head.index("---\n", 4) + 4
    assert new_head[front_end:] == head[head.index("---\n", 4) + 4 :] + mine_top  # body before the block
    assert new_tail == mine_bottom  # after the block, byte for byte
    assert "[[high-latency]]" in new_block and "[[doc-cache-profiling]]" in new_block
    assert "- doc_2@v1" in new_head  # front matter cites the new document
    assert "[[system-crash]]" in new_block  # the old relation is still there
    # The hand-written paragraph is searchable too.
    assert "memory-leak" in [h["slug"] for h in kb.wiki.search_wiki("allocator docs")]


def test_opposite_relations_are_flagged_as_contradictions(kb, quickstart):
    text = "Restarting nightly, the memory leak prevents a system crash."
    kb.ingest_with_content("doc_3", "Ops Note", "ops.txt", text,
                           [{"name": "memory leak", "type": "issue"}, {"name": "system crash", "type": "issue"}],
                           [{"source": "memory leak", "target": "system crash", "type": "prevents",
                             "confidence": 0.7, "supporting_text": text}])
    summary = page(kb, "summary/doc-ops-note.md")
    assert "## Contradictions" in summary
    assert ("- Conflict: [[memory-leak]] prevents [[system-crash]] (0.70, [[doc-ops-note]]) vs [[memory-leak]] causes "
            "[[system-crash]] (1.00, [[doc-system-crash-analysis]])") in summary
    assert "## Contradictions" in page(kb, "entity/memory-leak.md")
    flagged = {c["slug"] for c in kb.wiki.lint_wiki()["contradictions"] if c["kind"] == "flagged"}
    assert {"doc-ops-note", "memory-leak", "system-crash"} <= flagged


def test_a_new_version_that_drops_a_claim_is_flagged(kb, quickstart):
    v2 = "System crashes were seen. Memory leaks occur when objects are not released."
    kb.ingest_with_content("doc_1", "System Crash Analysis", "notes/crash.txt", v2, QUICKSTART_ENTITIES[:1], [])
    summary = page(kb, "summary/doc-system-crash-analysis.md")
    assert "version 2" in summary and "- doc_1@v2" in summary
    assert ("- Dropped: `doc_1` version 2 no longer states [[memory-leak]] causes [[system-crash]] (version 1 did)"
            in summary)
    report = kb.wiki.lint_wiki()
    assert "doc-system-crash-analysis" in {c["slug"] for c in report["contradictions"]}
    # system crash is no longer named by doc_1 v2: its page still cites v1, which is stale now.
    assert {(s["slug"], s["doc_id"], s["cited_version"], s["latest_version"]) for s in report["stale_pages"]} >= {
        ("system-crash", "doc_1", 1, 2)}


def test_auto_pages_can_be_switched_off(tmp_path):
    with graphmem.open(tmp_path / "kb", config={"wiki": {"auto_pages": False}}) as kb:
        kb.ingest_with_content("doc_1", "T", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
        assert kb.wiki.list_pages() == [] and kb.store.wiki_dirty() == []
        assert not (kb.wiki.dir / "summary").exists()


def test_a_hand_written_entity_page_is_adopted_not_clobbered(kb):
    mine = "# memory leak\n\nWritten by a person before any ingest.\n"
    kb.wiki.write_page("entity", "Memory Leak", mine)
    kb.ingest_with_content("doc_1", "System Crash Analysis", "notes/crash.txt", QUICKSTART_TEXT,
                           QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    text = page(kb, "entity/memory-leak.md")
    body = text[text.index("---\n", 4) + 4 :]
    assert body.startswith(mine) and BEGIN in body and "[[system-crash]]" in body
    assert [p["slug"] for p in kb.wiki.list_pages("entity")] == ["memory-leak", "system-crash"]
    assert kb.store.get_page("memory-leak").subject is not None


def test_documents_with_the_same_title_get_distinct_summary_pages(kb):
    kb.documents.add("first text about caches", doc_id="a", title="README")
    kb.documents.add("second text about queues", doc_id="b", title="README")
    titles = sorted(p["title"] for p in kb.wiki.list_pages("summary"))
    assert titles == ["README", "README (b)"]
    assert sorted(p["slug"] for p in kb.wiki.list_pages("summary")) == ["doc-readme", "doc-readme-b"]


def test_hub_entity_pages_are_bounded(tmp_path):
    cfg = {"wiki": {"max_relations": 3, "max_documents": 2, "max_backlinks": 2}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        for i in range(6):
            text = f"The hub feeds spoke {i}."
            kb.ingest_with_content(f"d{i}", f"Doc {i}", "s", text,
                                   [{"name": "hub", "type": "system"}, {"name": f"spoke {i}", "type": "component"}],
                                   [{"source": "hub", "target": f"spoke {i}", "type": "feeds", "confidence": 0.9,
                                     "supporting_text": text}])
        text = page(kb, "entity/hub.md")
        relations = text.split("## Relations")[1].split("##")[0]
        assert relations.count("- **hub** feeds") == 3 and "more relations" in relations
        docs = text.split("## Documents")[1].split("##")[0]
        assert docs.count("- [[doc-") == 2 and "more documents" in docs
        # Full pages list the strongest, then oldest: they stop changing as more arrive.
        before = (kb.wiki.dir / "entity" / "hub.md").stat().st_mtime_ns
        kb.ingest_with_content("d9", "Doc 9", "s", "The hub feeds spoke 9.",
                               [{"name": "hub", "type": "system"}, {"name": "spoke 9", "type": "component"}],
                               [{"source": "hub", "target": "spoke 9", "type": "feeds", "confidence": 0.9,
                                 "supporting_text": "The hub feeds spoke 9."}])
        assert (kb.wiki.dir / "entity" / "hub.md").stat().st_mtime_ns == before


def test_regenerating_unchanged_pages_writes_nothing(kb, quickstart):
    files = {p: p.stat().st_mtime_ns for p in kb.wiki.dir.rglob("*.md") if p.name != "log.md"}
    events = len(kb.events.list(limit=10000))
    with kb.store.transaction():
        kb.store.mark_wiki_dirty(["doc:doc_1", *(s for s in (p.subject for p in kb.store.list_pages()) if s)])
    assert kb.wiki.flush()["pages"] == 0
    assert {p: p.stat().st_mtime_ns for p in kb.wiki.dir.rglob("*.md") if p.name != "log.md"} == files
    assert len(kb.events.list(limit=10000)) == events and kb.store.wiki_dirty() == []


def test_a_page_write_failure_does_not_fail_the_ingest(kb, monkeypatch):
    # Writing the page's temp file fails (a rename failing at the ingest's COMMIT fails the
    # whole ingest instead: the renames belong to its transaction, see test_rel_wiki_atomic.py).
    def broken(self, *args, **kwargs):
        raise BackendError("cannot write wiki/summary/x.md: Read-only file system (injected)")

    monkeypatch.setattr(wiki_files.FileTxn, "write", broken)
    r = kb.ingest_with_content("doc_1", "System Crash Analysis", "notes/crash.txt", QUICKSTART_TEXT,
                               QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    monkeypatch.undo()
    assert r["status"] == "added" and any("wiki pages for 'doc_1' not updated" in w for w in r["warnings"])
    assert kb.store.list_pages() == [] and "doc:doc_1" in kb.store.wiki_dirty()
    assert kb.wiki.sync()["regenerated"] == 3  # retried: summary + two entity pages
    assert kb.store.wiki_dirty() == [] and len(kb.wiki.list_pages()) == 3


def _source_docs(n: int) -> list[SourceDocument]:
    out = []
    for i in range(n):
        text = f"Service {i} depends on the shared cache. The shared cache is a component."
        ex = parse_extraction(
            [{"name": f"service {i}", "type": "software", "supporting_text": text.split(". ")[0] + "."},
             {"name": "shared cache", "type": "component", "supporting_text": "The shared cache is a component."}],
            [{"source": f"service {i}", "target": "shared cache", "type": "depends on", "confidence": 0.8,
              "supporting_text": text.split(". ")[0] + "."}],
        )
        out.append(SourceDocument(f"svc{i}", f"Service {i}", f"svc{i}.txt", text, extraction=ex))
    return out


def test_bulk_ingest_regenerates_pages_in_batches_not_per_document(tmp_path):
    cfg = {"ingest": {"batch_size": 4}, "wiki": {"bulk_flush_docs": 8}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        flushes = []
        real = kb.wiki.flush

        def counting(*a, **k):
            out = real(*a, **k)
            flushes.append(out["pages"])
            return out

        kb.wiki.flush = counting  # type: ignore[method-assign]
        summary = ingest_documents(kb.ctx, _source_docs(20), None, workers=1)
        assert summary.added == 20
        # Every 8 documents (2 batches of 4) and once at the end, not once per document.
        assert len(flushes) == 3 and sum(flushes) > 0
        assert len(kb.wiki.list_pages("summary")) == 20 and len(kb.wiki.list_pages("entity")) == 21
        hub = page(kb, "entity/shared-cache.md")
        assert hub.count("depends on **shared cache**") == 15 and "more relations" in hub  # wiki.max_relations
        assert kb.store.wiki_dirty() == []
        assert kb.wiki.lint_wiki()["broken_wikilinks"] == {}


def test_a_wiki_failure_in_bulk_ingest_is_a_warning_and_pages_are_retried(tmp_path, monkeypatch):
    with graphmem.open(tmp_path / "kb") as kb:
        monkeypatch.setattr(wiki_files.FileTxn, "commit",
                            lambda self: (_ for _ in ()).throw(BackendError("disk full (injected)")))
        summary = ingest_documents(kb.ctx, _source_docs(3), None, workers=1)
        monkeypatch.undo()
        assert summary.added == 3 and any("disk full (injected)" in w for w in summary.warnings)
        assert kb.store.list_pages() == [] and len(kb.store.wiki_dirty()) == 7
        kb.wiki.sync()
        assert len(kb.wiki.list_pages()) == 7 and kb.store.wiki_dirty() == []


def test_deferred_writes_each_page_once_for_a_loop_of_ingests(kb):
    with kb.wiki.deferred():
        for i in range(5):
            text = f"Worker {i} uses the queue."
            kb.ingest_with_content(f"w{i}", f"Worker {i}", "s", text,
                                   [{"name": f"worker {i}", "type": "process"}, {"name": "queue", "type": "component"}],
                                   [{"source": f"worker {i}", "target": "queue", "type": "uses", "confidence": 0.9,
                                     "supporting_text": text}])
        assert kb.wiki.list_pages() == []  # nothing yet: marked only
    assert len(kb.events.list(types=["wiki.ingest"], target="queue")) == 1
    assert page(kb, "entity/queue.md").count("uses **queue**") == 5


def test_every_ingestion_path_makes_pages(kb, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Alpha\n\nAlpha text about caching.\n", encoding="utf-8")
    kb.ingest_paths([tmp_path / "docs"], extractor="none")
    kb.documents.add("plain document text", doc_id="plain", title="Plain")
    assert {p["title"] for p in kb.wiki.list_pages("summary")} >= {"Plain"}
    assert len(kb.wiki.list_pages("summary")) == 2
    assert Path(kb.wiki.list_pages("summary")[0]["path"]).is_file()


def test_pages_left_marked_by_an_interrupted_run_are_caught_up_on_the_next_read(tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        kb.wiki.flush = lambda *a, **k: {"pages": 0, "documents": 0}  # type: ignore[method-assign]
        ingest_documents(kb.ctx, _source_docs(2), None, workers=1)  # "stops" before its flush
        assert kb.store.list_pages() == [] and kb.store.wiki_dirty()
    with graphmem.open(tmp_path / "kb") as kb:
        assert [p["slug"] for p in kb.wiki.list_pages("summary")] == ["doc-service-0", "doc-service-1"]
        assert kb.store.wiki_dirty() == []


def test_an_entity_gets_its_page_once_it_has_a_relation_or_a_second_document(kb):
    lone = [{"name": "Ada Lovelace", "type": "person", "supporting_text": "Ada Lovelace wrote notes."}]
    kb.ingest_with_content("a", "Notes", "s", "Ada Lovelace wrote notes.", lone, [])
    assert [p["slug"] for p in kb.wiki.list_pages("entity")] == []
    assert "- **Ada Lovelace** (actor)" in page(kb, "summary/doc-notes.md")  # named, not linked
    kb.ingest_with_content("b", "More Notes", "s", "Ada Lovelace wrote notes again.", lone, [])
    assert [p["slug"] for p in kb.wiki.list_pages("entity")] == ["ada-lovelace"]
    text = page(kb, "entity/ada-lovelace.md")
    assert "[[doc-notes]]" in text and "[[doc-more-notes]]" in text
    assert "- [[ada-lovelace]] (actor)" in page(kb, "summary/doc-notes.md")  # the first summary links it now
    assert kb.wiki.lint_wiki()["missing_cross_references"] == [] and kb.store.wiki_dirty() == []


def test_every_entity_gets_a_page_with_entity_min_documents_1(tmp_path):
    with graphmem.open(tmp_path / "kb", config={"wiki": {"entity_min_documents": 1}}) as kb:
        kb.ingest_with_content("a", "Notes", "s", "Ada Lovelace wrote notes.",
                               [{"name": "Ada Lovelace", "type": "person"}], [])
        assert [p["slug"] for p in kb.wiki.list_pages("entity")] == ["ada-lovelace"]
        assert "- [[ada-lovelace]] (actor)" in page(kb, "summary/doc-notes.md")


def test_deferred_regeneration_catches_up_on_read_and_at_close(tmp_path):
    cfg = {"wiki": {"regenerate": "deferred"}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        kb.ingest_with_content("doc_1", "System Crash Analysis", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES,
                               QUICKSTART_RELATIONS)
        assert kb.store.list_pages() == [] and kb.store.wiki_dirty()
        assert [h["slug"] for h in kb.wiki.search_wiki("memory leak")][0] == "memory-leak"  # caught up first
        kb.ingest_with_content("doc_2", "Cache Profiling", "s", DOC2, DOC2_ENTITIES, DOC2_RELATIONS)
        assert "[[doc-cache-profiling]]" not in page(kb, "entity/memory-leak.md")
    assert "[[doc-cache-profiling]]" in page(kb, "entity/memory-leak.md")  # regenerated by close()
    with pytest.raises(graphmem.InvalidInput, match="wiki.regenerate"):
        graphmem.open(tmp_path / "kb", config={"wiki": {"regenerate": "sometimes"}})
