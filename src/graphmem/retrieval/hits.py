"""What a passage search returns: hits with their score parts and evidence, and the result."""

from __future__ import annotations

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

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the ``--json`` hit shape)."""
        return {
            "kind": self.kind, "id": self.id, "doc_id": self.doc_id, "chunk_id": self.chunk_id,
            "version": self.version, "title": self.title, "text": self.text, "score": round(self.score, 6),
            "parts": {k: round(v, 6) for k, v in self.parts.items()}, "seed": self.seed,
            "citations": self.citations, "path": self.path,
        }


@dataclass
class SearchResult:
    """Hits, the subgraph that connects them, notes, and (on request) a context block."""

    query: str
    hits: list[Hit]
    subgraph: list[dict[str, Any]]
    notes: list[str]
    context: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{"query", "hits": [...], "subgraph": [...], "notes", "context"?}``."""
        out: dict[str, Any] = {"query": self.query, "hits": [h.to_dict() for h in self.hits],
                               "subgraph": self.subgraph, "notes": self.notes}
        if self.context is not None:
            out["context"] = self.context
        return out
