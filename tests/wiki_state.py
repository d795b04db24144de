"""What a knowledge base's wiki is, for tests that compare two ways of getting there: every file's
digest, and every page row's fields."""

from __future__ import annotations

import hashlib
from typing import Any

import graphmem


def wiki_state(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    """``{"files": {path: sha256}, "rows": [[slug, path, subject, title, ...] per page]}``."""
    root = kb.home / "wiki"
    files = {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(root.rglob("*")) if p.is_file()}
    rows = [[p.slug, p.path, p.subject, p.title, p.summary, p.content_hash, p.front_matter, p.tags, p.entity_type,
             p.contradictions, p.stub] for p in kb.store.list_pages()]
    return {"files": files, "rows": rows}
