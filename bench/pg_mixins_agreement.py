"""How closely the PostgreSQL backend's node-name, page, memory and skill searches rank like the SQLite
backend's (issue 20, the graph/wiki/memory/skills mixins).

One run, one process: the 2Wiki corpus's first --passages passages are stored in a SQLite store and in a
PostgreSQL store (a fresh database on GRAPHMEM_TEST_PG_URL's server, or a pgserver started for the run) as
entities named by the passage titles, wiki pages (title, text), memories (text, five users) and skills
(title as name, text as body); then the same queries (the 100 dev questions, plus passage phrases up to
--queries) are run through ``search_node_names``, ``search_pages``, ``search_memories_fts`` (one user's
scope) and ``skill_bm25`` on both. Per search: overlap@10 (shared ids of the two top 10s, over the larger of
the two sizes, 1.0 when both are empty), the share of identical top-10 orders, and the median / p95 time of
one call (CPU of this process: for PostgreSQL the client side only; wall time is noisy on a loaded machine).
Prints a table, writes JSON.

    python bench/pg_mixins_agreement.py --data ../shared/data --passages 2000 --queries 300 \\
        --out bench/results/pg_mixins_agreement.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from common import percentile  # noqa: E402
from graphmem.models import Node, Page  # noqa: E402
from graphmem.store import open_store  # noqa: E402
from graphmem.text import normalize_name  # noqa: E402
from pg_server import drop_database, fresh_database  # noqa: E402

T0 = "2026-01-01T00:00:00.000Z"
SKILL_WEIGHTS = (10.0, 5.0, 3.0, 2.0, 1.0)


def _queries(corpus: list[dict[str, str]], dev: list[dict[str, str]], n: int) -> list[str]:
    rng = random.Random(20)
    out = [q["question"] for q in dev][:n]
    while len(out) < n:
        words = rng.choice(corpus)["text"].split()
        start = rng.randrange(max(1, len(words) - 6))
        out.append(" ".join(words[start:start + rng.randint(2, 7)]))
    return out


def _fill(store: Any, corpus: list[dict[str, str]]) -> float:
    """Write the passages as entities, pages, memories and skills; returns the CPU seconds it took."""
    t = time.process_time()
    for start in range(0, len(corpus), 250):
        with store.transaction():
            for i, p in enumerate(corpus[start:start + 250], start):
                title, text = p["title"], p["text"]
                store.insert_node(Node(f"n{i}", "entity", title, "thing", created_at=T0, updated_at=T0),
                                  [(title, f"{normalize_name(title)}#{i}")])
                store.save_page(Page(slug=f"p{i}", category="entities", title=title, path=f"entities/p{i}.md",
                                     content=text, content_hash=f"h{i}", created_at=T0, updated_at=T0), [], [], [])
                store.insert_memory({"id": f"m{i}", "text": text, "said_at": T0, "created_at": T0,
                                     "user_id": f"u{i % 5}", "scope_key": f"u{i % 5}|None"})
                store.insert_node(Node(f"skill:s{i}", "skill", title, "skill", created_at=T0, updated_at=T0), [])
                store.upsert_skill({"skill_id": f"s{i}", "node_id": f"skill:s{i}", "root": "/r", "path": f"/r/s{i}",
                                    "name": title, "name_key": title.lower(), "description": "", "category": "c",
                                    "tags": [], "triggers": [], "related": [], "body": text, "meta": {},
                                    "sha256": f"h{i}", "size": len(text), "mtime_ns": 0, "updated_at": T0})
    return time.process_time() - t


SEARCHES: dict[str, Callable[[Any, str], list[str]]] = {
    "node names": lambda s, q: [h.id for h in s.search_node_names(q, "entity", 10)],
    "pages": lambda s, q: [h.page.slug for h in s.search_pages(q, 10)],
    "memories (one user)": lambda s, q: [h.id for h in s.search_memories_fts(q, {"user_id": "u1"}, False, 10)],
    "skills": lambda s, q: [h.id for h in s.skill_bm25(q, SKILL_WEIGHTS, 10)],
}


def _timed(store: Any, fn: Callable[[Any, str], list[str]], queries: list[str]) -> tuple[list[list[str]], list[float],
                                                                                           list[float]]:
    results, cpu, wall = [], [], []
    for q in queries:
        c, w = time.process_time(), time.perf_counter()
        results.append(fn(store, q))
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return results, cpu, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--passages", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    corpus = json.loads((args.data / "2wiki" / "2wikimultihopqa_corpus.json").read_text())[: args.passages]
    dev = json.loads((args.data / "2wiki" / "2wikimultihopqa_dev100.json").read_text())
    queries = _queries(corpus, dev, args.queries)
    name, url = fresh_database("gm_bench_mixins")
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = open_store(Path(tmp))
        pg = open_store(Path(tmp), url=url)
        try:
            fill = {"sqlite": _fill(sqlite, corpus), "postgres": _fill(pg, corpus)}
            rows = []
            for label, fn in SEARCHES.items():
                a, a_cpu, a_wall = _timed(sqlite, fn, queries)
                b, b_cpu, b_wall = _timed(pg, fn, queries)
                overlap = [1.0 if not x and not y else len(set(x) & set(y)) / max(len(x), len(y)) for x, y in zip(a, b)]
                rows.append({
                    "search": label, "overlap_at_10": sum(overlap) / len(overlap),
                    "same_order": sum(x == y for x, y in zip(a, b)) / len(a),
                    "sqlite_cpu_ms_p50": 1000 * percentile(a_cpu, 50),
                    "pg_cpu_ms_p50": 1000 * percentile(b_cpu, 50),
                    "sqlite_wall_ms_p50": 1000 * percentile(a_wall, 50),
                    "pg_wall_ms_p50": 1000 * percentile(b_wall, 50),
                    "sqlite_wall_ms_p95": 1000 * percentile(a_wall, 95),
                    "pg_wall_ms_p95": 1000 * percentile(b_wall, 95),
                })
        finally:
            sqlite.close()
            pg.close()
            drop_database(name)
    print(f"{args.passages} passages x 4 kinds, {len(queries)} queries; fill CPU s: sqlite {fill['sqlite']:.1f}, "
          f"postgres (client) {fill['postgres']:.1f}")
    print(f"{'search':22} {'overlap@10':>10} {'same order':>10} {'CPU p50 ms s/pg':>16} {'wall p50 ms s/pg':>17} "
          f"{'wall p95 ms s/pg':>17}")
    for r in rows:
        print(f"{r['search']:22} {r['overlap_at_10']:10.3f} {r['same_order']:10.3f} "
              f"{r['sqlite_cpu_ms_p50']:7.2f}/{r['pg_cpu_ms_p50']:<8.2f} {r['sqlite_wall_ms_p50']:7.2f}/"
              f"{r['pg_wall_ms_p50']:<9.2f} {r['sqlite_wall_ms_p95']:7.2f}/{r['pg_wall_ms_p95']:<9.2f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"passages": args.passages, "queries": len(queries), "fill_cpu_s": fill,
                                        "searches": rows}, indent=2))


if __name__ == "__main__":
    main()
