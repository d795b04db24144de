"""Typed results of the faces: frozen dataclasses whose ``to_dict()`` is the JSON the CLI prints.

Each face method that used to build a ``dict`` returns one of these. ``to_dict()`` gives exactly the
dict it returned before (keys in the same order: ``tests/test_cli_json_golden.py`` pins the CLI's
``--json`` bytes). For code written against those dicts, a result also *reads* like one: it is a
read-only :class:`~collections.abc.Mapping` over its documented keys (``result["doc_id"]``,
``dict(result)``, ``result == {...}``, ``"edges" in result``); nested values read through it are
plain data (lists and dicts). What is no longer possible is mutating it, and ``json.dumps(result)``
needs ``result.to_dict()``.

Pure data: no I/O, imports only :mod:`graphmem.models`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..models import Edge, Node, PageLink, Provenance

__all__ = [
    "Result",
    "DocumentDeleted",
    "Retyped",
    "EdgeDetail",
    "EntityRelation",
    "EntityDetail",
    "NeighbourNode",
    "Neighbourhood",
    "Merged",
    "NodeDeleted",
    "MemoryRecord",
    "MemoryList",
    "MemoryScores",
    "MemoryHit",
    "MemoryLink",
    "MemorySearch",
    "MemoryEvent",
    "MemoriesAdded",
    "MemoryUpdated",
    "MemoryDeleted",
    "MemoryRelevance",
    "MemoryFeedback",
    "PageInfo",
    "PageWritten",
    "LinkFrom",
    "PageRead",
    "PageHit",
    "Backlink",
    "LogEntry",
    "PageDeleted",
    "SkillDetail",
    "SkillLink",
    "SkillNeighbours",
    "SkillsInfo",
]


class Result(Mapping[str, Any]):
    """Base of the face results: ``to_dict()`` plus read-only mapping access over it.

    Subclasses are frozen dataclasses declared with ``eq=False`` so that equality is the mapping's
    (a result equals the dict it replaced, and another result with the same data)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data, keys in the documented order."""
        raise NotImplementedError

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())


def _evidence(records: list[Provenance]) -> list[dict[str, Any]]:
    return [p.to_dict() for p in records]


# -- documents ---------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class DocumentDeleted(Result):
    """What ``kb.documents.delete`` removed."""

    doc_id: str
    versions_deleted: int
    nodes_removed: int
    edges_removed: int

    def to_dict(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "versions_deleted": self.versions_deleted,
                "nodes_removed": self.nodes_removed, "edges_removed": self.edges_removed}


# -- graph -------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Retyped(Result):
    """An entity's type before and after ``kb.graph.retype``."""

    id: str
    name: str
    old_type: str
    type: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "old_type": self.old_type, "type": self.type}


@dataclass(frozen=True, eq=False)
class EdgeDetail(Result):
    """A relation with the names of its ends and its evidence (``kb.graph.get_edge``)."""

    edge: Edge
    source_name: str
    target_name: str
    evidence: list[Provenance] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = self.edge.to_dict()
        out["source_name"] = self.source_name
        out["target_name"] = self.target_name
        out["evidence"] = _evidence(self.evidence)
        return out


@dataclass(frozen=True, eq=False)
class EntityRelation(Result):
    """One relation of an entity, seen from it (``direction`` ``out`` or ``in``)."""

    id: str
    direction: str
    type: str
    source: str
    target: str
    other: str | None
    other_id: str | None
    confidence: float
    manual: bool
    evidence: list[Provenance] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "direction": self.direction, "type": self.type, "source": self.source,
                "target": self.target, "other": self.other, "other_id": self.other_id,
                "confidence": self.confidence, "manual": self.manual, "evidence": _evidence(self.evidence)}


