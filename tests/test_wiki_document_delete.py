"""Deleting a document takes its generated wiki pages with it and brings the others up to date.

Before, `graphmem docs rm` (and `ingest --prune`) left the document's summary page, the pages of the
entities it alone supported, and claims citing it on every other page; `graphmem check` then reported
"page sources name missing documents"."""

from __future__ import annotations

from pathlib import Path

import graphmem
from graphmem.portability import check

READS = "The Route Planner reads from the Redis cache."
WATCHES = "Redis Sentinel watches the Redis cache."
USES = "The Dispatch API uses the Route Planner."
WRITES = "The Route Planner writes to ledger-db."
TEXT1, TEXT2 = f"{READS} {WATCHES}", f"{USES} {WRITES}"


def _ent(name: str, type_: str, quote: str) -> dict[str, str]:
    return {"name": name, "type": type_, "supporting_text": quote}


def _rel(source: str, type_: str, target: str, quote: str) -> dict[str, str]:
    return {"source": source, "target": target, "type": type_, "supporting_text": quote}


E1 = [_ent("Route Planner", "service", READS), _ent("Redis cache", "cache", READS),
      _ent("Redis Sentinel", "software", WATCHES)]
R1 = [_rel("Route Planner", "reads from", "Redis cache", READS),
      _rel("Redis Sentinel", "watches", "Redis cache", WATCHES)]
E2 = [_ent("Dispatch API", "service", USES), _ent("Route Planner", "service", USES),
      _ent("ledger-db", "database", WRITES)]
R2 = [_rel("Dispatch API", "uses", "Route Planner", USES), _rel("Route Planner", "writes to", "ledger-db", WRITES)]

def _kb(tmp_path: Path) -> graphmem.KnowledgeBase:
    return graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"entity_min_documents": 1}})


def _files(tmp_path: Path) -> dict[str, str]:
    wiki = tmp_path / "kb" / "wiki"
    return {str(p.relative_to(wiki)): p.read_text(encoding="utf-8") for p in wiki.rglob("*.md")}


def _ingest(kb: graphmem.KnowledgeBase) -> None:
    kb.ingest_with_content("cache-notes", "Cache notes", "", TEXT1, E1, R1)
    kb.ingest_with_content("dispatch-notes", "Dispatch notes", "", TEXT2, E2, R2)


