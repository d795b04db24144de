"""One entry point for every export format."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..context import Context
from ..errors import InvalidInput
from .graphs import graph_rows, write_cypher, write_graphml, write_memory_jsonl, write_neo4j_csv
from .jsonl import export_jsonl

__all__ = ["FORMATS", "export"]

FORMATS = ("jsonl", "graphml", "cypher", "csv", "memory-jsonl")


def export(ctx: Context, fmt: str, out: Path, scope: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write the knowledge base to ``out`` in ``fmt``; ``scope`` keeps one user's/agent's/run's memories
    (graph formats only: the JSONL export is the whole knowledge base, lossless)."""
    if fmt not in FORMATS:
        raise InvalidInput(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "jsonl" and scope:
        raise InvalidInput("scope: the jsonl export is the whole knowledge base; use a graph format "
                           "(graphml, cypher, csv, memory-jsonl) for one scope's memories")
    if fmt != "csv" and out.is_dir():
        raise InvalidInput(f"out: {out} is a folder; give a file name for the {fmt} export")
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int]
    if fmt == "jsonl":
        with out.open("w", encoding="utf-8") as f:
            counts = export_jsonl(ctx, f)
    elif fmt == "graphml":
        with out.open("wb") as fb:
            counts = write_graphml(graph_rows(ctx, scope), fb)
    elif fmt == "cypher":
        with out.open("w", encoding="utf-8") as f:
            counts = write_cypher(graph_rows(ctx, scope), f)
    elif fmt == "csv":
        counts = write_neo4j_csv(graph_rows(ctx, scope), out)
    else:
        with out.open("w", encoding="utf-8") as f:
            counts = write_memory_jsonl(graph_rows(ctx, scope), f)
    return {"format": fmt, "out": str(out), "counts": counts}