@dataclass(frozen=True, eq=False)
class EntityDetail(Result):
    """An entity with its relations (both directions) and evidence (``kb.graph.get_entity``)."""

    node: Node
    relations: list[EntityRelation]
    evidence: list[Provenance]
    evidence_count: int

    def to_dict(self) -> dict[str, Any]:
        out = self.node.to_dict()
        out["relations"] = [r.to_dict() for r in self.relations]
        out["evidence"] = _evidence(self.evidence)
        out["evidence_count"] = self.evidence_count
        return out


@dataclass(frozen=True, eq=False)
class NeighbourNode(Result):
    """A node of a neighbourhood and its hop distance from the start."""

    node: Node
    depth: int

    def to_dict(self) -> dict[str, Any]:
        return {**self.node.to_dict(), "depth": self.depth}


@dataclass(frozen=True, eq=False)
class Neighbourhood(Result):
    """Nodes (by id, in visit order) and the edges among them (``kb.graph.neighbours``)."""

    nodes: dict[str, NeighbourNode]
    edges: list[Edge]

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": {nid: n.to_dict() for nid, n in self.nodes.items()},
                "edges": [e.to_dict() for e in self.edges]}


@dataclass(frozen=True, eq=False)
class Merged(Result):
    """What ``kb.graph.merge`` did: ``counts`` are the store's (edges moved, folded, loops dropped)."""

    kept: str
    merged: str
    aliases_added: list[str]
    counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kept": self.kept, "merged": self.merged, "aliases_added": list(self.aliases_added),
                **self.counts}


@dataclass(frozen=True, eq=False)
class NodeDeleted(Result):
    """An entity deleted with its relations (``kb.graph.delete_node``)."""

    id: str
    name: str
    edges_removed: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "edges_removed": self.edges_removed}


# -- memory ------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class MemoryRecord(Result):
    """A stored memory in its public form (mem0's field names: ``memory`` is the text, ``timestamp``
    when it was said)."""

    id: str
    memory: str
    metadata: dict[str, Any]
    role: str | None
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    tenant_id: str | None
    timestamp: str
    created_at: str
    updated_at: str
    relevance: float
    archived: bool
    version: int

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> MemoryRecord:
        """From a memory row of the store."""
        return cls(row["id"], row["text"], row["metadata"], row["role"], row["user_id"], row["agent_id"],
                   row["run_id"], row["tenant_id"], row["said_at"], row["created_at"], row["updated_at"],
                   row["relevance"], row["archived"], row["version"])

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "memory": self.memory, "metadata": self.metadata, "role": self.role,
                "user_id": self.user_id, "agent_id": self.agent_id, "run_id": self.run_id,
                "tenant_id": self.tenant_id, "timestamp": self.timestamp, "created_at": self.created_at,
                "updated_at": self.updated_at, "relevance": self.relevance, "archived": self.archived,
                "version": self.version}


@dataclass(frozen=True, eq=False)
class MemoryList(Result):
    """``kb.memory.get_all``: memories of a scope, oldest said first."""

    results: list[MemoryRecord]

    def to_dict(self) -> dict[str, Any]:
        return {"results": [r.to_dict() for r in self.results]}


@dataclass(frozen=True, eq=False)
class MemoryScores(Result):
    """The parts of a memory hit's score (ContextKit's ``context_graph`` block)."""

    dense: float
    lexical: float
    graph: float
    frequency: float
    personal: float
    success: float
    was_seed: bool
    relevance: float

    @classmethod
    def from_parts(cls, parts: Mapping[str, Any]) -> MemoryScores:
        """From the ranking's per-memory parts."""
        return cls(parts["dense"], parts["lexical"], parts["graph"], parts["frequency"], parts["personal"],
                   parts["success"], parts["was_seed"], parts["relevance"])

    def to_dict(self) -> dict[str, Any]:
        return {"dense": self.dense, "lexical": self.lexical, "graph": self.graph, "frequency": self.frequency,
                "personal": self.personal, "success": self.success, "was_seed": self.was_seed,
                "relevance": self.relevance}


