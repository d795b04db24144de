"""Where a default 2Wiki search spends its CPU: per pipeline step and per store read (issues 15, 16).

    python bench/search_stages.py --kb KB [--queries 200]

Wraps the passage pipeline's steps (``retrieval/passages.py``) and the store reads it makes with CPU
timers, runs the default search over the title questions of bench/primitives.py (20 warm-up ones
first) and prints CPU ms per search for each (nested: a step includes its reads) and the number of
top-level SQL statements per search. Run it once per version (``PYTHONPATH=<other checkout>/src``)
on the same knowledge base and compare; names that one version lacks are simply not listed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
import graphmem.retrieval.passages as passages  # noqa: E402
import graphmem.retrieval.search as search_mod  # noqa: E402
from primitives import queries_for  # noqa: E402

STEPS = ["_query_vector", "_first_stage", "_graph_seeds", "_walk_seeds", "_expand", "_chunk_hits", "combine"]
READS = ["rank_chunks", "find_nodes", "search_node_spellings", "search_node_names", "get_nodes", "chunk_entities",
         "entities_chunks", "adjacency", "entity_chunk_counts", "chunk_info", "chunk_bm25", "get_chunks",
         "node_names"]
GRAPH = ["chunk_counts", "_fetch"]


def _timed(fn: Callable[..., Any], label: str, acc: dict[str, float]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        t = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[label] += time.process_time() - t
    return timed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--kb", required=True, type=Path, help="a 2Wiki knowledge base (bench/primitives.py builds one)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", type=Path, default=None, help="also write the figures as JSON")
    args = ap.parse_args(argv)
    qs = queries_for(args.data, args.queries + 20)
    kb = graphmem.open(args.kb)
    acc: dict[str, float] = defaultdict(float)
    store = kb.ctx.store
    for name in READS:
        if hasattr(store, name):
            setattr(store, name, _timed(getattr(store, name), f"store.{name}", acc))
    for name in GRAPH:
        if hasattr(passages.PassageGraph, name):
            setattr(passages.PassageGraph, name, _timed(getattr(passages.PassageGraph, name), f"graph.{name}", acc))
    for name in STEPS:
        setattr(passages, name, _timed(getattr(passages, name), name, acc))
    search_mod.rerank = _timed(search_mod.rerank, "rerank", acc)
    for q in qs[:20]:
        kb.search(q)
    acc.clear()
    statements = [0]

    def count(sql: str) -> None:
        if not sql.startswith("--"):  # FTS5's own nested statements start with a comment
            statements[0] += 1

    conn = store.conn  # type: ignore[attr-defined]  # the SQLite backend's connection
    conn.set_trace_callback(count)
    t = time.process_time()
    for q in qs[20:]:
        kb.search(q, k=10)
    total = time.process_time() - t
    conn.set_trace_callback(None)
    kb.close()
    n = len(qs) - 20
    rows = {"total": total / n * 1000, **{k: v / n * 1000 for k, v in acc.items()}}
    print(f"{n} default searches; CPU ms per search (steps include their reads); "
          f"{statements[0] / n:.1f} SQL statements per search")
    for name, ms in sorted(rows.items(), key=lambda kv: -kv[1]):
        print(f"  {ms:7.3f}  {name}")
    if args.out is not None:
        args.out.write_text(json.dumps({"cpu_ms": rows, "statements": statements[0] / n}, indent=2),
                            encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
