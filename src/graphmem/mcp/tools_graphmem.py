"""graphmem's own MCP tools: ingest, retrieval with evidence, the wiki, memories, the change log.

Each tool parses its typed arguments, calls one library function and returns its result as
structured output. The descriptions teach the workflow: wiki first, then query with evidence,
cite, and file valuable answers back as pages.
"""

# No `from __future__ import annotations`: the SDK reads these signatures at runtime.

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InvalidInput
from .registry import Registry, plain

__all__ = ["register_graphmem_tools", "confined_paths", "MAX_EVENT_ID"]

MAX_EVENT_ID = 2**62  # ids are SQLite integers (64-bit signed); a larger one cannot be compared

Kind = Literal["chunk", "entity", "document", "page"]
Strategy = Literal["ppr", "bfs", "none"]


class Open(BaseModel):
    """A result whose fields follow the library's; every one is passed through."""

    model_config = ConfigDict(extra="allow")


class EntityIn(BaseModel):
    """An entity you extracted, with the exact text of the document that supports it."""

    name: str
    type: str = Field(default="concept", description="e.g. person, service, issue, concept")
    supporting_text: str = Field(description="A verbatim quote from the text that states the entity")
    aliases: list[str] = Field(default_factory=list)


class RelationIn(BaseModel):
    """A relation the text states (never an inferred one), with its supporting quote."""

    source: str
    target: str
    type: str = Field(description="A verb phrase in active voice, e.g. causes, depends on, works at")
    confidence: float = Field(ge=0.0, le=1.0, description="Relations below 0.6 are not stored")
    supporting_text: str = Field(description="A verbatim quote from the text that states the relation")


class Citation(Open):
    """Where a hit's evidence is: document, version, chunk and character span."""

    doc_id: str
    version: int | None = None
    chunk_id: str | None = None
    start: int | None = None
    end: int | None = None
    text: str


class HitOut(Open):
    """One search hit with its score parts and citations."""

    kind: str
    id: str
    title: str
    text: str
    score: float
    parts: dict[str, float]
    citations: list[Citation]


class SearchOut(Open):
    """Hits best first, the subgraph connecting them, notes (e.g. embeddings off)."""

    query: str
    hits: list[HitOut]
    notes: list[str]


class ContextOut(Open):
    """A prompt-ready block of evidence with [n] citation markers, and the hits it cites."""

    query: str
    context: str
    hits: list[HitOut]


class IngestOut(Open):
    """What an ingest did: status (added, new_version, unchanged), counts, warnings."""

    doc_id: str
    status: str
    version: int
    warnings: list[str]


class Items(Open):
    """A list of results."""

    results: list[dict[str, Any]]


def confined_paths(paths: Sequence[str], roots: Sequence[Path]) -> list[str]:
    """``paths`` resolved (a relative one against the first root, the working folder), each of which
    must lie inside one of ``roots`` after following links: over MCP, and over HTTP for anyone with
    the token, ingest_path must not read arbitrary files of the server's machine. Checked for all
    before anything is read."""
    bases = [r.resolve() for r in roots]
    out = []
    for i, raw in enumerate(paths):
        if not raw.strip() or "\x00" in raw:
            raise InvalidInput(f"paths[{i}]: {raw!r} is empty or contains a NUL character; give a file or folder")
        target = (bases[0] / raw).resolve()
        if not any(target.is_relative_to(b) for b in bases):
            listed = ", ".join(str(b) for b in bases)
            raise InvalidInput(f"paths[{i}]: '{raw}' is outside the folders this server may read ({listed}); "
                               "move it there or start the server with --ingest-root DIR (nothing was ingested)")
        out.append(str(target))
    return out


