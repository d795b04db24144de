"""Generated wiki pages regenerated once per batch are byte-identical to pages regenerated after
every document (issue 16): the same corpus goes into two knowledge bases with a frozen clock,
one regenerating its pages after each ingest, the other once per batch (``kb.wiki.deferred``),
through several batches, new versions that drop claims, a page a person edited, and a delete.
After every step both wikis hold the same files, byte for byte, and the same page rows."""

from __future__ import annotations

import random
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import graphmem

_PEOPLE = ["Ada Lovelace", "Charles Babbage", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov",
           "Donald Knuth", "Frances Allen", "John Backus", "Margaret Hamilton", "Ken Thompson", "Dennis Ritchie"]
_ORGS = ["Analytical Society", "Bell Labs", "Harvard Computation Lab", "Bletchley Park", "IBM Research",
         "MIT Instrumentation Lab"]
_PLACES = ["London", "Cambridge", "Princeton", "Murray Hill", "Boston", "Zurich"]
_THINGS = ["Analytical Engine", "COBOL", "ALGOL", "Unix", "structured programming", "Fortran", "garbage collection",
           "memory leaks"]
_RELS = [("works for", "person", "org"), ("located in", "org", "place"), ("created", "person", "thing"),
         ("causes", "thing", "thing"), ("prevents", "thing", "thing"), ("influenced", "person", "person")]
_POOLS = {"person": _PEOPLE, "org": _ORGS, "place": _PLACES, "thing": _THINGS}
_TYPES = {"person": "person", "org": "organization", "place": "location", "thing": "concept"}


def _doc(i: int, version: int = 1) -> dict[str, Any]:
    """A document about a few entities (drawn with skew, so some recur in many documents) and
    the relations between them, each sentence its own supporting text."""
    rng = random.Random(i * 31 + version)
    sentences: list[str] = []
    ents: dict[str, str] = {}
    rels: list[dict[str, Any]] = []
    for _ in range(rng.randint(2, 5)):
        rel, a_kind, b_kind = rng.choice(_RELS)
        pool_a, pool_b = _POOLS[a_kind], _POOLS[b_kind]
        a = pool_a[min(int(rng.expovariate(0.5)), len(pool_a) - 1)]
        b = rng.choice([x for x in pool_b if x != a])
        s = f"{a} {rel} {b}."
        if s in sentences:
            continue
        sentences.append(s)
        ents[a], ents[b] = _TYPES[a_kind], _TYPES[b_kind]
        rels.append({"source": a, "target": b, "type": rel, "confidence": round(0.6 + rng.random() * 0.4, 2),
                     "supporting_text": s})
    lone = f"Doc {i} also mentions {_PLACES[i % len(_PLACES)]} once."
    sentences.append(lone)
    ents.setdefault(_PLACES[i % len(_PLACES)], "location")
    text = " ".join(sentences) + f"\n\nNotes for version {version} of note {i}.\n"
    entities = [{"name": n, "type": t, "supporting_text": next(s for s in sentences if n in s)}
                for n, t in ents.items()]
    title = f"Note {i}" if i % 7 else "Bell Labs"  # a summary titled like an entity
    return {"doc_id": f"note-{i}", "title": title, "source": f"notes/{i}.md", "raw_content": text,
            "entities": entities, "relations": rels}


def _open(home: Path) -> graphmem.KnowledgeBase:
    frozen = datetime(2026, 12, 1, 12, 0, 0, tzinfo=timezone.utc)
    return graphmem.open(home, config={"embeddings": {"model": "none"}}, clock=lambda: frozen)


def _wiki_state(kb: graphmem.KnowledgeBase) -> tuple[dict[str, bytes], list[tuple[Any, ...]]]:
    root = kb.wiki.dir
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
             if p.is_file() and p.name != "log.md"}
    rows = [(p.slug, p.path, p.subject, p.title, p.summary, p.content_hash, p.front_matter, p.tags, p.entity_type,
             p.contradictions, p.stub) for p in kb.store.list_pages()]
    return files, rows


def _ingest(kb: graphmem.KnowledgeBase, docs: list[dict[str, Any]], batched: bool) -> None:
    if batched:
        with kb.wiki.deferred():
            for d in docs:
                kb.ingest_with_content(**d)
    else:
        for d in docs:
            kb.ingest_with_content(**d)


def _same(per_doc: graphmem.KnowledgeBase, batched: graphmem.KnowledgeBase, step: str) -> None:
    """Every file but the summaries is identical as regenerated; then (the summaries of earlier
    documents are not marked again when a later one raises a shared relation's confidence or
    adds its opposite, in either mode) all summaries are brought up to date in both, and every
    file and page row is identical."""
    files_a, _ = _wiki_state(per_doc)
    files_b, _ = _wiki_state(batched)
    assert sorted(files_a) == sorted(files_b), step
    for rel in files_a:
        if not rel.startswith("summary/"):
            assert files_a[rel] == files_b[rel], f"{step}: {rel} differs"
    for kb in (per_doc, batched):
        kb.store.mark_wiki_dirty([f"doc:{d.doc_id}" for d in kb.documents.list()])
        kb.wiki.flush()
    files_a, rows_a = _wiki_state(per_doc)
    files_b, rows_b = _wiki_state(batched)
    assert sorted(files_a) == sorted(files_b), step
    for rel in files_a:
        assert files_a[rel] == files_b[rel], f"{step}, summaries refreshed: {rel} differs"
    assert rows_a == rows_b, step


