"""Shared fixtures: a fresh knowledge base in a temp dir, the seed's quick-start data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmem

QUICKSTART_TEXT = "System crashes due to memory leaks. Memory leaks occur when objects are not released."
QUICKSTART_ENTITIES: list[dict[str, Any]] = [
    {"name": "memory leak", "type": "issue", "supporting_text": "Memory leaks occur when objects are not released."},
    {"name": "system crash", "type": "issue", "supporting_text": "System crashes due to memory leaks."},
]
QUICKSTART_RELATIONS: list[dict[str, Any]] = [
    {"source": "memory leak", "target": "system crash", "type": "causes", "confidence": 1.0,
     "supporting_text": "System crashes due to memory leaks."},
]


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[graphmem.KnowledgeBase]:
    with graphmem.open(tmp_path / "kb") as k:
        yield k


@pytest.fixture
def quickstart(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    return kb.ingest_with_content("doc_1", "System Crash Analysis", "notes/crash.txt", QUICKSTART_TEXT,
                                  QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)


def snapshot(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    """Everything countable in the store, to prove a rejected operation changed nothing."""
    s = kb.stats()
    s.pop("size_bytes")
    s["event_ids"] = [e.id for e in kb.events.list(limit=100000)]
    return s
