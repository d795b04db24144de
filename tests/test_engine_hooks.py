"""The engine receives a Context; what it triggers above itself goes through named hooks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.config import load_config
from graphmem.context import (
    AFTER_INGEST,
    DELETE_DOCUMENT,
    FIND_ENTITY,
    SEARCH_WIKI,
    SKILLS_CHANGED,
    WIKI_DEFERRED,
    WIKI_FLUSH,
    WIKI_FLUSH_DUE,
    Context,
    Hooks,
)
from graphmem.embeddings.manager import EmbeddingManager
from graphmem.extraction import parse_extraction
from graphmem.ingest.core import ingest_document
from graphmem.ingest.pipeline import ingest_paths
from graphmem.skills.build import build_skills
from graphmem.store import open_store

TEXT = "Alice founded Acme in Paris."
ENTITIES = [{"name": "Alice", "type": "person", "supporting_text": "Alice founded Acme"},
            {"name": "Acme", "type": "organization", "supporting_text": "Alice founded Acme"}]
RELATIONS = [{"source": "Alice", "target": "Acme", "type": "founded", "confidence": 0.9,
              "supporting_text": "Alice founded Acme"}]


@pytest.fixture
def bare_ctx(tmp_path: Path) -> Any:
    """A Context with no layer above it: no faces, no hooks."""
    home = tmp_path / "bare"
    home.mkdir()
    cfg = load_config(home, environ={"GRAPHMEM_EMBED_MODEL": "none"})
    store = open_store(home, busy_timeout=cfg.store.busy_timeout)
    ctx = Context(home=home, config=cfg, store=store)
    ctx.embeddings = EmbeddingManager(ctx)
    yield ctx
    store.close()


def test_hooks_run_in_registration_order_and_default_when_absent():
    hooks = Hooks()
    assert hooks.call("x", 1) == [] and hooks.first("x", default="none") == "none" and not hooks.has("x")
    hooks.register("x", lambda v: v + 1)
    hooks.register("x", lambda v: v * 10)
    assert hooks.has("x") and hooks.call("x", 2) == [3, 20] and hooks.first("x", 2) == 3


def test_the_engine_works_on_a_bare_context(bare_ctx):
    res = ingest_document(bare_ctx, "d", "T", "s", TEXT, parse_extraction(ENTITIES, RELATIONS))
    assert (res.status, res.nodes_added, res.edges_added) == ("added", 2, 1)
    assert bare_ctx.store.get_document("d") is not None
    assert bare_ctx.store.list_pages() == []  # no wiki above it: no pages, and no error


def test_prune_deletes_only_through_the_delete_hook(bare_ctx, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha text.\n", encoding="utf-8")
    ingest_paths(bare_ctx, [docs], extractor="none")
    (docs / "a.md").unlink()
    assert ingest_paths(bare_ctx, [docs], extractor="none", prune=True).pruned == []  # nothing can delete
    deleted: list[str] = []
    bare_ctx.hooks.register(DELETE_DOCUMENT, lambda doc_id: deleted.append(doc_id) or {"doc_id": doc_id})
    summary = ingest_paths(bare_ctx, [docs], extractor="none", prune=True)
    assert summary.pruned == deleted and len(deleted) == 1


def test_a_knowledge_base_registers_every_hook(tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        names = (AFTER_INGEST, WIKI_DEFERRED, WIKI_FLUSH, WIKI_FLUSH_DUE, DELETE_DOCUMENT, SKILLS_CHANGED,
                 FIND_ENTITY, SEARCH_WIKI)
        assert [n for n in names if not kb.ctx.hooks.has(n)] == []
        seen: list[tuple[str, list[str], list[str]]] = []
        kb.ctx.hooks.register(AFTER_INGEST, lambda doc_id, ids, warnings: seen.append((doc_id, list(ids), warnings)))
        kb.ingest_with_content("d", "T", "s", TEXT, ENTITIES, RELATIONS)
        assert [(d, len(ids)) for d, ids, _ in seen] == [("d", 2)]
        assert {p["slug"] for p in kb.wiki.list_pages()} >= {"alice", "acme"}  # the wiki's own hook ran first
        assert kb.ctx.hooks.first(FIND_ENTITY, "alice").name == "Alice"
        hits = kb.ctx.hooks.first(SEARCH_WIKI, "Alice", 5)
        assert hits and hits[0]["slug"] in {"alice", "doc-t"}


def test_a_skills_build_tells_the_skills_face(tmp_path):
    root = tmp_path / "skills" / "c" / "x"
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: x\ndescription: does x\n---\nBody.\n", encoding="utf-8")
    with graphmem.open(tmp_path / "kb") as kb:
        assert len(kb.skills.index()) == 0  # cached by the face
        calls: list[int] = []
        kb.ctx.hooks.register(SKILLS_CHANGED, lambda: calls.append(1))
        res = build_skills(kb.ctx, [tmp_path / "skills"])
        assert res.added == ["c/x"] and calls == [1]
        assert [e.id for e in kb.skills.index().entries] == ["c/x"]  # the face's hook dropped its cache
