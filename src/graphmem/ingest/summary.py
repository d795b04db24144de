"""What a bulk ingest (ingest/pipeline.py) did, as it reports it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .readers.base import Skipped

__all__ = ["IngestSummary"]


@dataclass
class IngestSummary:
    """What a bulk ingest did."""

    added: int = 0
    unchanged: int = 0
    new_versions: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    failed: list[Skipped] = field(default_factory=list)
    chunks: int = 0
    entities: int = 0
    relations: int = 0
    mentions: int = 0
    warnings: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    documents: int = 0
    elapsed: float = 0.0
    interrupted: bool = False
    extractor: str = "none"

    def to_dict(self, max_warnings: int = 200) -> dict[str, Any]:
        """Plain data; warnings are capped (their total is in ``warnings_count``)."""
        return {
            "documents": self.documents,
            "added": self.added,
            "unchanged": self.unchanged,
            "new_versions": self.new_versions,
            "skipped": [s.to_dict() for s in self.skipped],
            "failed": [s.to_dict() for s in self.failed],
            "chunks": self.chunks,
            "entities": self.entities,
            "relations": self.relations,
            "mentions": self.mentions,
            "warnings_count": len(self.warnings),
            "warnings": self.warnings[:max_warnings],
            "pruned": self.pruned,
            "elapsed_s": round(self.elapsed, 3),
            "docs_per_s": round(self.documents / self.elapsed, 1) if self.elapsed > 0 else None,
            "interrupted": self.interrupted,
            "extractor": self.extractor,
        }
