"""What a passage search returns: hits with their score parts and evidence, and the result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Hit", "SearchResult", "KINDS"]

KINDS = ("chunk", "entity", "document", "page")


@dataclass
class Hit:
    """One result with its score parts, evidence and how it was reached."""

    kind: str
    id: str
    score: float
    parts: dict[str, float]
    seed: bool
    title: str
    text: str
    doc_id: str | None = None
    chunk_id: str | None = None
    version: int | None = None
    citations: list[dict[str, Any]] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    # What the graph did to a passage's place against the first stage (lexical + dense alone):
    # "added" (only the walk found it), "up", "down", "kept"; None for other kinds.
    graph_move: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the ``--json`` hit shape)."""
        return {
            "kind": self.kind, "id": self.id, "doc_id": self.doc_id, "chunk_id": self.chunk_id,
            "version": self.version, "title": self.title, "text": self.text, "score": round(self.score, 6),
            "parts": {k: round(v, 6) for k, v in self.parts.items()}, "seed": self.seed,
            "citations": self.citations, "path": self.path, "graph_move": self.graph_move,
        }


class SearchResult:
    """Hits, the subgraph that connects them, notes, and (on request) a context block.

    ``subgraph`` may be given as a function of no arguments: it is then built on first use
    (most callers of the library read only the hits; the relations among them cost a few queries).
    """

    def __init__(self, query: str, hits: list[Hit],
                 subgraph: list[dict[str, Any]] | Callable[[], list[dict[str, Any]]], notes: list[str],
                 context: str | None = None, timings_ms: dict[str, float] | None = None) -> None:
        self.query = query
        self.hits = hits
        self._subgraph = subgraph
        self.notes = notes
        self.context = context
        self.timings_ms = {} if timings_ms is None else timings_ms

    @property
    def subgraph(self) -> list[dict[str, Any]]:
        """The strongest relations among the hits' entities (built on first use)."""
        if callable(self._subgraph):
            self._subgraph = self._subgraph()
        return self._subgraph

    @subgraph.setter
    def subgraph(self, value: list[dict[str, Any]]) -> None:
        self._subgraph = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SearchResult):
            return NotImplemented
        return (self.query, self.hits, self.subgraph, self.notes, self.context) == (
            other.query, other.hits, other.subgraph, other.notes, other.context)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SearchResult(query={self.query!r}, hits={self.hits!r}, notes={self.notes!r})"

    def to_dict(self) -> dict[str, Any]:
        """``{"query", "hits": [...], "subgraph": [...], "notes", "context"?}``."""
        out: dict[str, Any] = {"query": self.query, "hits": [h.to_dict() for h in self.hits],
                               "subgraph": self.subgraph, "notes": self.notes}
        if self.context is not None:
            out["context"] = self.context
        return out
