"""The mention graph held in RAM (store/sqlite/mention_graph.py) against SQL on a whole knowledge base (issue 16).

Asks every mention read a search makes (``entity_chunk_counts``, ``entities_chunks`` at limits 1, 3, 20 and
1000, ``chunk_entities``) about every entity and every chunk of ``--kb``, in batches, once answered by SQL and
once from the graph in RAM, and compares the answers (values in order; the keys of ``chunk_entities`` come in
the order asked from RAM, in the index's order from SQL, and no caller reads that order). Prints whether they
are equal, the CPU of both passes, the load's CPU (median of ``--loads``) and the RAM the graph holds.

    python bench/mention_graph_check.py --kb KB [--loads 5] [--out bench/results/mention_graph_check.json]

Opening a knowledge base may apply migrations: point it at a copy.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from graphmem.store.sqlite import mention_graph
from graphmem.store.sqlite.mention_graph import _LOAD_SQL, MentionGraph
from graphmem.store.sqlite.store import SqliteStore


def _answers(store: SqliteStore, nodes: list[str], chunks: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"counts": {}, "entities": {}}
    for i in range(0, len(nodes), 300):
        part = nodes[i:i + 300]
        out["counts"].update(store.entity_chunk_counts(part))
        for limit in (1, 3, 20, 1000):
            got = store.entities_chunks(part, limit)
            out.setdefault(f"recent_{limit}", {}).update({n: [tuple(c) for c in v] for n, v in got.items()})
    for i in range(0, len(chunks), 700):
        out["entities"].update(store.chunk_entities(chunks[i:i + 700]))
    return out


def main(argv: list[str] | None = None) -> int:
    """Compare, time, print, write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kb", required=True, type=Path)
    ap.add_argument("--loads", type=int, default=5)
    ap.add_argument("--out", default="bench/results/mention_graph_check.json", type=Path)
    args = ap.parse_args(argv)
    store = SqliteStore(args.kb / "graph.db")
    conn = store.conn
    nodes = [r[0] for r in conn.execute("SELECT DISTINCT node_id FROM mention_rows")] + ["no-such-node"]
    chunks = [r[0] for r in conn.execute("SELECT chunk_id FROM chunks")] + ["no-such-chunk"]
    random.Random(0).shuffle(nodes)
    random.Random(1).shuffle(chunks)
    cache = store._mention_cache()
    mention_graph.LOAD_AFTER_READS = 10**9  # SQL answers
    t = time.process_time()
    by_sql = _answers(store, nodes, chunks)
    sql_s = time.process_time() - t
    mention_graph.LOAD_AFTER_READS = 0  # the graph is loaded at the next read
    t = time.process_time()
    from_ram = _answers(store, nodes, chunks)
    ram_s = time.process_time() - t
    loads = []
    for _ in range(args.loads):
        t = time.process_time()
        MentionGraph(conn.execute(_LOAD_SQL))
        loads.append((time.process_time() - t) * 1000)
    tracemalloc.start()
    graph = MentionGraph(conn.execute(_LOAD_SQL))
    held_mb = tracemalloc.get_traced_memory()[0] / 1e6
    tracemalloc.stop()
    del graph
    mentions = conn.execute("SELECT count(*) FROM mention_rows").fetchone()[0]
    result = {"kb": str(args.kb), "entities": len(nodes) - 1, "chunks": len(chunks) - 1, "mentions": mentions,
              "equal": by_sql == from_ram, "equal_per_read": {k: by_sql[k] == from_ram[k] for k in by_sql},
              "graph_loaded": cache.loads >= 1, "sql_pass_cpu_s": round(sql_s, 3), "ram_pass_cpu_s": round(ram_s, 3),
              "load_cpu_ms_median": round(statistics.median(loads), 1), "held_mb": round(held_mb, 1)}
    for k, v in result.items():
        print(f"  {k:<20} {v}")
    store.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({**result, "command": " ".join(sys.argv)}, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0 if result["equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
