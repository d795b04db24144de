"""Pure data: the records graphmem stores and returns.

No I/O and no SQL here; backends map these to rows, faces build and return them.
Every model has ``to_dict()`` giving plain JSON-ready data for the CLI and servers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "plain",
    "Document",
    "Chunk",
    "Node",
    "Edge",
    "Provenance",
    "Event",
    "ChunkHit",
    "Mention",
    "NodeKind",
    "ENTITY",
    "MEMORY",
    "SKILL",
    "PAGE",
    "Page",
    "PageLink",
]

NodeKind = str
ENTITY: NodeKind = "entity"
MEMORY: NodeKind = "memory"
SKILL: NodeKind = "skill"
PAGE: NodeKind = "page"


class _Plain:
    def to_dict(self) -> dict[str, Any]:
        """Return the record as plain JSON-serialisable data."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Document(_Plain):
    """One immutable version of a document. ``(doc_id, version)`` identifies it."""

    doc_id: str
    version: int
    title: str
    source: str
    content: str
    content_hash: str
    metadata: dict[str, Any]
    created_at: str
    is_latest: bool = True
    chunk_count: int = 0


@dataclass(frozen=True)
class Chunk(_Plain):
    """A passage of a document version; ``start``/``end`` are offsets into its content."""

    chunk_id: str
    doc_id: str
    version: int
    ordinal: int
    start: int
    end: int
    text: str


@dataclass
class Node(_Plain):
    """A vertex of the graph: an entity, and later a memory, skill or page.

    ``manual`` marks knowledge added by hand (no provenance needed to keep it alive).
    """

    id: str
    kind: NodeKind
    name: str
    type: str
    aliases: list[str] = field(default_factory=list)
    properties: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""
    relevance: float = 1.0
    archived: bool = False
    manual: bool = False


@dataclass
class Edge(_Plain):
    """A directed, typed relation ``source --[type]--> target`` between two nodes."""

    id: str
    source: str
    target: str
    type: str
    confidence: float
    created_at: str = ""
    updated_at: str = ""
    valid_from: str | None = None
    valid_to: str | None = None
    manual: bool = False
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Provenance(_Plain):
    """One piece of evidence for a node or an edge.

    ``start``/``end`` are character offsets into the document version's content; they are
    ``None`` when the supporting text could not be located (never a made-up span).
    """

    item_kind: str  # "node" | "edge"
    item_id: str
    doc_id: str
    version: int
    chunk_id: str | None
    start: int | None
    end: int | None
    text: str
    confidence: float | None = None
    id: int | None = None
    created_at: str = ""


@dataclass(frozen=True)
class Mention(_Plain):
    """One occurrence of an entity in a chunk (offsets into the document version)."""

    node_id: str
    chunk_id: str
    doc_id: str
    version: int
    start: int
    end: int


@dataclass(frozen=True)
class Event(_Plain):
    """An entry of the append-only change log."""

    id: int
    type: str
    target: str
    timestamp: str
    payload: dict[str, Any]
    actor: str | None = None


@dataclass(frozen=True)
class ChunkHit(_Plain):
    """A full-text search result over chunks."""

    chunk: Chunk
    title: str
    score: float
    snippet: str

    def to_dict(self) -> dict[str, Any]:
        """Flatten the chunk into the hit for JSON output."""
        out = self.chunk.to_dict()
        out.update(title=self.title, score=self.score, snippet=self.snippet)
        return out


@dataclass
class Page(_Plain):
    """A wiki page as indexed: its file ``wiki/<path>`` holds the text a person reads.

    ``content`` is the indexed body (front matter and graphmem's markers removed);
    ``subject`` names what a generated page is about (``entity:<node id>``, ``doc:<doc id>``).
    """

    slug: str
    category: str
    title: str
    path: str
    summary: str = ""
    tags: list[str] = field(default_factory=list)
    front_matter: dict[str, Any] = field(default_factory=dict)
    content: str = ""
    content_hash: str = ""
    size: int = 0
    mtime_ns: int = 0
    node_id: str | None = None
    subject: str | None = None
    entity_type: str | None = None
    contradictions: int = 0
    stub: bool = False
    created_at: str = ""
    updated_at: str = ""
    shard: str = ""
    id: int | None = None
    # The file's exact text (what content_hash hashes), read with content: a host whose wiki/ folder lacks
    # the file writes it from here (several folders can share one store).
    text: str = ""


class PageLink(NamedTuple):
    """A ``[[target]]`` or ``[[target|label]]`` wikilink on line ``line`` (1-based) of a page.

    A tuple rather than a dataclass: pages are parsed on every write, links by the dozen.
    """

    target: str
    line: int
    label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {"target": self.target, "line": self.line, "label": self.label}


def plain(obj: Any) -> Any:
    """A library result as JSON-ready data: typed results through their ``to_dict()``, dicts, lists
    and tuples recursively (what the CLI, the MCP server and the HTTP API print)."""
    if hasattr(obj, "to_dict"):
        return plain(obj.to_dict())
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj
