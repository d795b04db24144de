"""Typed results of the faces: frozen dataclasses whose ``to_dict()`` is the JSON the CLI prints.

Each face method that used to build a ``dict`` returns one of these. ``to_dict()`` gives exactly the
dict it returned before (keys in the same order: ``tests/test_cli_json_golden.py`` pins the CLI's
``--json`` bytes). Code written against those dicts keeps working: a result *is* that dict,
read-only (``result["doc_id"]``, ``result == {...}``, ``json.dumps(result)``, ``isinstance(result,
dict)``; nested values read that way are plain data), while new code reads its typed fields
(``result.doc_id``, ``entity.relations[0].evidence``). Mutating a result raises TypeError.

Pure data: no I/O, imports only :mod:`graphmem.models`.
"""

from .base import Result
from .graph import (
    DocumentDeleted,
    EdgeDetail,
    EntityDetail,
    EntityRelation,
    Merged,
    Neighbourhood,
    NeighbourNode,
    NodeDeleted,
    Retyped,
)
from .memory import (
    Backfilled,
    DecayReport,
    GraphReset,
    MemoriesAdded,
    MemoryDeleted,
    MemoryEvent,
    MemoryFeedback,
    MemoryHit,
    MemoryLink,
    MemoryList,
    MemoryRecord,
    MemoryRelevance,
    MemoryScores,
    MemorySearch,
    MemoryStats,
    MemoryUpdated,
    MemoryVersion,
)
from .skills import SkillDetail, SkillLink, SkillNeighbours, SkillsInfo
from .wiki import (
    Backlink,
    LinkFrom,
    LintReport,
    LogEntry,
    PageDeleted,
    PageHit,
    PageInfo,
    PageRead,
    PageWritten,
    SyncReport,
)

__all__ = [
    "Result",
    "DocumentDeleted",
    "Retyped",
    "EdgeDetail",
    "EntityRelation",
    "EntityDetail",
    "NeighbourNode",
    "Neighbourhood",
    "Merged",
    "NodeDeleted",
    "MemoryRecord",
    "MemoryList",
    "MemoryScores",
    "MemoryHit",
    "MemoryLink",
    "MemorySearch",
    "MemoryEvent",
    "MemoriesAdded",
    "MemoryUpdated",
    "MemoryDeleted",
    "MemoryRelevance",
    "MemoryFeedback",
    "MemoryVersion",
    "DecayReport",
    "Backfilled",
    "GraphReset",
    "MemoryStats",
    "PageInfo",
    "PageWritten",
    "LinkFrom",
    "PageRead",
    "PageHit",
    "Backlink",
    "LogEntry",
    "PageDeleted",
    "SyncReport",
    "LintReport",
    "SkillDetail",
    "SkillLink",
    "SkillNeighbours",
    "SkillsInfo",
]