def test_the_deleted_documents_pages_go_and_the_rest_no_longer_cite_it(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        _ingest(kb)
        before = _files(tmp_path)
        assert "summary/doc-cache-notes.md" in before and "entity/redis-sentinel.md" in before
        kb.documents.delete("cache-notes")
        after = _files(tmp_path)
        # the summary page and the pages of entities only it supported are gone, files and rows
        assert "summary/doc-cache-notes.md" not in after
        assert "entity/redis-sentinel.md" not in after and "entity/redis-cache.md" not in after
        assert kb.store.get_page("doc-cache-notes") is None and kb.store.get_page("redis-sentinel") is None
        # what stays says nothing of the deleted document (the log says what happened)
        assert not any("cache-notes" in text or "Cache notes" in text for name, text in after.items()
                       if name != "log.md")
        planner = after["entity/route-planner.md"]
        assert "dispatch-notes@v1" in planner and "[[dispatch-api]] uses **Route Planner**" in planner
        assert "reads from" not in planner
        assert "[[doc-cache-notes" not in after["index.md"]
        report = check(kb.ctx)
        assert report["ok"], report
        assert any("delete" in line and "doc-cache-notes" in line for line in after["log.md"].splitlines())


def test_a_page_a_person_wrote_in_keeps_their_text_without_graphmems_block(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        _ingest(kb)
    page = tmp_path / "kb" / "wiki" / "entity" / "redis-sentinel.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nOur Sentinel runs on three hosts.\n", encoding="utf-8")
    with _kb(tmp_path) as kb:
        kb.documents.delete("cache-notes")
        text = page.read_text(encoding="utf-8")
        assert "Our Sentinel runs on three hosts." in text
        assert "graphmem:begin generated" not in text and "cache-notes" not in text
        row = kb.store.get_page("redis-sentinel")
        assert row is not None and row.subject is None  # now a page of its own: graphmem no longer writes it
        assert check(kb.ctx)["ok"]


def test_ingest_prune_takes_the_pages_of_a_removed_file_too(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha notes\n\nThe Route Planner reads from the Redis cache.\n", encoding="utf-8")
    (notes / "b.md").write_text("# Beta notes\n\nThe Dispatch API uses the Route Planner.\n", encoding="utf-8")
    with _kb(tmp_path) as kb:
        kb.ingest_paths([notes])
        assert any(k.startswith("summary/doc-alpha-notes") for k in _files(tmp_path))
        (notes / "a.md").unlink()
        kb.ingest_paths([notes], prune=True)
        files = _files(tmp_path)
        assert not any(k.startswith("summary/doc-alpha-notes") for k in files)
        assert not any("Alpha notes" in t for t in files.values())
        assert check(kb.ctx)["ok"]


def test_front_matter_a_person_added_keeps_the_page_and_their_keys(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        _ingest(kb)
    page = tmp_path / "kb" / "wiki" / "entity" / "redis-sentinel.md"
    page.write_text(page.read_text(encoding="utf-8").replace("category: entity", "category: entity\nowner: ops-team"),
                    encoding="utf-8")
    with _kb(tmp_path) as kb:
        kb.documents.delete("cache-notes")
    text = page.read_text(encoding="utf-8")
    assert "owner: ops-team" in text and "graphmem:begin generated" not in text


def test_a_page_linked_only_through_a_relation_stops_citing_the_document(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        kb.ingest_with_content("cache-notes", "Cache notes", "", TEXT1, E1, R1)
        # d2 lists only the Dispatch API; its relation's other end, the Route Planner, is in the graph already
        text = "The Dispatch API uses the Route Planner."
        kb.ingest_with_content("d2", "Dispatch two", "", text, [E2[0]], [R2[0]])
        assert "[[doc-dispatch-two]]" in _files(tmp_path)["entity/route-planner.md"]
        kb.documents.delete("d2")
        planner = _files(tmp_path)["entity/route-planner.md"]
        assert "doc-dispatch-two" not in planner and "Dispatch API" not in planner


def test_a_page_not_in_utf8_is_left_and_said(tmp_path: Path) -> None:
    import warnings as w

    with _kb(tmp_path) as kb:
        _ingest(kb)
    page = tmp_path / "kb" / "wiki" / "entity" / "redis-sentinel.md"
    page.write_bytes(page.read_bytes() + b"caf\xe9\n")
    with _kb(tmp_path) as kb, w.catch_warnings(record=True) as caught:
        w.simplefilter("always")
        kb.documents.delete("cache-notes")
    assert any("not UTF-8 text, left as it is" in str(c.message) for c in caught)
    assert page.read_bytes().endswith(b"caf\xe9\n")


def test_with_auto_pages_off_the_pages_made_earlier_are_marked_and_sync_fixes_them(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        _ingest(kb)
    off = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"},
                                                 "wiki": {"auto_pages": False, "entity_min_documents": 1}})
    with off:
        off.documents.delete("cache-notes")
        assert "cache-notes" in _files(tmp_path)["entity/route-planner.md"]  # not regenerated: pages are off
        assert "entity:" + off.graph.find("Route Planner").id in off.store.wiki_dirty(100)
    with _kb(tmp_path) as kb:  # pages on again: the marks are caught up
        kb.wiki.flush()
        assert "cache-notes" not in _files(tmp_path)["entity/route-planner.md"]
        assert check(kb.ctx)["ok"]


def test_with_pages_off_from_the_start_a_delete_makes_no_page(tmp_path: Path) -> None:
    off = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False, "entity_min_documents": 1}}
    with graphmem.open(tmp_path / "kb", config=off) as kb:
        _ingest(kb)
        kb.documents.delete("cache-notes")
        assert kb.store.wiki_dirty(10) == []
        kb.ingest_with_content("later", "Later", "", "The Dispatch API is fine.")
        kb.wiki.flush()
    assert not [name for name in _files(tmp_path) if name.startswith(("entity/", "summary/"))]
