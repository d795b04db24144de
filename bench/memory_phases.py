"""CPU per phase of ``kb.memory.search`` (10,000 memories, bench/primitives_kinds.py's knowledge base).

Each store call and search step is wrapped with a process-time counter (no cProfile: its per-call
overhead is most of what a 4 ms search costs); the phases nest (``_seeds`` holds the FTS pass and
``dense_top``, ``_bfs`` holds ``memory_neighbours``, ...). Runs on a copy (searches count uses).

    python bench/memory_phases.py --memory-kb /tmp/search-mem-after [--queries 200]
    PYTHONPATH=<other tree>/src python bench/memory_phases.py ...      # another version, same command
"""

from __future__ import annotations

import argparse
import collections
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import graphmem  # noqa: E402
from graphmem.faces import memory as face  # noqa: E402
from graphmem.memory import search  # noqa: E402
from primitives_kinds import memory_queries  # noqa: E402

STORE_CALLS = ("search_memories_fts", "memory_scope_ids", "memories_mentioning", "memory_neighbours",
               "memories_in_scope", "memory_rank_inputs", "get_memories", "memory_feedback", "record_memory_use",
               "try_write", "memory_bm25", "memory_edges_among")
STEPS = ("rank_memories", "_seeds", "_bfs", "_rerank", "dense_top", "dense_of")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memory-kb", required=True, type=Path)
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    spent: collections.defaultdict[str, float] = collections.defaultdict(float)

    def wrap(owner: Any, name: str) -> None:
        fn = getattr(owner, name)

        def timed(*args: Any, **kw: Any) -> Any:
            t = time.process_time()
            try:
                return fn(*args, **kw)
            finally:
                spent[name] += time.process_time() - t
        setattr(owner, name, timed)

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "kb"
        shutil.copytree(a.memory_kb, copy)
        kb = graphmem.open(copy)
        for name in STORE_CALLS:
            if hasattr(kb.store, name):
                wrap(kb.store, name)
        wrap(kb.embeddings, "embed_query")
        for name in STEPS:
            wrap(search, name)
        face.rank_memories = search.rank_memories
        qs = memory_queries(a.queries + 20)
        for q, u in qs[:20]:
            kb.memory.search(q, user_id=u, limit=10)
        spent.clear()
        t = time.process_time()
        for q, u in qs[20:]:
            kb.memory.search(q, user_id=u, limit=10)
        total = time.process_time() - t
        kb.close()
    print(f"{'search (all)':24s} {total / a.queries * 1000:7.3f} ms  100.0%")
    for name, v in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"{name:24s} {v / a.queries * 1000:7.3f} ms  {v / total * 100:5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
