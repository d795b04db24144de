"""Typed rows the store protocols return (pure data, no I/O).

Tuple-shaped results are ``NamedTuple``\\ s, so callers that unpack or index them keep working
while new code reads fields by name; dict-shaped results (memories, skills, counts) are
``TypedDict``\\ s, so ``row["text"]`` keeps working and a type checker knows each key.
Inputs keep their plain tuple shapes (type aliases below name their fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, TypedDict

from ..models import Edge, Page, Provenance

__all__ = [
    # inputs
    "NameEntry", "VectorItem", "PageClaim", "PageSource", "SkillEdgeAdd", "SkillEdgeReweight", "MemoryEdgeInput",
    "WeightUpdate", "ScopeFilters", "JsonObject", "scope_terms",
    # shared
    "ScoredId", "EmbedRow", "EdgeRow",
    # documents
    "LostEvidence", "DocSource", "ChunkInfo",
    # graph and evidence
    "PruneResult", "MergeCounts", "NodeEdges", "NodeSpellings", "DocVersion", "NodeDocuments", "Claim", "ChunkOffset",
    # vectors
    "VectorBatch", "VectorState",
    # lifecycle
    "StoreStats",
    # wiki
    "PageStat", "PageHit", "Backlink", "IndexCount", "IndexRow", "BrokenLink", "StaleSource", "FlaggedPage",
    "StatedType", "UncitedClaim", "OneWayLink",
    # skills
    "SkillFileRow", "SkillListRow", "SkillRow",
    # memories
    "MemoryRow", "MemoryVersionRow", "MemoryVectorRow", "ScopeState", "MemorySession", "MemoryNeighbour",
    "MemoryRankInputs",
    "MemoryEdgeRow", "MemoryEdgeDecay", "MemoryDecay", "Feedback", "LLMBudget", "MemoryStats",
]

# -- inputs (plain tuples, as callers build them) ----------------------------------------------

JsonObject = dict[str, Any]
"""Decoded JSON object (event payloads, metadata): values are whatever JSON holds."""
NameEntry = tuple[str, str]
"""``(alias as written, normalised alias)``."""
VectorItem = tuple[str, str, bytes]
"""``(item id, text hash, float16 vector bytes)``."""
PageClaim = tuple[str, int, str]
"""``(edge id, line, text)`` of a relation a page states."""
PageSource = tuple[str, int | None]
"""``(doc id, cited version or None)``."""
SkillEdgeAdd = tuple[str, str, str, str, float]
"""``(edge id, source node, type, target node, weight)``."""
SkillEdgeReweight = tuple[str, float]
"""``(edge id, new weight)``."""
MemoryEdgeInput = tuple[str, str, str, str, float, str]
"""``(edge id, source memory, target memory, type, weight, now)``."""
WeightUpdate = tuple[float, str]
"""``(new value, id)`` (the order of the UPDATE's parameters)."""


ScopeFilters = Mapping[str, str | None]
"""Memory scope filters: keys ``tenant_id``, ``user_id``, ``agent_id``, ``run_id`` (equality on
each one given; None or absent: no filter) and ``scope_key`` (the exact isolation key)."""


def scope_terms(filters: ScopeFilters) -> list[tuple[str, str]]:
    """The ``(column, value)`` pairs a scope filter limits a memory read to, in one order for every
    backend (each writes its own placeholders and archived test around them)."""
    return [(key, value) for key in ("tenant_id", "user_id", "agent_id", "run_id", "scope_key")
            if (value := filters.get(key)) is not None]


# -- shared shapes ---------------------------------------------------------------------------


class ScoredId(NamedTuple):
    """An item id with a score (higher is better)."""

    id: str
    score: float


class EmbedRow(NamedTuple):
    """An item to (re)embed: its row id (the resume cursor), id and text."""

    rowid: int
    item_id: str
    text: str


class EdgeRow(NamedTuple):
    """A light edge for graph walks (no JSON decoding)."""

    source: str
    type: str
    target: str
    confidence: float
    edge_id: str


# -- documents -------------------------------------------------------------------------------


class LostEvidence(NamedTuple):
    """Nodes and edges that lost evidence when a document went."""

    node_ids: set[str]
    edge_ids: set[str]


class DocSource(NamedTuple):
    """A latest document and its source."""

    doc_id: str
    source: str


class ChunkInfo(NamedTuple):
    """Where a chunk comes from."""

    doc_id: str
    version: int
    title: str
    is_latest: bool


# -- graph and evidence ------------------------------------------------------------------------


class PruneResult(NamedTuple):
    """Ids removed by ``prune_unsupported``."""

    node_ids: list[str]
    edge_ids: list[str]


class MergeCounts(TypedDict):
    """What ``merge_nodes`` moved."""

    edges_moved: int
    edges_folded: int
    self_loops_dropped: int


class NodeEdges(NamedTuple):
    """A node's strongest outgoing and incoming edges."""

    outgoing: list[Edge]
    incoming: list[Edge]


class NodeSpellings(NamedTuple):
    """A node found by a name search: its id, score and every spelling (name first, then aliases)."""

    id: str
    score: float
    spellings: list[str]


class DocVersion(NamedTuple):
    """A document id with a version."""

    doc_id: str
    version: int


class NodeDocuments(NamedTuple):
    """Documents naming a node (first named first) and whether more exist."""

    documents: list[DocVersion]
    more: bool


class Claim(NamedTuple):
    """An edge a document version supports, with that version's first evidence for it."""

    edge: Edge
    evidence: Provenance


class ChunkOffset(NamedTuple):
    """A chunk mentioning an entity, with the entity's first offset in it."""

    chunk_id: str
    first: int


# -- vectors ---------------------------------------------------------------------------------


class VectorBatch(NamedTuple):
    """Parallel lists of vector row ids, item ids and vector bytes."""

    row_ids: list[int]
    item_ids: list[str]
    vectors: list[bytes]


class VectorState(NamedTuple):
    """An in-memory vector index is current iff both values match the store's."""

    max_id: int
    deletions: int


# -- lifecycle -------------------------------------------------------------------------------


class StoreStats(TypedDict):
    """Counts of what is stored, and the size on disk."""

    documents: int
    document_versions: int
    chunks: int
    nodes: dict[str, int]
    entities: int
    edges: int
    provenance: int
    mentions: int
    entity_types: int
    relation_types: int
    events: int
    size_bytes: int


# -- wiki ------------------------------------------------------------------------------------


class PageStat(NamedTuple):
    """What a page's file looked like when last indexed."""

    slug: str
    size: int
    mtime_ns: int
    content_hash: str


class PageHit(NamedTuple):
    """A full-text page hit (matched words in the snippet in ``**bold**``)."""

    page: Page
    score: float
    snippet: str


class Backlink(NamedTuple):
    """A link to a page from ``source``, on ``line``."""

    source: str
    line: int


class IndexCount(NamedTuple):
    """Pages in one shard of index.md."""

    category: str
    shard: str
    pages: int


class IndexRow(NamedTuple):
    """One line of index.md."""

    slug: str
    title: str
    summary: str


class BrokenLink(NamedTuple):
    """A link to a page that does not exist."""

    source: str
    target: str
    line: int


class StaleSource(NamedTuple):
    """A citation of a superseded (or deleted: ``latest_version`` None) document."""

    page: str
    doc_id: str
    cited_version: int | None
    latest_version: int | None


class FlaggedPage(NamedTuple):
    """A page with flagged contradictions."""

    slug: str
    contradictions: int


class StatedType(NamedTuple):
    """A page stating an entity type."""

    slug: str
    subject: str | None
    title_norm: str
    type: str


class UncitedClaim(NamedTuple):
    """A claim whose relation has no evidence left (or is gone: ``relation_missing``)."""

    page: str
    edge_id: str
    line: int
    text: str
    relation_missing: bool


class OneWayLink(NamedTuple):
    """``source`` links ``target``, which does not link back."""

    source: str
    target: str


# -- skills (JSON columns stay JSON text: callers decode what they read) ------------------------


class SkillFileRow(TypedDict):
    """What a skill file looked like when indexed."""

    skill_id: str
    root: str
    sha256: str
    size: int
    mtime_ns: int
    node_id: str


class SkillListRow(TypedDict):
    """A skill without its body; ``tags``, ``triggers`` and ``related`` are JSON arrays as text."""

    rid: int
    skill_id: str
    node_id: str
    root: str
    path: str
    name: str
    name_key: str
    description: str
    category: str
    tags: str
    triggers: str
    related: str
    sha256: str
    size: int
    mtime_ns: int


class SkillRow(SkillListRow):
    """A whole skill: its body, ``meta`` (JSON object as text) and when it was indexed."""

    body: str
    meta: str
    updated_at: str


# -- memories --------------------------------------------------------------------------------


class MemoryRow(TypedDict):
    """A memory as stored (``metadata`` decoded)."""

    rowid_: int
    id: str
    tenant_id: str | None
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    scope_key: str
    role: str | None
    text: str
    metadata: JsonObject
    said_at: str
    created_at: str
    updated_at: str
    used_at: str
    version: int
    quality: float
    floor: float
    relevance: float
    archived: bool
    uses: int
    helpful: int
    unhelpful: int


class MemoryVersionRow(TypedDict):
    """One history entry of a memory."""

    memory_id: str
    version: int
    event: str
    old_text: str | None
    new_text: str | None
    ts: str


class MemoryVectorRow(NamedTuple):
    """A memory's row id, id and vector (None: archived, or no vector of the model)."""

    rowid: int
    memory_id: str
    vector: bytes | None


class ScopeState(NamedTuple):
    """Memory generation (bumped by updates, deletions, archiving), count and max row id of a scope key."""

    generation: int
    memories: int
    max_rowid: int


class MemorySession(NamedTuple):
    """The last memory of a session."""

    memory_id: str
    said_at: str


class MemoryNeighbour(NamedTuple):
    """A memory linked to another one."""

    other: str
    weight: float
    type: str


class MemoryRankInputs(NamedTuple):
    """What a memory search's rerank reads of each candidate (its use and feedback counters and
    its decay state), without the text and metadata only the final results need."""

    uses: int
    helpful: int
    unhelpful: int
    quality: float
    floor: float
    used_at: str


class MemoryEdgeRow(NamedTuple):
    """An edge between two memories."""

    source: str
    target: str
    type: str
    weight: float


class MemoryEdgeDecay(NamedTuple):
    """Decay inputs of a memory edge (``base_weight``: its weight when made)."""

    edge_id: str
    type: str
    weight: float
    base_weight: float
    created_at: str
    source_used_at: str
    target_used_at: str


class MemoryDecay(NamedTuple):
    """Decay inputs of a live memory."""

    memory_id: str
    used_at: str
    quality: float
    floor: float
    relevance: float


class Feedback(NamedTuple):
    """One feedback on a memory."""

    query: str
    helpful: bool


class LLMBudget(NamedTuple):
    """An LLM budget's state."""

    day: str
    tokens: int
    cooldown_until: str | None


class MemoryStats(TypedDict):
    """Memory and memory-edge counts within a scope."""

    memories: int
    archived: int
    edges: int
    edge_types: dict[str, int]
    mentions: int