def register_graphmem_tools(reg: Registry, ingest_roots: Sequence[Path] = ()) -> None:
    """Add graphmem's tools to ``reg``'s server; ``ingest_path`` reads only below ``ingest_roots``
    (the first one is the working folder; none given: the current folder)."""
    kb = reg.kb
    roots = list(ingest_roots) or [Path.cwd()]

    # -- adding knowledge --------------------------------------------------------------------

    @reg.tool(title="Ingest a document", read_only=False, destructive=False, idempotent=True)
    def ingest_document(
        doc_id: Annotated[str, Field(description="A stable id; the same id with new text makes a new version")],
        text: Annotated[str, Field(description="The document's full text")],
        title: Annotated[str | None, Field(description="Its title (default: the id)")] = None,
        source: Annotated[str | None, Field(description="Where it came from (path, URL)")] = None,
        entities: Annotated[list[EntityIn] | None, Field(description="Entities you extracted")] = None,
        relations: Annotated[list[RelationIn] | None, Field(description="Relations the text states")] = None,
    ) -> IngestOut:
        """Store a document with the entities and relations you extracted from it (the Mini Context
        Graph way: you extract, graphmem does the bookkeeping). Every entity and relation needs a
        verbatim supporting_text from the document; one that cannot be found is reported in
        warnings, not stored; relations below confidence 0.6 are skipped. The same text again is a
        no-op (a new title on it is a new version). Without entities/relations only the text is stored (searchable)."""
        ents = [e.model_dump() for e in entities or []]
        rels = [r.model_dump() for r in relations or []]
        return IngestOut.model_validate(kb.ingest_with_content(doc_id, title or doc_id, source or "mcp", text,
                                                               ents, rels))

    @reg.tool(title="Ingest files", read_only=False, destructive=False, idempotent=True)
    def ingest_path(
        paths: Annotated[list[str], Field(min_length=1, description="Files or folders (recursive)")],
        glob: Annotated[str | None, Field(description="Only files matching this pattern, e.g. *.md")] = None,
    ) -> Open:
        """Ingest files and folders with the configured extractor (offline rules by default);
        unchanged files are skipped. Only files below the server's working folder and its
        --ingest-root folders can be read (relative paths start at the working folder). Returns
        the counts (added, unchanged, new_versions, skipped)."""
        return Open.model_validate(plain(kb.ingest_paths(confined_paths(paths, roots), glob=glob)))

    # -- retrieval ---------------------------------------------------------------------------

    @reg.tool(title="Search with evidence", read_only=True)
    def search(
        query: Annotated[str, Field(description="What to look for, in words")],
        kinds: Annotated[list[Kind], Field(description="What to return")] = ["chunk"],  # noqa: B006
        k: Annotated[int, Field(ge=1, le=100, description="How many hits")] = 10,
        strategy: Annotated[Strategy | None, Field(description="Graph expansion (default: configured)")] = None,
    ) -> SearchOut:
        """Hybrid search (BM25 + embeddings + entity seeds, graph expansion, rerank). Every hit has
        its score parts and citations (document, chunk, character span, text): cite them. Look in
        the wiki (wiki_search) first; use query_with_evidence for the subgraph around entities."""
        return SearchOut.model_validate(plain(kb.search(query, kinds=kinds, k=k, strategy=strategy)))

    @reg.tool(title="Query with evidence", read_only=True)
    def query_with_evidence(
        query: Annotated[str, Field(description="A question naming the entities it is about")],
    ) -> Open:
        """The subgraph around the entities the query names, with the supporting documents, chunks,
        spans and the evidence chain of every relation. Answer from it and cite the chunks."""
        return Open.model_validate(plain(kb.query_with_evidence(query)))

    @reg.tool(title="Get context", read_only=True)
    def get_context(
        query: Annotated[str, Field(description="The question to gather evidence for")],
        token_budget: Annotated[int, Field(ge=50, le=100_000, description="Tokens the block may use")] = 1000,
        k: Annotated[int, Field(ge=1, le=100)] = 10,
    ) -> ContextOut:
        """A prompt-ready block of the best evidence within token_budget tokens, each passage marked
        [n] with its citation; quote the markers in your answer."""
        res = plain(kb.search(query, k=k, as_context=True, token_budget=token_budget))
        return ContextOut.model_validate({**res, "context": res.get("context") or ""})

    @reg.tool(title="Get an entity", read_only=True)
    def get_entity(
        name: Annotated[str, Field(description="Entity name, alias or id")],
    ) -> Open:
        """An entity with its relations (both directions) and the evidence for each."""
        return Open.model_validate(plain(kb.graph.get_entity(name)))

    # -- the wiki ------------------------------------------------------------------------------

    @reg.tool(title="Write a wiki page", read_only=False, destructive=True, idempotent=True)
    def wiki_write_page(
        category: Annotated[str, Field(description="e.g. topic, answer, howto")],
        title: str,
        content: Annotated[str, Field(description="Markdown body; link entities and pages as [[name]]")],
        summary: Annotated[str | None, Field(description="One line for index.md")] = None,
        tags: list[str] | None = None,
        source_documents: Annotated[list[str] | None, Field(description="Document ids the page cites")] = None,
    ) -> Open:
        """Create or replace a wiki page. File valuable answers back here (with source_documents) so
        the next question starts from them. Replaces the page of the same title and category."""
        return Open.model_validate(plain(kb.wiki.write_page(category, title, content, summary=summary, tags=tags,
                                                            source_documents=source_documents)))

    @reg.tool(title="Read a wiki page", read_only=True)
    def wiki_read_page(
        slug: Annotated[str, Field(description="The page's slug, e.g. memory-leak (from wiki_search)")],
    ) -> Open:
        """A wiki page: front matter, markdown content, its links and backlinks."""
        return Open.model_validate(plain(kb.wiki.read_page_by_slug(slug)))

    @reg.tool(title="Search the wiki", read_only=True)
    def wiki_search(
        query: str,
        k: Annotated[int, Field(ge=1, le=100)] = 10,
        category: str | None = None,
    ) -> Items:
        """Full-text search over the wiki's pages (title weighted). Start here: a page may already
        answer the question; then read it with wiki_read_page."""
        return Items(results=plain(kb.wiki.search_wiki(query, k=k, category=category)))

    @reg.tool(title="Lint the wiki", read_only=False, destructive=False, idempotent=True)
    def wiki_lint(
        fix: Annotated[bool, Field(description="Repair what is mechanical (index, missing cross references)")]
        = False,
    ) -> Open:
        """Check the wiki: orphan and missing pages, broken [[links]], stale pages, contradictions,
        uncited claims. Read-only unless fix=true."""
        return Open.model_validate(plain(kb.wiki.lint_wiki(fix=fix)))

    # -- memories ------------------------------------------------------------------------------

    @reg.tool(title="Remember", read_only=False, destructive=False, idempotent=False)
    def memory_add(
        text: Annotated[str, Field(description="What to remember, one fact or message")],
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Open:
        """Remember a text for a user/agent/run scope; returns the memory id."""
        return Open.model_validate(plain(kb.memory.add(text, user_id=user_id, agent_id=agent_id, run_id=run_id,
                                                       metadata=metadata)))

    @reg.tool(title="Recall", read_only=False, destructive=False, idempotent=False)
    def memory_search(
        query: str,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
    ) -> Open:
        """Memories of a scope relevant to the query, best first, with their score parts (a search
        counts as a use of the memories it returns)."""
        return Open.model_validate(plain(kb.memory.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id,
                                                          limit=limit)))

    @reg.tool(title="Update a memory", read_only=False, destructive=True, idempotent=True)
    def memory_update(memory_id: str, text: str) -> Open:
        """Replace a memory's text (the old text stays in its history)."""
        return Open.model_validate(plain(kb.memory.update(memory_id, text)))

    @reg.tool(title="Forget a memory", read_only=False, destructive=True, idempotent=False)
    def memory_delete(memory_id: str) -> Open:
        """Delete a memory."""
        return Open.model_validate(plain(kb.memory.delete(memory_id)))

    @reg.tool(title="Memory history", read_only=True)
    def memory_history(memory_id: str) -> Items:
        """Every version of a memory, oldest first."""
        return Items(results=plain(kb.memory.history(memory_id)))

    @reg.tool(title="Memory feedback", read_only=False, destructive=False, idempotent=False)
    def memory_feedback(memory_id: str, query: str, helpful: bool) -> Open:
        """Say whether a memory helped for a query; later searches weigh it accordingly."""
        return Open.model_validate(plain(kb.memory.feedback(memory_id, query, helpful)))

    # -- the change log ------------------------------------------------------------------------

    @reg.tool(title="List events", read_only=True)
    def list_events(
        after_id: Annotated[int, Field(ge=0, le=MAX_EVENT_ID,
                                       description="Only events after this id (page with the last seen)")] = 0,
        types: Annotated[list[str] | None, Field(description="e.g. document.added, wiki.write")] = None,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
    ) -> Items:
        """The append-only change log, oldest first."""
        return Items(results=plain(kb.events.list(after_id=after_id, types=types, limit=limit)))
