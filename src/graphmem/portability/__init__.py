"""Moving a knowledge base: the lossless JSONL export and its import, the graph in other tools' formats
(GraphML, Cypher, neo4j-admin CSV, the MCP memory server's memory.jsonl), backup, restore, check, and the
migration to another backend."""

from __future__ import annotations

from .backup import backup, check, restore
from .export import FORMATS, export
from .jsonl import export_jsonl, import_jsonl, read_export
from .migrate import migrate

__all__ = ["FORMATS", "export", "export_jsonl", "import_jsonl", "read_export", "backup", "restore", "check", "migrate"]
