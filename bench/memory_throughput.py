"""Memory add and search latency at 10,000 and 100,000 synthetic memories.

Synthetic conversations: ``--users`` users, sessions of 20 turns each, turns drawn from
templates over a fixed vocabulary (seeded, so every run stores the same texts). Each memory is
one ``kb.memory.add`` call (one transaction: row, FTS, vector, edges, events), in session order
with increasing timestamps, so REPLY_TO / TEMPORAL_NEXT / TOPIC_SIMILAR edges are made as in
real use. Then ``--queries`` searches, each within a random user, with BFS, PPR and without
the graph. A decay pass over the whole store (what the first search of each hour runs) is
timed on its own and kept out of the search percentiles.

    python bench/memory_throughput.py                       # static model (../shared/models/minilm-static-256)
    python bench/memory_throughput.py --embeddings none     # BM25 + graph only

Prints a table and writes JSON (default bench/results/memory_throughput.json).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import percentile  # noqa: E402

PEOPLE = ["Ana", "Ben", "Chloe", "Dev", "Emma", "Farid", "Grace", "Hugo", "Ines", "Jon", "Kira", "Leo"]
VERBS = ["visited", "cooked", "bought", "painted", "fixed", "booked", "lost", "found", "planned", "sold",
         "borrowed", "cleaned", "ordered", "photographed", "repaired", "recommended"]
THINGS = ["a bike", "the garden", "a violin", "pasta", "a train ticket", "the boiler", "a camera", "a sofa",
          "a birthday cake", "the car", "a hiking trail", "a novel", "a puppy", "the roof", "a laptop", "sushi",
          "a concert", "a tent", "the kitchen", "a guitar", "a museum", "a dress", "running shoes", "a kayak"]
PLACES = ["Lisbon", "Berlin", "the lake", "the market", "Kyoto", "the office", "grandma's house", "the beach",
          "Oslo", "the mountains", "downtown", "the library", "Naples", "the gym", "Montreal", "the farm"]
WHEN = ["yesterday", "last week", "on Sunday", "this morning", "in May", "after work", "over the holidays"]
FEEL = ["loved it", "found it stressful", "wants to do it again", "was surprised", "felt proud", "is unsure"]
TEMPLATES = [
    "{p} {v} {t} in {pl} {w}.",
    "{p} says they {v} {t} {w} and {f}.",
    "Did you hear that {p} {v} {t}? It was in {pl}.",
    "I {v} {t} with {p} {w}; {p} {f}.",
    "{p} is thinking about {t} for {pl}.",
]


def synth(rng: random.Random) -> str:
    return rng.choice(TEMPLATES).format(p=rng.choice(PEOPLE), v=rng.choice(VERBS), t=rng.choice(THINGS),
                                        pl=rng.choice(PLACES), w=rng.choice(WHEN), f=rng.choice(FEEL))


def query(rng: random.Random) -> str:
    return rng.choice([
        f"what did {rng.choice(PEOPLE)} do in {rng.choice(PLACES)}?",
        f"who {rng.choice(VERBS)} {rng.choice(THINGS)}?",
        f"when was {rng.choice(THINGS)} {rng.choice(VERBS)}?",
        f"how does {rng.choice(PEOPLE)} feel about {rng.choice(THINGS)}",
    ])


def run_size(n: int, users: int, queries: int, spec: str, seed: int) -> dict[str, Any]:
    """Fill a fresh store with n memories; time adds and searches."""
    rng = random.Random(seed)
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    with tempfile.TemporaryDirectory() as tmp:
        kb = graphmem.open(Path(tmp) / "kb", config={"embeddings": {"model": spec}})
        add_ms: list[float] = []
        add_cpu: list[float] = []
        start = time.perf_counter()
        per_user = [0] * users
        for i in range(n):
            u = i % users
            turn = per_user[u]
            per_user[u] += 1
            t, c = time.perf_counter(), time.process_time()
            kb.memory.add(synth(rng), user_id=f"user{u}", run_id=f"s{turn // 20}",
                          timestamp=t0 + timedelta(minutes=turn))
            add_ms.append((time.perf_counter() - t) * 1000)
            add_cpu.append((time.process_time() - c) * 1000)
            if (i + 1) % 10000 == 0:
                print(f"  {i + 1:,} memories, last 1,000 adds p50 {statistics.median(add_ms[-1000:]):.2f} ms",
                      flush=True)
        fill_s = time.perf_counter() - start
        t = time.perf_counter()
        decay = kb.memory.tick_decay()
        tick_s = time.perf_counter() - t
        stats = kb.memory.stats()
        out: dict[str, Any] = {
            "memories": n, "users": users, "fill_s": round(fill_s, 1), "adds_per_s": round(n / fill_s, 1),
            "add_p50_ms": round(statistics.median(add_ms), 2), "add_p95_ms": round(percentile(add_ms, 95), 2),
            "add_cpu_p50_ms": round(statistics.median(add_cpu), 2),
            "decay_tick_s": round(tick_s, 2), "decay": decay, "edges": stats["edge_types"],
            "db_mb": round(kb.stats()["size_bytes"] / 1e6, 1), "search": {}}
        qs = [(query(rng), f"user{rng.randrange(users)}") for _ in range(queries)]
        for label, kwargs in (("bfs", {"strategy": "bfs"}), ("ppr", {"strategy": "ppr"}),
                              ("no graph", {"use_context_graph": False})):
            kb.memory.search("warm up", user_id="user0", **kwargs)
            lat, cpu = [], []
            for q, u in qs:
                t, c = time.perf_counter(), time.process_time()
                kb.memory.search(q, user_id=u, limit=10, **kwargs)
                lat.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
            out["search"][label] = {"p50_ms": round(statistics.median(lat), 2), "p95_ms": round(percentile(lat, 95), 2),
                                    "cpu_p50_ms": round(statistics.median(cpu), 2)}
        kb.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Run every size; print the table; write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    ap.add_argument("--users", type=int, default=50, help="memories are spread over this many users")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--embeddings", default="../shared/models/minilm-static-256",
                    help="a Model2Vec folder, any embeddings SPEC, or 'none'")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default="bench/results/memory_throughput.json", type=Path)
    args = ap.parse_args(argv)
    spec = args.embeddings if args.embeddings == "none" or ":" in args.embeddings else f"model2vec:{args.embeddings}"
    print(f"embeddings: {spec}; {args.users} users; sessions of 20 turns; {args.queries} queries per method")
    rows = []
    for n in args.sizes:
        print(f"\n{n:,} memories")
        row = run_size(n, args.users, args.queries, spec, args.seed)
        rows.append(row)
        print(json.dumps(row))
    print("\nWall-clock ms (CPU ms of this process in brackets: less sensitive to other load on the machine)\n")
    print("| memories | add p50 | add p95 | adds/s | search BFS p50 / p95 | search PPR p50 / p95 "
          "| no graph p50 / p95 | decay pass s | db MB |\n|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["search"]
        cell = lambda m, s=s: f"{s[m]['p50_ms']} ({s[m]['cpu_p50_ms']}) / {s[m]['p95_ms']}"  # noqa: E731
        print(f"| {r['memories']:,} | {r['add_p50_ms']} ({r['add_cpu_p50_ms']}) | {r['add_p95_ms']} "
              f"| {r['adds_per_s']} | "
              f"{cell('bfs')} | {cell('ppr')} | {cell('no graph')} | {r['decay_tick_s']} | {r['db_mb']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"embeddings": spec, "rows": rows}, indent=2), encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