@dataclass(frozen=True, eq=False)
class MemoryHit(Result):
    """One memory found by ``kb.memory.search``, with its score and the score's parts."""

    id: str
    memory: str
    score: float
    metadata: dict[str, Any]
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    tenant_id: str | None
    timestamp: str
    created_at: str
    context_graph: MemoryScores

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "memory": self.memory, "score": self.score, "metadata": self.metadata,
                "user_id": self.user_id, "agent_id": self.agent_id, "run_id": self.run_id,
                "tenant_id": self.tenant_id, "timestamp": self.timestamp, "created_at": self.created_at,
                "context_graph": self.context_graph.to_dict()}


@dataclass(frozen=True, eq=False)
class MemoryLink(Result):
    """An edge between two memories (``REPLY_TO``, ``TEMPORAL_NEXT``, ``TOPIC_SIMILAR`` ...)."""

    src: str
    dst: str
    type: str
    weight: float

    def to_dict(self) -> dict[str, Any]:
        return {"src": self.src, "dst": self.dst, "type": self.type, "weight": self.weight}


@dataclass(frozen=True, eq=False)
class MemorySearch(Result):
    """``kb.memory.search``: hits best first; ``subgraph`` (the edges among them and on the paths that
    led to them) is ``None``, and absent from ``to_dict()``, when there is none."""

    results: list[MemoryHit]
    subgraph: list[MemoryLink] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"results": [r.to_dict() for r in self.results]}
        if self.subgraph:
            out["subgraph"] = [e.to_dict() for e in self.subgraph]
        return out


@dataclass(frozen=True, eq=False)
class MemoryEvent(Result):
    """One memory written by ``add`` (mem0's ``{id, memory, event}``)."""

    id: str
    memory: str
    event: str = "ADD"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "memory": self.memory, "event": self.event}


@dataclass(frozen=True, eq=False)
class MemoriesAdded(Result):
    """``kb.memory.add``: the memories stored and how many edges linked them."""

    results: list[MemoryEvent]
    edges: int

    def to_dict(self) -> dict[str, Any]:
        return {"results": [r.to_dict() for r in self.results], "edges": self.edges}


@dataclass(frozen=True, eq=False)
class MemoryUpdated(Result):
    """``kb.memory.update``: the new text; the old one is the archived ``previous_version``."""

    id: str
    memory: str
    previous_version: str
    edges: int
    event: str = "UPDATE"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "memory": self.memory, "event": self.event,
                "previous_version": self.previous_version, "edges": self.edges}


@dataclass(frozen=True, eq=False)
class MemoryDeleted(Result):
    """``kb.memory.delete``: the memory and how many edges went with it."""

    id: str
    edges: int
    event: str = "DELETE"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "event": self.event, "edges": self.edges}


@dataclass(frozen=True, eq=False)
class MemoryRelevance(Result):
    """A memory's relevance after ``mark_relevant`` / ``mark_irrelevant`` (and its floor)."""

    id: str
    relevance: float
    floor: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "relevance": self.relevance, "floor": self.floor}


@dataclass(frozen=True, eq=False)
class MemoryFeedback(Result):
    """Feedback recorded by ``kb.memory.feedback``."""

    id: str
    helpful: bool

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "helpful": self.helpful}


# -- wiki --------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class PageInfo(Result):
    """A wiki page as listed (``path`` is absolute; ``updated`` its last write)."""

    slug: str
    category: str
    title: str
    path: str
    summary: str
    tags: list[str]
    updated: str
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"slug": self.slug, "category": self.category, "title": self.title, "path": self.path,
                "summary": self.summary, "tags": self.tags, "updated": self.updated, "created_at": self.created_at}


@dataclass(frozen=True, eq=False)
class PageWritten(Result):
    """``kb.wiki.write_page``: the page written, and whether it is new."""

    page: PageInfo
    created: bool

    def to_dict(self) -> dict[str, Any]:
        return {**self.page.to_dict(), "created": self.created}