def test_pages_regenerated_per_batch_equal_pages_regenerated_per_document(tmp_path: Path) -> None:
    per_doc, batched = _open(tmp_path / "per-doc"), _open(tmp_path / "batched")
    try:
        kbs = ((per_doc, False), (batched, True))
        for lo, hi in ((0, 12), (12, 30), (30, 45)):
            for kb, mode in kbs:
                _ingest(kb, [_doc(i) for i in range(lo, hi)], mode)
            _same(per_doc, batched, f"batch {lo}-{hi}")
        files, _ = _wiki_state(per_doc)
        assert sum(1 for f in files if f.startswith("entity/")) >= 15 and len(files) > 60  # a real wiki
        assert any(b"## Contradictions" in v for v in files.values())

        # A person edits a generated entity page above graphmem's block; the next regeneration keeps it.
        page = next(p for p in per_doc.store.list_pages("entity") if p.subject and "Bell Labs" in p.title)
        for kb, _ in kbs:
            path = kb.wiki.dir / page.path
            path.write_text(path.read_text(encoding="utf-8").replace(
                "# Bell Labs\n", "# Bell Labs\n\nWritten by hand: the lab in New Jersey.\n"), encoding="utf-8")
            kb.wiki.sync()
        # New versions (claims dropped and added), re-ingesting an unchanged one, and new documents.
        again = [_doc(i, version=2) for i in (3, 7, 14)] + [_doc(20)] + [_doc(i) for i in range(45, 52)]
        for kb, mode in kbs:
            _ingest(kb, again, mode)
        _same(per_doc, batched, "new versions")
        for kb, _ in kbs:
            assert b"Written by hand: the lab in New Jersey." in (kb.wiki.dir / page.path).read_bytes()

        # A deleted document, then one more batch that touches the same entities.
        for kb, mode in kbs:
            kb.documents.delete("note-5")
            kb.wiki.flush()
            _ingest(kb, [_doc(i) for i in range(52, 60)], mode)
        _same(per_doc, batched, "after a delete")
    finally:
        per_doc.close()
        batched.close()


@pytest.mark.parametrize("n", [1, 3])
def test_unchanged_pages_are_not_rewritten(tmp_path: Path, n: int) -> None:
    """Re-running a regeneration with nothing new writes no page file (mtimes stay) and logs nothing."""
    kb = _open(tmp_path / "kb")
    try:
        _ingest(kb, [_doc(i) for i in range(10)], batched=True)
        before = {p: p.stat().st_mtime_ns for p in kb.wiki.dir.rglob("*.md") if p.name != "log.md"}
        log = (kb.wiki.dir / "log.md").read_bytes()
        for _ in range(n):
            kb.store.mark_wiki_dirty([f"doc:note-{i}" for i in range(10)])
            assert kb.wiki.flush()["pages"] == 0
        assert {p: p.stat().st_mtime_ns for p in before} == before
        assert (kb.wiki.dir / "log.md").read_bytes() == log
    finally:
        kb.close()


def test_front_matter_from_the_row_only_for_files_as_indexed(tmp_path: Path) -> None:
    """Regeneration takes a page's front matter from its row instead of parsing graphmem's own
    YAML again: that is what the file says while the file is as indexed; a file changed on disk
    since (not synced yet) is parsed, and what a person added there survives the rewrite."""
    from graphmem.frontmatter import load_front_matter
    from graphmem.wiki.markdown import split_front_matter

    kb = _open(tmp_path / "kb")
    try:
        _ingest(kb, [_doc(i) for i in range(20)], batched=True)
        pages = [p for p in kb.store.list_pages() if p.subject]
        assert len(pages) > 20
        for p in pages:
            text = (kb.wiki.dir / p.path).read_text(encoding="utf-8")
            raw = text.split("---\n", 2)[1]
            assert load_front_matter(raw) == p.front_matter, p.path
        page = next(p for p in kb.store.list_pages("entity") if p.subject and p.title == "Ada Lovelace")
        path = kb.wiki.dir / page.path
        path.write_text(path.read_text(encoding="utf-8").replace("---\n", "---\nreviewed: yes\n", 1),
                        encoding="utf-8")
        kb.ingest_with_content("extra", "Extra", "extra.md", "Ada Lovelace created ALGOL.",
                               [{"name": "Ada Lovelace", "type": "person", "supporting_text": "Ada Lovelace"},
                                {"name": "ALGOL", "type": "concept", "supporting_text": "ALGOL"}],
                               [{"source": "Ada Lovelace", "target": "ALGOL", "type": "created",
                                 "confidence": 0.9, "supporting_text": "Ada Lovelace created ALGOL."}])
        text = path.read_text(encoding="utf-8")
        fm, body, _, error = split_front_matter(text)
        assert error is None and fm["reviewed"] is True and "[[doc-extra]]" in body
    finally:
        kb.close()


def test_names_seen_once_get_no_page_unless_a_person_wrote_one(tmp_path: Path) -> None:
    """The bulk check for entities that get no page (one document, no relation) keeps both
    rules: no page of their own, but a hand-written page of the same name gets the block."""
    kb = _open(tmp_path / "kb")
    try:
        kb.wiki.write_page("entity", "Zurich", "# Zurich\n\nMy notes on the city.\n")
        ents = [{"name": n, "type": "location", "supporting_text": n} for n in ("Zurich", "Basel")]
        kb.ingest_with_content("trip", "Trip", "trip.md", "From Basel to Zurich by train.", ents, [])
        assert sorted(p.slug for p in kb.store.list_pages("entity")) == ["zurich"]
        text = (kb.wiki.dir / "entity" / "zurich.md").read_text(encoding="utf-8")
        assert "My notes on the city." in text and "[[doc-trip]]" in text
        assert kb.store.get_page("zurich").subject is not None
        summary = (kb.wiki.dir / "summary" / "doc-trip.md").read_text(encoding="utf-8")
        assert "[[zurich]]" in summary and "**Basel**" in summary
    finally:
        kb.close()
