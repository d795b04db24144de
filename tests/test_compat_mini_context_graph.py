"""The Mini Context Graph seed's own examples through graphmem.compat.mini_context_graph.

The quick start, the query_with_evidence example and the lint call are the seed's SKILL.md and
README code with only the import line changed; the assertions are the shapes those documents
promise (and what graphmem adds must not change them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem.compat import mini_context_graph
from graphmem.errors import InvalidInput, NotFound

SRC = Path(__file__).resolve().parent.parent / "src" / "graphmem"


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Each test gets its own default knowledge base; every one opened is closed afterwards."""
    home = tmp_path / "kb"
    monkeypatch.setenv("GRAPHMEM_HOME", str(home))
    yield home
    mini_context_graph.close()


def run_quick_start() -> dict:
    """The seed's "Quick Start for Agents", verbatim after the import change."""
    from graphmem.compat.mini_context_graph import ContextGraphSkill, wiki_store

    skill = ContextGraphSkill()

    entities = [
        {"name": "memory leak",   "type": "issue",  "supporting_text": "memory leaks cause crashes"},
        {"name": "system crash",  "type": "issue",  "supporting_text": "system crashes due to memory leaks"},
    ]
    relations = [
        {"source": "memory leak", "target": "system crash", "type": "causes",
         "confidence": 1.0, "supporting_text": "System crashes due to memory leaks."},
    ]

    result = skill.ingest_with_content(
        doc_id="doc_001",
        title="System Crash Analysis",
        source="/docs/incident_report.pdf",
        raw_content="System crashes due to memory leaks. Memory leaks occur when objects are not released.",
        entities=entities,
        relations=relations,
    )

    wiki_store.write_page(
        category="summary",
        title="System Crash Analysis Summary",
        content="""---
title: System Crash Analysis
source_document: doc_001
tags: [summary, incident]
---

# System Crash Analysis

**Source:** incident_report.pdf

## Key Claims

- [[memory-leak]] causes [[system-crash]] (confidence: 1.0)

## Entities

- [[memory-leak]] (issue)
- [[system-crash]] (issue)
""",
        summary="Incident report: memory leaks cause system crashes.",
    )

    answer = skill.query_with_evidence("Why does the system crash?")
    pages = wiki_store.search_wiki("memory leak")
    return {"ingest": result, "answer": answer, "pages": pages}


def test_quick_start_returns_the_seeds_shapes(_fresh: Path) -> None:
    out = run_quick_start()
    ingest = out["ingest"]
    # The seed's documented result, key for key (graphmem adds warnings, status, version, ...).
    assert {k: ingest[k] for k in ("doc_id", "chunk_count", "nodes_added", "edges_added")} == {
        "doc_id": "doc_001", "chunk_count": 1, "nodes_added": 2, "edges_added": 1}
    # The seed's first entity quotes text that is not in the document: stored, and said so.
    assert any("memory leak" in w and "not found" in w for w in ingest["warnings"])

    answer = out["answer"]
    assert {"query", "subgraph", "supporting_documents", "evidence_chain"} <= set(answer)
    assert answer["query"] == "Why does the system crash?"
    names = {n["name"] for n in answer["subgraph"]["nodes"].values()}
    assert names == {"memory leak", "system crash"}
    assert [e["type"] for e in answer["subgraph"]["edges"]] == ["causes"]
    doc = answer["supporting_documents"][0]
    assert (doc["doc_id"], doc["doc_title"]) == ("doc_001", "System Crash Analysis")
    assert doc["supporting_chunks"][0]["chunk_id"] == "doc_001:v1:c0"
    assert doc["supporting_chunks"][0]["text"].startswith("System crashes due to memory leaks.")
    assert "memory leak --[causes]--> system crash" in answer["evidence_chain"]

    pages = out["pages"]
    assert pages and all({"slug", "category", "path", "snippet"} <= set(p) for p in pages)
    assert "memory-leak" in {p["slug"] for p in pages}
    # Everything landed in the knowledge base GRAPHMEM_HOME names (the seed: its data folder).
    assert (_fresh / "graph.db").is_file()
    assert (_fresh / "wiki" / "summary").is_dir()


def test_the_agent_written_summary_page_is_readable_and_listed() -> None:
    from graphmem.compat.mini_context_graph import wiki_store

    run_quick_start()
    page = wiki_store.read_page("summary", "System Crash Analysis Summary")
    assert "[[memory-leak]] causes [[system-crash]]" in page["content"]
    assert page["summary"] == "Incident report: memory leaks cause system crashes."
    listed = {p["title"] for p in wiki_store.list_pages("summary")}
    assert "System Crash Analysis Summary" in listed
    log = wiki_store.get_log(50)
    assert any(e["operation"] == "write" and "system-crash-analysis-summary" in e["target"] for e in log)


def test_the_seeds_lint_call() -> None:
    from graphmem.compat.mini_context_graph import wiki_store

    run_quick_start()
    issues = wiki_store.lint_wiki()
    assert {"orphan_pages", "missing_pages", "broken_wikilinks", "isolated_pages"} <= set(issues)
    # The summary's links all name pages that exist (the entity pages graphmem wrote).
    assert not issues["broken_wikilinks"]


