"""SQL statements and CPU per ``kb.memory.search`` (10,000 memories, bench/primitives_kinds.py's knowledge base).

The statement count is exact (SQLite's trace callback, trigger lines left out), so two versions compare without
the noise of a shared machine; the CPU figure is the best of ``--rounds`` rounds of the same searches after
``--warmup`` searches (a warm process: an agent loop or a server), with the part spent in the use-count
transaction (``store.try_write``: BEGIN, the counts, their event, COMMIT) of that round beside it. Runs on a copy
(searches count uses).

    python bench/memory_statements.py --memory-kb /tmp/search-mem-after
    PYTHONPATH=<other tree>/src python bench/memory_statements.py --memory-kb /tmp/search-mem-after
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import graphmem  # noqa: E402
from primitives_kinds import memory_queries  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memory-kb", required=True, type=Path)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "kb"
        shutil.copytree(a.memory_kb, copy)
        kb = graphmem.open(copy)
        qs = memory_queries(a.warmup + a.queries)
        for q, u in qs[: a.warmup]:
            kb.memory.search(q, user_id=u, limit=10)
        seen: list[str] = []
        kb.store.conn.set_trace_callback(seen.append)  # type: ignore[attr-defined]
        for q, u in qs[a.warmup:]:
            kb.memory.search(q, user_id=u, limit=10)
        kb.store.conn.set_trace_callback(None)  # type: ignore[attr-defined]
        writing = [0.0]
        try_write = kb.store.try_write

        def timed_write(fn: Any) -> bool:
            t = time.process_time()
            try:
                return try_write(fn)
            finally:
                writing[0] += time.process_time() - t

        kb.store.try_write = timed_write  # type: ignore[method-assign]
        rounds = []
        for _ in range(a.rounds):
            writing[0] = 0.0
            t = time.process_time()
            for q, u in qs[a.warmup:]:
                kb.memory.search(q, user_id=u, limit=10)
            rounds.append(((time.process_time() - t) / a.queries * 1000, writing[0] / a.queries * 1000))
        kb.close()
    kinds: collections.Counter[str] = collections.Counter()
    for s in seen:
        if not s.startswith("--"):
            kinds[re.sub(r"\s+", " ", s)[:70]] += 1
    print(f"SQL statements per search: {sum(kinds.values()) / a.queries:.2f}")
    for s, n in kinds.most_common():
        print(f"  {n / a.queries:6.2f}  {s}")
    best = min(rounds)
    print(f"CPU per search (best of {a.rounds} rounds of {a.queries}): {best[0]:.3f} ms, of which the use-count"
          f" transaction {best[1]:.3f} ms; rounds {' '.join(f'{r:.3f}' for r, _ in rounds)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
