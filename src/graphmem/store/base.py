"""The store protocol: what every backend (SQLite now, PostgreSQL later) provides.

Faces and retrieval talk to a store only through these methods; no SQL outside
``store/<backend>/``. Writes are made inside ``with store.transaction():`` so that one public
operation, including the events it appends, is one transaction. The shared contract tests in
``tests/test_store_contract.py`` run against every backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from ..models import Chunk, ChunkHit, Document, Edge, Event, Mention, Node, Page, PageLink, Provenance

__all__ = ["Store"]


@runtime_checkable
class Store(Protocol):
    """Persistence for documents, chunks, nodes, edges, provenance, types and events."""

    backend: str
    read_only: bool  # opened read-only: transaction() raises BackendError naming the folder
    read_only_reason: str

    # transactions and lifecycle
    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction; nested calls join the outermost one."""
    def on_commit(self, before: Callable[[], None] | None = None, undo: Callable[[], None] | None = None,
                  after: Callable[[], None] | None = None) -> None:
        """Inside transaction(): run ``before`` just before the outermost COMMIT, ``undo`` on its
        (or the enclosing savepoint's) rollback with the write lock held, ``after`` once committed."""
    def no_wait(self) -> AbstractContextManager[None]:
        """Inside, transactions raise StoreBusy at once instead of waiting for the write lock."""
    def try_write(self, fn: Callable[[], Any]) -> bool:
        """Run ``fn`` in a transaction if the write lock is free now; False when skipped."""
    def refuse_write(self) -> None:
        """Raise BackendError naming the folder when the store is read-only."""
    def close(self) -> None:
        """Release the connection(s)."""
    def applied_migrations(self) -> list[str]:
        """Names of the schema migrations applied, in order."""

    # events
    def append_event(self, type: str, target: str, ts: str, payload: dict[str, Any], actor: str | None = None) -> int:
        """Append a change event inside the current transaction; returns its id."""
    def list_events(
        self, after_id: int = 0, types: Sequence[str] | None = None, target: str | None = None, limit: int = 100
    ) -> list[Event]:
        """Events after ``after_id``, oldest first."""

    # documents and chunks
    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        """A document version; the latest when ``version`` is None."""
    def document_versions(self, doc_id: str) -> list[Document]:
        """All versions of a document, oldest first, without content."""
    def list_documents(self, limit: int | None = None, offset: int = 0) -> list[Document]:
        """Latest versions, by id, without content."""
    def insert_document(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Store a new latest version with its chunks."""
    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """Chunks by id."""
    def document_chunks(self, doc_id: str, version: int) -> list[Chunk]:
        """Chunks of one version, in order."""
    def search_chunks(self, text: str, k: int = 10, latest_only: bool = True) -> list[ChunkHit]:
        """Full-text (BM25) search over chunks; user text is never interpreted as query syntax."""
    def delete_document(self, doc_id: str) -> tuple[set[str], set[str]]:
        """Delete all versions; returns ids of nodes and edges that lost evidence."""

    # nodes
    def get_nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        """Nodes by id, with aliases."""
    def find_nodes(self, kind: str, norms: Iterable[str]) -> dict[str, str]:
        """Normalised name or alias -> node id, for those that exist."""
    def insert_node(self, node: Node, names: Sequence[tuple[str, str]]) -> None:
        """Insert a node with its (alias, normalised alias) names."""
    def add_names(self, node_id: str, kind: str, names: Sequence[tuple[str, str]]) -> list[str]:
        """Add aliases; returns the normalised names already owned by another node."""
    def update_node(self, node: Node) -> None:
        """Write back a node's mutable fields."""
    def search_node_names(self, text: str, kind: str, k: int) -> list[tuple[str, float]]:
        """Full-text match of ``text`` against node names and aliases: (node id, score)."""
    def list_nodes(self, kind: str, type: str | None = None, limit: int = 100, offset: int = 0) -> list[Node]:
        """Nodes of a kind, by name."""
    def merge_nodes(self, keep: str, other: str, now: str) -> dict[str, int]:
        """Fold node ``other`` into ``keep``."""
    def delete_node(self, node_id: str) -> None:
        """Delete a node with its edges and their evidence."""

    # edges
    def find_edge(self, source: str, type: str, target: str) -> Edge | None:
        """The edge with these ends and type."""
    def get_edges(self, ids: Iterable[str]) -> dict[str, Edge]:
        """Edges by id."""
    def insert_edge(self, edge: Edge) -> None:
        """Insert an edge."""
    def update_edge(self, edge: Edge) -> None:
        """Write back an edge's mutable fields."""
    def edges_of(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None) -> list[Edge]:
        """Edges touching the nodes, either direction, strongest first."""
    def edges_among(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None
                    ) -> list[Edge]:
        """Edges with both ends among the nodes, strongest first (at most ``limit``)."""

    # provenance
    def insert_provenance(self, records: Sequence[Provenance]) -> None:
        """Append evidence records."""
    def provenance_for(
        self, item_kind: str, item_ids: Iterable[str], limit_per_item: int | None = None
    ) -> dict[str, list[Provenance]]:
        """Evidence per item, newest first."""
    def count_provenance(self, item_kind: str, item_ids: Iterable[str]) -> dict[str, int]:
        """Evidence count per item."""
    def prune_unsupported(self, node_ids: Iterable[str], edge_ids: Iterable[str]) -> tuple[list[str], list[str]]:
        """Remove the given non-manual items left without evidence; returns removed ids."""

    def savepoint(self) -> AbstractContextManager[None]:
        """A unit inside the current transaction, undone alone when it raises."""

    # mentions (entity occurrences in chunks)
    def insert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Record entity occurrences."""
    def mentions_of(self, node_ids: Iterable[str], limit_per_node: int | None = None) -> dict[str, list[Mention]]:
        """Occurrences per entity."""
    def chunk_mentions(self, chunk_ids: Iterable[str]) -> dict[str, list[Mention]]:
        """Occurrences per chunk."""
    def document_hashes(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Latest content hash per known document id."""
    def document_source_files(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Recorded absolute source file per latest document (metadata ``source_file``), where any."""
    def documents_by_source_prefix(self, prefix: str) -> list[tuple[str, str]]:
        """(doc_id, source) of latest documents whose source starts with prefix."""

    # retrieval lookups (light rows for graph walks) and vectors
    def adjacency(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None
                  ) -> list[tuple[str, str, str, float, str]]:
        """(source, type, target, confidence, edge id) of edges touching the nodes, strongest first."""
    def entities_chunks(self, node_ids: Iterable[str], limit_per_node: int) -> dict[str, list[tuple[str, int]]]:
        """Chunks (latest versions) mentioning each entity, with the entity's first offset."""
    def chunk_entities(self, chunk_ids: Iterable[str]) -> dict[str, list[str]]:
        """Distinct entities mentioned per chunk."""
    def entity_chunk_counts(self, node_ids: Iterable[str]) -> dict[str, int]:
        """Number of distinct chunks mentioning each entity."""
    def chunk_info(self, chunk_ids: Iterable[str]) -> dict[str, tuple[str, int, str, bool]]:
        """(doc_id, version, title, is_latest) per chunk."""
    def chunk_bm25(self, text: str, chunk_ids: Sequence[str]) -> dict[str, float]:
        """BM25 of the text for the given chunks."""
    def node_names(self, node_ids: Iterable[str]) -> dict[str, str]:
        """Display name per node id."""
    def get_meta(self, key: str) -> str | None:
        """A knowledge-base fact (e.g. its embedding model)."""
    def set_meta(self, key: str, value: str | None) -> None:
        """Set or remove a knowledge-base fact."""
    def upsert_vectors(self, item_kind: str, model: str, dim: int, items: Sequence[tuple[str, str, bytes]]) -> None:
        """Store (item id, text hash, float16 bytes) vectors."""
    def vector_hashes(self, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, str]:
        """Text hash of the stored vector per item."""
    def load_vectors(self, item_kind: str, model: str, after_id: int = 0) -> tuple[list[int], list[str], list[bytes]]:
        """Vectors of a kind with row id above after_id."""
    def vectors_for(self, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, bytes]:
        """Vector bytes of the given items."""
    def vector_state(self) -> tuple[int, int]:
        """(max vector row id, deletions counter)."""
    def vector_models(self) -> dict[str, int]:
        """Vectors stored per model."""
    def delete_vectors(self, model: str | None = None) -> int:
        """Remove vectors (of one model, or all)."""
    def chunks_to_embed(self, latest_only: bool = True, after_id: int = 0, limit: int = 1000
                        ) -> list[tuple[int, str, str]]:
        """(row id, chunk id, text) for (re)embedding."""
    def relations_to_embed(self, after_rowid: int = 0, limit: int = 1000) -> list[tuple[int, str, str]]:
        """``(rowid, edge id, fact text)`` of relations between entities, for (re)embedding."""
    def nodes_to_embed(self, kind: str, after_rowid: int = 0, limit: int = 1000) -> list[tuple[int, str, str]]:
        """(rowid, node id, name) for (re)embedding."""

    # ontology and stats
    def ontology_types(self, kind: str) -> list[str]:
        """Registered canonical types of a kind."""
    def add_ontology_type(self, kind: str, name: str, now: str) -> bool:
        """Register a type; True if new."""
    def stats(self) -> dict[str, Any]:
        """Counts of what is stored, and size on disk."""

    # ---- wiki (graphmem.wiki / kb.wiki) ------------------------------------------------------
    # Pages are indexed rows of the files under wiki/ (plus a graph node of kind "page");
    # links, claims and cited documents are per-page rows replaced on every save.
    def get_page(self, slug: str, with_content: bool = False) -> Page | None:
        """The page with this slug."""
    def find_page(self, category: str, title_norm: str) -> Page | None:
        """The page of a category with this normalised title."""
    def pages_by_subject(self, subjects: Iterable[str]) -> dict[str, Page]:
        """Generated pages by subject (``entity:<id>``, ``doc:<id>``)."""
    def pages_by_slug(self, slugs: Iterable[str]) -> dict[str, Page]:
        """Pages by slug (content omitted)."""
    def subject_slugs(self, subjects: Iterable[str]) -> dict[str, str]:
        """``subject -> slug`` of generated pages."""
    def slug_subjects(self, slugs: Iterable[str]) -> dict[str, str | None]:
        """``slug -> subject`` of existing pages."""
    def slugs_taken(self, base: str) -> set[str]:
        """``base`` and ``base-*`` slugs in use."""
    def save_page(self, page: Page, links: Sequence[PageLink], claims: Sequence[tuple[str, int, str]],
                  sources: Sequence[tuple[str, int | None]]) -> None:
        """Insert or replace (by slug) a page with its links, claims and cited documents."""
    def set_page_stat(self, slug: str, size: int, mtime_ns: int) -> None:
        """Record a page file's size and mtime (content unchanged)."""
    def delete_page_row(self, slug: str) -> bool:
        """Remove a page, its links, claims, sources and graph node."""
    def list_pages(self, category: str | None = None, limit: int | None = None, offset: int = 0) -> list[Page]:
        """Pages by category and title."""
    def page_files(self) -> dict[str, tuple[str, int, int, str]]:
        """Every page: ``path -> (slug, size, mtime_ns, content_hash)``."""
    def page_stats(self, paths: Iterable[str]) -> dict[str, tuple[str, int, int, str]]:
        """Like page_files for some paths."""
    def search_pages(self, text: str, k: int = 10, category: str | None = None) -> list[tuple[Page, float, str]]:
        """BM25 over page titles and bodies: ``(page, score, snippet)``; user text is never query syntax."""
    def page_backlinks(self, slug: str, limit: int | None = None, category: str | None = None
                       ) -> list[tuple[str, int]]:
        """``(source slug, line)`` of links to ``slug`` from other pages."""
    def page_links_of(self, slug: str) -> list[PageLink]:
        """The links a page makes."""
    def pages_linking_to(self, targets: Iterable[str], limit: int = 100) -> list[str]:
        """Slugs of pages linking to any of ``targets``."""
    def wiki_index_counts(self) -> list[tuple[str, str, int]]:
        """``(category, shard, pages)`` of non-empty index shards."""
    def wiki_index_rows(self, category: str, shard: str | None = None,
                        limit: int | None = None) -> list[tuple[str, str, str]]:
        """``(slug, title, summary)`` of a category or shard, by title."""
    def wiki_index_prev(self, category: str, shard: str, title_norm: str, slug: str) -> str | None:
        """The slug just before ``(title_norm, slug)`` in a shard's title order."""
    def mark_wiki_dirty(self, keys: Iterable[str]) -> None:
        """Mark generated pages for regeneration."""
    def wiki_dirty(self, limit: int | None = None) -> list[str]:
        """Generated pages waiting for regeneration."""
    def clear_wiki_dirty(self, keys: Iterable[str]) -> None:
        """Unmark regenerated pages."""
    def wiki_broken_links(self) -> list[tuple[str, str, int]]:
        """``(source, target, line)`` of links to missing pages."""
    def wiki_isolated_pages(self) -> list[str]:
        """Pages with no wikilinks."""
    def wiki_unlinked_pages(self) -> list[str]:
        """Pages no other page links to."""
    def wiki_stale_sources(self) -> list[tuple[str, str, int | None, int | None]]:
        """``(page, doc id, cited version, latest version)`` of superseded or deleted citations."""
    def wiki_flagged_pages(self) -> list[tuple[str, int]]:
        """``(slug, count)`` of pages with flagged contradictions."""
    def wiki_stated_types(self) -> list[tuple[str, str | None, str, str]]:
        """``(slug, subject, title_norm, type)`` of pages stating an entity type."""
    def wiki_uncited_claims(self) -> list[tuple[str, str, int, str, bool]]:
        """``(page, edge id, line, text, relation missing)`` of claims without evidence."""
    def wiki_one_way_links(self, from_category: str, to_category: str) -> list[tuple[str, str]]:
        """``(a, b)`` links between the categories that are not linked back."""
    def wiki_stubs(self) -> list[str]:
        """Entity pages with no description, relations or mentions."""
    def strongest_edges(self, node_id: str, limit: int) -> tuple[list[Edge], list[Edge]]:
        """At most ``limit`` outgoing and incoming edges, strongest (then oldest) first."""
    def edges_of_types(self, node_id: str, types: Sequence[str], limit: int) -> list[Edge]:
        """Outgoing edges of some types."""
    def find_edges(self, triples: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], Edge]:
        """Edges by ``(source, type, target)``."""
    def first_provenance(self, item_kind: str, item_ids: Iterable[str]) -> dict[str, Provenance]:
        """The oldest evidence record of each item."""
    def node_documents(self, node_id: str, limit: int) -> tuple[list[tuple[str, int]], bool]:
        """Documents naming a node, first first, with the highest version naming it; more exist?"""
    def document_claims(self, doc_id: str, version: int, limit: int) -> list[tuple[Edge, Provenance]]:
        """Edges a document version supports, with that version's first evidence."""
    def document_claim_ids(self, doc_id: str, version: int) -> set[str]:
        """Ids of the edges a document version supports."""
    def document_entity_ids(self, doc_id: str, version: int, limit: int) -> list[str]:
        """Entities a document version names, in order."""
    def latest_documents(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        """Latest versions (content and metadata omitted)."""
    def edges_supported_by(self, edge_ids: Iterable[str], doc_id: str, version: int) -> set[str]:
        """Which edges have evidence in a document version."""

    # skills (kind 'skill' nodes, their rows and fielded full text, skill-to-skill edges)
    def skill_files(self, root: str) -> dict[str, Any]:
        """``{skill_id: row(skill_id, root, sha256, size, mtime_ns, node_id)}`` of one root."""
    def skill_roots_of(self, skill_ids: Iterable[str]) -> dict[str, str]:
        """The root each existing skill id was indexed from."""
    def upsert_skill(self, row: Mapping[str, Any]) -> None:
        """Insert or update one skill row (its node must exist)."""
    def set_skill_name(self, node_id: str, alias: str, norm: str) -> None:
        """Make ``norm`` the name key of a skill node (graph queries find skills by name)."""
    def set_skill_stat(self, skill_id: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for an unchanged skill."""
    def delete_skill_nodes(self, node_ids: Sequence[str]) -> None:
        """Delete skills by node id (rows, edges and vectors cascade)."""
    def list_skill_rows(self) -> list[Any]:
        """Every skill without its body, in row order."""
    def get_skill_row(self, skill_id: str) -> Any | None:
        """One skill with its body and meta."""
    def skill_bodies(self, skill_ids: Iterable[str]) -> dict[str, str]:
        """Bodies of some skills."""
    def skill_rows_after(self, after_rid: int, limit: int) -> list[Any]:
        """Skills with row id > ``after_rid`` in row order (for reindex)."""
    def skill_bm25(self, text: str, weights: Sequence[float], limit: int) -> list[tuple[str, float]]:
        """Fielded BM25 over name, triggers, tags, description, body: ``[(skill_id, score)]``."""
    def skills_with_phrase_in_body(self, phrase_words: Sequence[str]) -> list[str]:
        """Skill ids whose body holds the words as a phrase."""
    def skill_edges(self) -> list[tuple[str, str, str, float, str]]:
        """``(source, type, target, weight, edge id)`` of every edge between skills."""
    def apply_skill_edges(self, add: Sequence[tuple[str, str, str, str, float]], remove: Sequence[str],
                          reweight: Sequence[tuple[str, float]], now: str) -> None:
        """Insert, delete and reweight skill edges."""
    def skill_root_list(self) -> list[str]:
        """Folders skills were built from."""
    def add_skill_root(self, root: str, now: str) -> None:
        """Remember a folder skills were built from."""
    def clear_skills(self) -> int:
        """Delete every skill; returns how many."""

    # memories (kind 'memory' nodes, their rows, sessions, references, feedback, decay)
    def insert_memory(self, mem: Any) -> int:
        """Insert a memory's node and row; returns its row id."""
    def get_memories(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Memories by id."""
    def list_memories(self, filters: Any, include_archived: bool = False, limit: int = 100,
                      offset: int = 0) -> list[dict[str, Any]]:
        """Memories matching scope filters, oldest said first."""
    def memories_after(self, filters: Any, after_rowid: int, limit: int) -> list[dict[str, Any]]:
        """Memories of a scope after a row id, in row order."""
    def memory_scope_ids(self, filters: Any, include_archived: bool, limit: int) -> list[str] | None:
        """Ids of a scope's memories, or None when more than ``limit``."""
    def memory_vectors(self, filters: Any, model: str, limit: int, after_rowid: int = 0
                       ) -> list[tuple[int, str, bytes | None]] | None:
        """``(rowid, id, vector bytes or None)`` of a scope's memories, or None when more than ``limit``."""
    def memory_scope_state(self, scope_key: str) -> tuple[int, int, int]:
        """``(generation, live count, max row id)`` of a scope key."""
    def memories_in_scope(self, ids: Iterable[str], filters: Any, include_archived: bool) -> set[str]:
        """Those ids matching the scope filters."""
    def memories_to_embed(self, after_rowid: int = 0, limit: int = 1000) -> list[tuple[int, str, str]]:
        """``(rowid, id, text)`` for reindex."""
    def update_memory_text(self, memory_id: str, text: str, metadata: Any, now: str) -> None:
        """New text and metadata (version + 1)."""
    def delete_memory(self, memory_id: str) -> int:
        """Delete a memory and what hangs on it; returns its edge count."""
    def add_memory_version(self, memory_id: str, version: int, event: str, old: str | None, new: str | None,
                           ts: str) -> None:
        """Append a history entry."""
    def memory_versions(self, memory_id: str) -> list[dict[str, Any]]:
        """History, oldest first."""
    def memory_session(self, session_key: str) -> tuple[str, str] | None:
        """Last memory of a session."""
    def set_memory_session(self, session_key: str, memory_id: str, said_at: str) -> None:
        """Set the last memory of a session."""
    def add_memory_docrefs(self, scope_key: str, memory_id: str, refs: Iterable[str]) -> None:
        """Record document references."""
    def memories_with_docrefs(self, scope_key: str, refs: Sequence[str], exclude: str, limit: int) -> list[str]:
        """Memories of a scope key sharing a reference."""
    def add_memory_mentions(self, memory_id: str, entity_ids: Iterable[str]) -> int:
        """Link a memory to entities it names."""
    def memory_mentions(self, memory_ids: Iterable[str]) -> dict[str, list[str]]:
        """Entities each memory names."""
    def memories_mentioning(self, entity_ids: Iterable[str], filters: Any, include_archived: bool,
                            limit: int) -> list[str]:
        """Memories of a scope naming any of the entities."""
    def has_entities(self) -> bool:
        """Whether any entity exists."""
    def search_memories_fts(self, text: str, filters: Any, include_archived: bool, k: int) -> list[tuple[str, float]]:
        """BM25 search over a scope's memories."""
    def memory_bm25(self, text: str, memory_ids: Sequence[str]) -> dict[str, float]:
        """BM25 of a text for given memories."""
    def insert_memory_edges(self, edges: Sequence[tuple[str, str, str, str, float, str]]) -> int:
        """Insert memory edges; returns the number new."""
    def memory_neighbours(self, memory_ids: Sequence[str], min_weight: float, per_node: int = 32
                          ) -> dict[str, list[tuple[str, float, str]]]:
        """Memory edges of each memory, either direction (its strongest ``per_node`` each way)."""
    def memory_edges_among(self, memory_ids: Sequence[str], min_weight: float = 0.0
                           ) -> list[tuple[str, str, str, float]]:
        """Edges among the given memories."""
    def memory_edge_decay_rows(self) -> list[tuple[str, str, float, float, str, str, str]]:
        """Decay inputs of every memory edge."""
    def set_edge_weights(self, weights: Sequence[tuple[float, str]], now: str) -> None:
        """Update edge weights."""
    def delete_edges_by_id(self, edge_ids: Sequence[str]) -> int:
        """Delete edges by id."""
    def delete_memory_edges(self, filters: Any, keep_types: Sequence[str] = ()) -> int:
        """Delete the memory edges of a scope."""
    def memories_with_edges(self, memory_ids: Sequence[str]) -> set[str]:
        """Those memories still having an edge."""
    def memory_decay_rows(self) -> list[tuple[str, str, float, float, float]]:
        """Decay inputs of every live memory."""
    def set_memory_relevance(self, values: Sequence[tuple[float, str]]) -> None:
        """Update relevances."""
    def set_memories_archived(self, memory_ids: Sequence[str], archived: bool, now: str) -> None:
        """Archive or restore memories."""
    def set_memory_quality(self, memory_id: str, quality: float, floor: float, relevance: float, used_at: str,
                           archived: bool) -> None:
        """Write a memory's relevance state."""
    def record_memory_use(self, memory_ids: Sequence[str], now: str) -> None:
        """Count a use and restart the decay clock."""
    def add_memory_feedback(self, memory_id: str, query: str, helpful: bool, ts: str) -> None:
        """Record feedback."""
    def memory_feedback(self, memory_ids: Iterable[str], limit_per: int = 20) -> dict[str, list[tuple[str, bool]]]:
        """Latest feedback per memory."""
    def memory_llm_budget(self, key: str) -> tuple[str, int, str | None] | None:
        """An LLM budget's state."""
    def set_memory_llm_budget(self, key: str, day: str, tokens: int, cooldown_until: str | None) -> None:
        """Persist an LLM budget."""
    def memory_stats(self, filters: Any) -> dict[str, Any]:
        """Memory and memory-edge counts within a scope."""