@dataclass(frozen=True, eq=False)
class LinkFrom(Result):
    """A page linking to the one read, and the line of the link."""

    slug: str
    line: int

    def to_dict(self) -> dict[str, Any]:
        return {"slug": self.slug, "line": self.line}


@dataclass(frozen=True, eq=False)
class PageRead(Result):
    """``kb.wiki.read_page``: the page with its front matter, body (as in the file), links and backlinks."""

    page: PageInfo
    front_matter: dict[str, Any]
    content: str
    links: list[PageLink]
    backlinks: list[LinkFrom]

    def to_dict(self) -> dict[str, Any]:
        return {**self.page.to_dict(), "front_matter": self.front_matter, "content": self.content,
                "links": [ln.to_dict() for ln in self.links], "backlinks": [b.to_dict() for b in self.backlinks]}


@dataclass(frozen=True, eq=False)
class PageHit(Result):
    """A full-text hit of ``kb.wiki.search_wiki`` (raw BM25 ``score``, higher is better)."""

    slug: str
    category: str
    path: str
    title: str
    snippet: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"slug": self.slug, "category": self.category, "path": self.path, "title": self.title,
                "snippet": self.snippet, "score": self.score}


@dataclass(frozen=True, eq=False)
class Backlink(Result):
    """A page linking to a slug (``kb.wiki.backlinks``); ``category`` is None for a page not indexed."""

    slug: str
    line: int
    title: str
    category: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"slug": self.slug, "line": self.line, "title": self.title, "category": self.category}


@dataclass(frozen=True, eq=False)
class LogEntry(Result):
    """One line of ``log.md``, parsed."""

    timestamp: str
    operation: str
    target: str
    summary: str
    line: str

    def to_dict(self) -> dict[str, Any]:
        return {"timestamp": self.timestamp, "operation": self.operation, "target": self.target,
                "summary": self.summary, "line": self.line}


@dataclass(frozen=True, eq=False)
class PageDeleted(Result):
    """A page removed by ``kb.wiki.delete_page`` (``path`` is where its file was)."""

    slug: str
    category: str
    path: str
    deleted: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"slug": self.slug, "category": self.category, "path": self.path, "deleted": self.deleted}


# -- skills ------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class SkillDetail(Result):
    """One skill as indexed (``kb.skills.get``): what its SKILL.md says, where it is, its hash."""

    id: str
    name: str
    description: str
    category: str
    tags: list[str]
    triggers: list[str]
    related: list[str]
    path: str
    root: str
    front_matter: dict[str, Any]
    warnings: list[str]
    body: str
    sha256: str
    updated_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "description": self.description, "category": self.category,
                "tags": self.tags, "triggers": self.triggers, "related": self.related, "path": self.path,
                "root": self.root, "front_matter": self.front_matter, "warnings": self.warnings, "body": self.body,
                "sha256": self.sha256, "updated_at": self.updated_at}


@dataclass(frozen=True, eq=False)
class SkillLink(Result):
    """A linked skill and the weight of the link."""

    id: str
    name: str
    weight: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "weight": self.weight}


@dataclass(frozen=True, eq=False)
class SkillNeighbours(Result):
    """``kb.skills.neighbours``: a skill and its linked skills by edge type (related, sibling, similar)."""

    id: str
    name: str
    category: str
    edges: dict[str, list[SkillLink]]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "category": self.category,
                "edges": {t: [link.to_dict() for link in links] for t, links in self.edges.items()}}


@dataclass(frozen=True, eq=False)
class SkillsInfo(Result):
    """``kb.skills.info``: counts, categories (most skills first), edges by type, unresolved ``related``."""

    skills: int
    roots: list[str]
    categories: dict[str, int]
    edges: dict[str, int]
    unresolved_related: dict[str, list[str]]
    with_vectors: bool

    def to_dict(self) -> dict[str, Any]:
        return {"skills": self.skills, "roots": self.roots, "categories": self.categories, "edges": self.edges,
                "unresolved_related": self.unresolved_related, "with_vectors": self.with_vectors}