def test_query_example_from_the_readme() -> None:
    """README "Query": wiki fast path, then the graph with evidence."""
    from graphmem.compat.mini_context_graph import ContextGraphSkill, wiki_store

    run_quick_start()
    skill = ContextGraphSkill()
    pages = wiki_store.search_wiki("memory leak system crash")
    result = skill.query_with_evidence("Why does the system crash?")
    assert pages
    assert result["supporting_documents"][0]["doc_title"] == "System Crash Analysis"
    assert result["subgraph"]["nodes"] and result["subgraph"]["edges"]
    written = wiki_store.write_page(category="topic", title="Why System Crashes",
                                    content=result["evidence_chain"], summary="memory leaks")
    assert written["category"] == "topic" and Path(written["path"]).is_file()


def test_add_node_add_edge_and_query_without_a_document() -> None:
    from graphmem.compat.mini_context_graph import ContextGraphSkill

    skill = ContextGraphSkill()
    wheel = skill.add_node("wheel", "component")
    car = skill.add_node("car", "system")
    assert wheel != car and wheel.startswith("n_")
    skill.add_edge("wheel", "car", "is part of", 0.9)
    sub = skill.query("what is the wheel part of?")
    assert {n["name"] for n in sub["nodes"].values()} == {"wheel", "car"}
    edge = sub["edges"][0]
    assert (edge["source_name"], edge["type"], edge["target_name"]) == ("car", "contains", "wheel")
    # The seed dropped a weak relation silently; graphmem says why it refuses it.
    with pytest.raises(InvalidInput, match="confidence"):
        skill.add_edge("wheel", "car", "is part of", 0.3)
    with pytest.raises(NotFound):
        skill.add_edge("wheel", "boat", "is part of", 0.9)


def test_documents_store_lists_reads_and_searches_the_raw_sources() -> None:
    from graphmem.compat.mini_context_graph import documents_store

    run_quick_start()
    docs = documents_store.list_documents()
    assert [(d["doc_id"], d["title"], d["chunk_count"]) for d in docs] == [("doc_001", "System Crash Analysis", 1)]
    doc = documents_store.get_document("doc_001")
    assert doc is not None and doc["source"] == "/docs/incident_report.pdf"
    assert doc["content"].startswith("System crashes due to memory leaks.")
    assert [c["chunk_id"] for c in doc["chunks"]] == ["doc_001:v1:c0"]
    chunk = documents_store.get_chunk("doc_001:v1:c0")
    assert chunk is not None and chunk["doc_id"] == "doc_001"
    assert chunk["text"] == doc["content"][chunk["start"]:chunk["end"]]
    hits = documents_store.search_chunks("objects not released")
    assert hits and hits[0]["chunk_id"] == "doc_001:v1:c0" and hits[0]["score"] > 0
    # The seed answered None for what it did not have (its query_with_evidence relies on that).
    assert documents_store.get_document("doc_404") is None
    assert documents_store.get_chunk("doc_404:v1:c0") is None


def test_stores_follow_the_skill_home(tmp_path: Path, _fresh: Path) -> None:
    from graphmem.compat.mini_context_graph import ContextGraphSkill, documents_store, wiki_store

    other = tmp_path / "elsewhere"
    skill = ContextGraphSkill(home=other)
    skill.ingest_with_content("doc_a", "A", "a.txt", "Alpha talks to Beta.", [], [])
    wiki_store.write_page("topic", "Alpha notes", "About alpha.")
    assert (other / "wiki" / "topic" / "alpha-notes.md").is_file()
    assert [d["doc_id"] for d in documents_store.list_documents()] == ["doc_a"]
    assert not (_fresh / "graph.db").exists()  # the default knowledge base was never touched
    assert skill.kb.home == other.resolve()


def test_bad_input_is_a_graphmem_error_and_writes_nothing() -> None:
    from graphmem.compat.mini_context_graph import ContextGraphSkill, documents_store

    skill = ContextGraphSkill()
    with pytest.raises(InvalidInput, match=r"relations\[0\]\.confidence"):
        skill.ingest_with_content("doc_x", "X", "x.txt", "Text.", [],
                                  [{"source": "a", "target": "b", "type": "causes", "confidence": 7,
                                    "supporting_text": "Text."}])
    assert documents_store.get_document("doc_x") is None


def test_close_closes_every_knowledge_base_opened(tmp_path: Path) -> None:
    from graphmem.compat.mini_context_graph import ContextGraphSkill

    skill = ContextGraphSkill(home=tmp_path / "one")
    kb = skill.kb
    mini_context_graph.close()
    # A new use opens the folder again (the closed handle is not reused).
    assert skill.kb is not kb
    assert skill.kb.documents.list() == []


def test_nothing_in_graphmem_imports_compat() -> None:
    """compat is an interface: it may import the library; the library never imports it. The CLI, an
    interface beside it, may: `skills build --backend` reuses SkillGraph's backend names from it."""
    offenders = []
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC).parts
        if "compat" in parts or parts[0] == "cli":
            continue
        text = path.read_text(encoding="utf-8")
        if "graphmem.compat" in text or "from .compat" in text or "from ..compat" in text:
            offenders.append(str(path.relative_to(SRC)))
    assert offenders == []


def test_a_home_that_is_not_a_path_is_invalid_input() -> None:
    from graphmem.compat.mini_context_graph import ContextGraphSkill
    from graphmem.errors import InvalidInput

    for bad in (5, "", "   "):
        with pytest.raises(InvalidInput, match="home: expected a knowledge base folder"):
            ContextGraphSkill(home=bad)  # type: ignore[arg-type]
