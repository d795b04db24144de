"""Mini Context Graph's names over a graphmem knowledge base.

The seed's code runs after one import change::

    # from scripts.contextgraph import ContextGraphSkill
    # from scripts.tools import wiki_store, documents_store
    from graphmem.compat.mini_context_graph import ContextGraphSkill, wiki_store, documents_store

The seed kept JSON files under ``$MINI_CONTEXT_GRAPH_BASE`` (default: the current folder); here
everything lives in one knowledge base folder: ``ContextGraphSkill(home=...)``, else
``$GRAPHMEM_HOME``, else ``./.graphmem``. ``wiki_store`` and ``documents_store`` work on the
knowledge base of the last ``ContextGraphSkill`` created (or the default one when none was),
as the seed's modules worked on its one data folder.

Results keep the seed's keys with their meaning (``doc_id``, ``chunk_count``, ``nodes_added``,
``edges_added``; ``query``, ``subgraph``, ``supporting_documents``, ``evidence_chain``; ...) and
add graphmem's (``warnings``, spans, versions). The seed returned ``None`` for a document or
chunk it did not have; so do ``documents_store.get_document`` and ``get_chunk``. Knowledge
bases opened here are closed at interpreter exit, or by :func:`close`.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import graphmem

from ..errors import InvalidInput, NotFound
from ..kb import KnowledgeBase, default_home

__all__ = ["ContextGraphSkill", "wiki_store", "documents_store", "close"]

_open_kbs: dict[Path, KnowledgeBase] = {}
_current: Path | None = None
_lock = threading.Lock()


def _resolve(home: str | os.PathLike[str] | None) -> Path:
    if home is not None and (not isinstance(home, (str, os.PathLike)) or not str(os.fspath(home)).strip()):
        raise InvalidInput(f"home: expected a knowledge base folder (a path), got {home!r}")
    return Path(home if home is not None else default_home()).expanduser().resolve()


def _kb_at(path: Path) -> KnowledgeBase:
    """The one open knowledge base of ``path`` in this process (opened on first use): the seed's
    module-level stores shared one data folder, so the skill and both stores share one here."""
    with _lock:
        kb = _open_kbs.get(path)
        if kb is None:
            kb = _open_kbs[path] = graphmem.open(path)
        return kb


def _current_kb() -> KnowledgeBase:
    return _kb_at(_current if _current is not None else _resolve(None))


def close() -> None:
    """Close every knowledge base this module opened (pending wiki pages are written first)."""
    global _current
    with _lock:
        kbs = list(_open_kbs.values())
        _open_kbs.clear()
        _current = None
    for kb in kbs:
        kb.close()


atexit.register(close)


class ContextGraphSkill:
    """The seed's orchestration class: ingest with agent-supplied extraction, query the graph.

    ``home`` picks the knowledge base folder (default ``$GRAPHMEM_HOME`` or ``./.graphmem``);
    creating a skill also points ``wiki_store`` and ``documents_store`` at it.
    """

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        global _current
        self.home = _resolve(home)
        _kb_at(self.home)  # open (or create) now: a bad folder fails here, not on first use
        _current = self.home

    @property
    def kb(self) -> KnowledgeBase:
        """The graphmem knowledge base behind this skill (for everything the seed lacked)."""
        return _kb_at(self.home)

    def ingest_with_content(self, doc_id: str, title: str, source: str, raw_content: str,
                            entities: Sequence[Mapping[str, Any]] | None = None,
                            relations: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """Store a document with its entities and relations: ``{doc_id, chunk_count,
        nodes_added, edges_added, warnings, ...}`` (see ``KnowledgeBase.ingest_with_content``)."""
        return self.kb.ingest_with_content(doc_id, title, source, raw_content, entities, relations)

    def add_node(self, name: str, node_type: str) -> str:
        """Add an entity without a source document; returns its id."""
        return self.kb.add_node(name, node_type)

    def add_edge(self, source_name: str, target_name: str, relation: str, confidence: float = 1.0) -> str:
        """Add a relation between two named entities; returns its id. Unlike the seed, which
        returned silently, a relation below the confidence floor or naming an unknown entity
        raises a graphmem error that says so."""
        return self.kb.add_edge(source_name, target_name, relation, confidence)

    def query(self, query: str) -> dict[str, Any]:
        """The subgraph around the entities ``query`` names: ``{"nodes": {id: {...}}, "edges": [...]}``."""
        return self.kb.query(query)

    def query_with_evidence(self, query: str) -> dict[str, Any]:
        """``{query, subgraph, supporting_documents, evidence_chain, ...}``."""
        return self.kb.query_with_evidence(query)


class _WikiStore:
    """The seed's ``wiki_store`` module: page I/O, ``index.md`` and ``log.md``, search, lint."""

    def write_page(self, category: str, title: str, content: str, summary: str | None = None,
                   tags: Sequence[str] | None = None,
                   source_documents: Sequence[str] | None = None) -> dict[str, Any]:
        """Create or replace a page; returns ``{slug, category, path, title, ...}``."""
        return _current_kb().wiki.write_page(category, title, content, summary=summary, tags=tags,
                                             source_documents=source_documents).to_dict()

    def read_page(self, category: str, title: str) -> dict[str, Any]:
        """A page with its front matter and ``content`` (NotFound names how to list pages)."""
        return _current_kb().wiki.read_page(category, title).to_dict()

    def search_wiki(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        """``[{slug, category, path, snippet, ...}]``, best first."""
        return [h.to_dict() for h in _current_kb().wiki.search_wiki(query, k)]

    def list_pages(self, category: str | None = None) -> list[dict[str, Any]]:
        """Pages (of one category, or all): ``[{slug, category, title, path, summary, ...}]``."""
        return [p.to_dict() for p in _current_kb().wiki.list_pages(category)]

    def get_log(self, last_n: int = 20) -> list[dict[str, Any]]:
        """The last ``last_n`` entries of ``log.md``, oldest first."""
        return [e.to_dict() for e in _current_kb().wiki.get_log(last_n)]

    def lint_wiki(self) -> dict[str, Any]:
        """``{orphan_pages, missing_pages, broken_wikilinks, isolated_pages, ...}``."""
        return _current_kb().wiki.lint_wiki().to_dict()


def _chunk_out(chunk: Any) -> dict[str, Any]:
    return {"chunk_id": chunk.chunk_id, "doc_id": chunk.doc_id, "version": chunk.version,
            "index": chunk.ordinal, "start": chunk.start, "end": chunk.end, "text": chunk.text}


class _DocumentsStore:
    """The seed's ``documents_store`` module: the raw sources and their chunks."""

    def list_documents(self) -> list[dict[str, Any]]:
        """Every document (latest version): ``[{doc_id, title, source, version, chunk_count, created_at}]``."""
        return [{"doc_id": d.doc_id, "title": d.title, "source": d.source, "version": d.version,
                 "chunk_count": d.chunk_count, "created_at": d.created_at}
                for d in _current_kb().documents.list()]

    def get_document(self, doc_id: str) -> dict[str, Any] | None:
        """``{doc_id, title, source, content, version, metadata, created_at, chunks: [...]}``, or
        None when there is no such document (as in the seed)."""
        docs = _current_kb().documents
        try:
            doc = docs.get(doc_id)
        except NotFound:
            return None
        return {"doc_id": doc.doc_id, "title": doc.title, "source": doc.source, "content": doc.content,
                "version": doc.version, "metadata": doc.metadata, "created_at": doc.created_at,
                "chunks": [_chunk_out(c) for c in docs.chunks(doc.doc_id, doc.version)]}

    def get_chunk(self, chunk_id: str) -> dict[str, Any] | None:
        """``{chunk_id, doc_id, version, index, start, end, text}``, or None when absent."""
        try:
            return _chunk_out(_current_kb().documents.chunk(chunk_id))
        except NotFound:
            return None

    def search_chunks(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        """Full-text (BM25) search over chunks: ``[{chunk_id, doc_id, text, title, score, snippet, ...}]``."""
        return [{**_chunk_out(h.chunk), "title": h.title, "score": h.score, "snippet": h.snippet}
                for h in _current_kb().documents.search(query, k)]


wiki_store = _WikiStore()
documents_store = _DocumentsStore()
