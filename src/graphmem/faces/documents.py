"""``kb.documents``: immutable, versioned, chunked documents and full-text search over them."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..context import AFTER_DELETE
from ..errors import InvalidInput, NotFound
from ..extraction import Extraction
from ..ingest.core import IngestResult, ingest_document
from ..ingest.extractors.base import ExtractionError, SourceDocument, validate_extraction
from ..ingest.pipeline import make_extractor
from ..models import Chunk, ChunkHit, Document
from ..text import content_hash
from ..validate import check_query, checked_inputs
from .results import DocumentDeleted

if TYPE_CHECKING:
    from .host import FaceHost

__all__ = ["Documents"]


@checked_inputs("documents")
class Documents:
    """The documents face of a knowledge base."""

    def __init__(self, kb: FaceHost) -> None:
        self._kb = kb

    def add(
        self,
        content: str,
        doc_id: str | None = None,
        title: str | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> IngestResult:
        """Add a document without extraction (chunks only).

        ``doc_id`` defaults to ``doc_`` + the first 12 hex digits of the content hash.
        The same content again is a no-op (``status == "unchanged"``); new content (or a new
        title) under the same id becomes a new version.
        """
        if doc_id is None:
            if not isinstance(content, str):
                raise InvalidInput(f"content: expected a string, got {type(content).__name__}")
            doc_id = "doc_" + content_hash(content)[:12]
        return ingest_document(self._kb.ctx, doc_id, title, source, content, Extraction(), metadata)

    def ingest_text(
        self,
        content: str,
        doc_id: str | None = None,
        title: str | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        extractor: str | None = None,
    ) -> IngestResult:
        """Add a document and the entities and relations ``extractor`` finds in it (offline, llm or
        none; default the configured ``ingest.extractor``), validated as for a file. ``doc_id``
        defaults like :meth:`add`. Unlike a folder ingest, a failure raises (nothing is written)."""
        if not isinstance(content, str):
            raise InvalidInput(f"content: expected a string, got {type(content).__name__}")
        if doc_id is None:
            doc_id = "doc_" + content_hash(content)[:12]
        ctx = self._kb.ctx
        ex = make_extractor(ctx, extractor)
        extraction = Extraction()
        notes: Sequence[str] = ()
        if ex is not None:
            doc = SourceDocument(doc_id=doc_id, title=title or doc_id, source=source or doc_id, text=content,
                                 metadata=dict(metadata or {}))
            try:
                found = ex.extract(doc)
            except ExtractionError as exc:
                raise InvalidInput(f"extract: the {ex.name} extractor failed ({exc}); nothing was written") from None
            extraction, notes = validate_extraction(found, content, ctx.config.graph.min_confidence,
                                                    source=f"{ex.name} extractor")
        result = ingest_document(ctx, doc_id, title, source, content, extraction, metadata)
        result.warnings[:0] = notes
        return result

    def get(self, doc_id: str, version: int | None = None) -> Document:
        """A document version (latest by default); NotFound names what exists."""
        doc = self._kb.store.get_document(doc_id, version)
        if doc is None:
            if version is not None and self._kb.store.get_document(doc_id) is not None:
                versions = [d.version for d in self._kb.store.document_versions(doc_id)]
                raise NotFound(f"document '{doc_id}' has no version {version}; versions: {versions}")
            raise NotFound(f"no document with id '{doc_id}'; list them with `graphmem docs list`")
        return doc

    def exists(self, doc_id: str) -> bool:
        """Does a document of this id exist (any version)?"""
        return bool(self._kb.store.latest_documents([doc_id]))

    def versions(self, doc_id: str) -> list[Document]:
        """Every version of a document, oldest first (content omitted)."""
        versions = self._kb.store.document_versions(doc_id)
        if not versions:
            raise NotFound(f"no document with id '{doc_id}'")
        return versions

    def list(self, limit: int | None = None, offset: int = 0) -> list[Document]:
        """Latest version of each document, by id (content omitted)."""
        return self._kb.store.list_documents(limit, offset)

    def chunks(self, doc_id: str, version: int | None = None) -> builtins.list[Chunk]:
        """The chunks of a document version, in order."""
        doc = self.get(doc_id, version)
        return self._kb.store.document_chunks(doc.doc_id, doc.version)

    def chunk(self, chunk_id: str) -> Chunk:
        """One chunk by id (``<doc_id>:v<version>:c<ordinal>``)."""
        found = self._kb.store.get_chunks([chunk_id])
        if chunk_id not in found:
            raise NotFound(f"no chunk with id '{chunk_id}'; chunk ids look like 'doc_001:v1:c0'")
        return found[chunk_id]

    def search(self, query: str, k: int = 10, all_versions: bool = False) -> builtins.list[ChunkHit]:
        """Full-text search over chunks, BM25-ranked, with snippets.

        Any text is a valid query: FTS5 syntax in it (quotes, ``*``, ``NEAR``, ``-``, ``:``)
        is treated as plain words.
        """
        check_query(query)
        if not isinstance(k, int) or k < 0:
            raise InvalidInput(f"k: expected a non-negative integer, got {k!r}")
        return self._kb.store.search_chunks(query, k, latest_only=not all_versions)

    def delete(self, doc_id: str) -> DocumentDeleted:
        """Delete a document (all versions) and its evidence.

        Entities and relations left with no evidence are removed too, unless they were
        added by hand. Returns what was removed.
        """
        store = self._kb.store
        with store.transaction():
            versions = store.document_versions(doc_id)
            if not versions:
                raise NotFound(f"no document with id '{doc_id}'; nothing deleted")
            node_ids, edge_ids = store.delete_document(doc_id)
            # the pages of a relation's two ends cite its evidence, even where the document never named them
            ends = {n for e in store.get_edges(edge_ids).values() for n in (e.source, e.target)}
            removed_nodes, removed_edges = store.prune_unsupported(node_ids, edge_ids)
            now = self._kb.now()
            for eid in removed_edges:
                store.append_event("edge.removed", eid, now, {"reason": f"no evidence left after deleting {doc_id}"})
            for nid in removed_nodes:
                store.append_event("node.removed", nid, now, {"reason": f"no evidence left after deleting {doc_id}"})
            store.append_event("document.deleted", doc_id, now, {
                "versions": [d.version for d in versions],
                "nodes_removed": len(removed_nodes), "edges_removed": len(removed_edges),
            })
            gone = set(removed_nodes)  # the wiki: its pages go, the pages of what it touched are made again
            kept = sorted((set(node_ids) | ends) - gone)
            self._kb.ctx.hooks.call(AFTER_DELETE, doc_id, kept, list(removed_nodes))
        return DocumentDeleted(doc_id, len(versions), len(removed_nodes), len(removed_edges))
