"""graphmem: a persistent, compounding context graph for AI agents.

    import graphmem
    with graphmem.open("./kb") as kb:
        kb.ingest_with_content("doc_1", "Crash report", "notes.txt", text, entities, relations)
        kb.query_with_evidence("Why does the system crash?")
"""

from __future__ import annotations

from .errors import BackendError, Conflict, GraphmemError, InvalidInput, NotFound, StoreBusy
from .extraction import EntitySpec, Extraction, RelationSpec, load_extraction_file, parse_extraction
from .ingest.core import IngestResult
from .kb import KnowledgeBase, default_home, open
from .models import Chunk, ChunkHit, Document, Edge, Event, Node, Provenance
from .ontology import Ontology
from .trust import trust_endpoints

__version__ = "0.1.0"

__all__ = [
    "open",
    "default_home",
    "trust_endpoints",
    "KnowledgeBase",
    "IngestResult",
    "Extraction",
    "EntitySpec",
    "RelationSpec",
    "parse_extraction",
    "load_extraction_file",
    "Ontology",
    "Document",
    "Chunk",
    "ChunkHit",
    "Node",
    "Edge",
    "Provenance",
    "Event",
    "GraphmemError",
    "NotFound",
    "InvalidInput",
    "Conflict",
    "BackendError",
    "StoreBusy",
    "__version__",
]
