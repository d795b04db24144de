"""The event types of the change log, and the names ContextKit gives the same changes.

graphmem's own names are ``<what>.<change>`` (``node.added``, ``memory.feedback``, ``wiki.write``); they are
what the store holds and what ``graphmem events --type`` filters on. ContextKit users subscribe with its
names (``node_added``, ``memory_feedback_recorded``): :func:`contextkit_name` and :func:`graphmem_types` map
between the two, so that one log serves both vocabularies without storing two names per event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InvalidInput

__all__ = ["EVENT_TYPES", "CONTEXTKIT_TYPES", "SCOPE_FIELDS", "contextkit_name", "graphmem_types",
           "filter_types", "event_scope", "matches_scope"]

EVENT_TYPES: dict[str, str] = {
    # documents (and their chunks, evidence records and mentions, counted in the payload)
    "document.added": "a new document: its first version, chunks, entities, relations, evidence, mentions",
    "document.versioned": "changed content of a known document: a new version with its chunks and evidence",
    "document.deleted": "a document with all its versions and the evidence it gave",
    # the knowledge graph
    "node.added": "an entity (by hand or extracted)",
    "node.updated": "an entity added again by hand: new aliases or properties",
    "node.retyped": "an entity's type changed",
    "node.merged": "an entity merged into another (its names become aliases)",
    "node.removed": "an entity deleted (by hand, or left without evidence)",
    "edge.added": "a relation (by hand or extracted)",
    "edge.updated": "a relation's confidence set by hand",
    "edge.removed": "a relation deleted (by hand, or left without evidence)",
    # conversational memories and their context graph
    "memory.added": "a memory, with the edges that link it into the context graph",
    "memory.updated": "a memory's text changed (a new version in its history)",
    "memory.deleted": "a memory and its edges",
    "memory.deleted_all": "every memory of a scope",
    "memory.marked": "a memory's relevance raised or lowered",
    "memory.accessed": "memories returned by a search: their use counts and decay clocks moved",
    "memory.feedback": "a search result rated helpful or not",
    "memory.decayed": "relevance decay: edges weakened or pruned, memories archived",
    "memory.labelled": "LLM-labelled edges (contradicts, supports) between memories",
    "memory.llm_budget_spent": "the LLM labelling budget was used up (cool-down)",
    "memory.backfilled": "context-graph edges built for memories stored before it existed",
    "memory.graph_reset": "the context graph's edges dropped for a scope",
    # skills, wiki pages, vectors
    "skills.built": "skills indexed from folders (added, updated, removed)",
    "skills.cleared": "every skill dropped before a rebuild",
    "wiki.write": "a wiki page written",
    "wiki.ingest": "a wiki page regenerated after an ingest",
    "wiki.sync": "a wiki page edited outside graphmem and read back",
    "wiki.delete": "a wiki page deleted",
    "wiki.lint": "the wiki linted",
    "vectors.reindexed": "every vector re-embedded with another model",
    "kb.imported": "a knowledge base loaded from an export",
    "kb.migrated": "a knowledge base copied to another store (graphmem migrate)",
}
"""graphmem's event types and what each records (``wiki.*`` has further operations)."""

CONTEXTKIT_TYPES: dict[str, tuple[str, ...]] = {
    "node_added": ("node.added", "memory.added", "document.added"),
    "node_updated": ("node.updated", "node.retyped", "node.merged", "memory.updated", "document.versioned"),
    "node_archived": ("memory.decayed",),
    "node_deleted": ("node.removed", "memory.deleted", "document.deleted"),
    "node_relevance_bumped": ("memory.marked",),
    "node_accessed": ("memory.accessed",),
    "edge_added": ("edge.added", "memory.labelled", "memory.backfilled"),
    "edge_updated": ("edge.updated",),
    "edge_decayed": ("memory.decayed",),
    "edge_pruned": ("edge.removed", "memory.decayed"),
    "memory_feedback_recorded": ("memory.feedback",),
    "reset": ("memory.deleted_all", "memory.graph_reset", "skills.cleared"),
}
"""ContextKit's event names and the graphmem types that carry the same change."""

_TO_CONTEXTKIT = {g: ck for ck, gs in reversed(CONTEXTKIT_TYPES.items()) for g in gs}

SCOPE_FIELDS = ("user_id", "agent_id", "run_id", "tenant_id")


def contextkit_name(event_type: str) -> str:
    """ContextKit's name for a graphmem event type (the type itself when ContextKit has none)."""
    return _TO_CONTEXTKIT.get(event_type, event_type)


def graphmem_types(names: Iterable[str]) -> list[str]:
    """The graphmem types behind ``names``, each a graphmem type or a ContextKit name."""
    out: list[str] = []
    for name in names:
        out += CONTEXTKIT_TYPES.get(name, (name,))
    return list(dict.fromkeys(out))


def filter_types(names: Iterable[str] | str | None, field: str = "types") -> list[str] | None:
    """The graphmem types a filter asks for (ContextKit names mapped), None for no filter. A name that is
    neither is InvalidInput: a filter by a misspelt or foreign name answered nothing, as if no such event
    had ever happened. (``wiki.<operation>`` is open: a page write names its operation.)"""
    if names is None:
        return None
    if isinstance(names, (bytes, Mapping)) or not isinstance(names, (str, Iterable)):
        raise InvalidInput(f"{field}: expected an event type or a list of them, got {type(names).__name__}")
    listed = [names] if isinstance(names, str) else list(names)  # any iterable: EVENT_TYPES.keys(), a generator
    for name in listed:
        if not isinstance(name, str) or not (name in EVENT_TYPES or name in CONTEXTKIT_TYPES
                                             or (name.startswith("wiki.") and len(name) > 5)):
            raise InvalidInput(f"{field}: {name!r} is not an event type; use one of graphmem's ("
                               f"{', '.join(list(EVENT_TYPES)[:4])}, ... : graphmem.feed.EVENT_TYPES) or "
                               f"ContextKit's ({', '.join(list(CONTEXTKIT_TYPES)[:3])}, ...)")
    return graphmem_types(listed) if listed else None


def event_scope(payload: Mapping[str, Any]) -> dict[str, str]:
    """The scope (user, agent, run, tenant) an event's payload names; ``{}`` for global changes."""
    return {f: str(payload[f]) for f in SCOPE_FIELDS if payload.get(f) is not None}


def matches_scope(payload: Mapping[str, Any], scope: Mapping[str, Any] | None) -> bool:
    """True when every field of ``scope`` equals the event's (no scope: every event matches)."""
    if not scope:
        return True
    have = event_scope(payload)
    return all(have.get(k) == str(v) for k, v in scope.items() if v is not None)
