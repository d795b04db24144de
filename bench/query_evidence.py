"""query_with_evidence's graph-only fast path beside query, and the seeds of query on real text.

What it measures
----------------
1. **Latency** (issue 16: "query_with_evidence when the query names entities: graph-only fast
   path, p50 at 10k documents <= 1.5x query"). The seed-like workload of ``bench/ingest_query.py``
   (its ``Corpus``: ~1,500-character documents, 10 entities and 12 relations each in the seed's
   extraction format, Zipf-popular two-word names, so hubs exist) is ingested into a fresh
   knowledge base (wiki pages and embeddings off: neither is on the path measured, and ingest is
   what takes the time). Then the corpus's questions (half by popularity, so hubs are asked about)
   are asked, in one process and interleaved so that load hits all alike:

   * ``kb.query(q)`` (seeds + walk + the relations stated about the seeds),
   * ``kb.query_with_evidence(q)`` (the fast path: the same plus quotes, no search pipeline),
   * ``query_with_evidence(ctx, q, fast=False)`` (the slow path: the search pipeline's passage
     seeding run as well, as before this change).

   Printed: p50/p95 wall ms and p50 CPU ms of each, and the ratios to ``query`` (wall and CPU).
2. **Seeds on real text** (issue 15: "seeds only from specific entities"), with ``--musique DIR``:
   the MuSiQue corpus (1,890 passages, ``{id, title, text}`` records through ``kb.ingest_paths``,
   offline extractor) and its 100 questions through ``kb.query``; per question the seeds, and
   overall the share of seeds mentioned in one of the question's gold passages, the seeds per
   question, the questions with at least one seed in a gold passage and those without seeds.
   Run it on another checkout's sources (e.g. ``PYTHONPATH=/tmp/old/src``) for the before figures.

How to run
----------
From the repository root, with the project's virtualenv active::

    python bench/query_evidence.py --n 10000 --queries 200
    python bench/query_evidence.py --n 10000 --keep /tmp/qe10k      # keep (and later reuse) the kb
    python bench/query_evidence.py --n 0 --musique ../shared/data/musique

It prints an aligned table and writes JSON (default ``bench/results/query_evidence.json``).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import graphmem
from common import percentile
from graphmem.retrieval.graph_query import query_with_evidence
from ingest_query import Corpus

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "query_evidence.json"
CONFIG = {"wiki": {"auto_pages": False}, "embeddings": {"model": "none"}}


def _build(home: Path, n: int, seed: int) -> Corpus:
    corpus = Corpus(seed, 4000, 1.0)
    fresh = not (home / "graph.db").exists()
    with graphmem.open(home, config=CONFIG) as kb:
        t0 = time.perf_counter()
        for i in range(n):
            doc = corpus.document(i)  # always generated: the queries depend on what was drawn
            if fresh:
                kb.ingest_with_content(*doc)
            if fresh and (i + 1) % max(n // 10, 1) == 0:
                print(f"  {i + 1} docs, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return corpus


def latency(n: int, n_queries: int, seed: int, keep: Path | None) -> dict[str, Any]:
    """p50/p95 of query, the fast path and the slow path on the same questions, interleaved."""
    with tempfile.TemporaryDirectory(prefix="graphmem-qe-") as tmp:
        home = (keep or Path(tmp)) / f"n{n}"
        corpus = _build(home, n, seed)
        questions = corpus.queries(n_queries + 1)
        with graphmem.open(home, config=CONFIG) as kb:
            paths = {"query": kb.query, "query_with_evidence": kb.query_with_evidence}
            if "fast" in inspect.signature(query_with_evidence).parameters:  # absent on sources before it
                paths["slow path (fast=False)"] = lambda q: query_with_evidence(kb.ctx, q, fast=False)
            for fn in paths.values():
                fn(questions[0])  # warm-up, not counted
            wall: dict[str, list[float]] = {k: [] for k in paths}
            cpu: dict[str, list[float]] = {k: [] for k in paths}
            named = 0
            for q in questions[1:]:
                for name, fn in paths.items():
                    c0, t0 = time.process_time(), time.perf_counter()
                    out = fn(q)
                    wall[name].append((time.perf_counter() - t0) * 1000)
                    cpu[name].append((time.process_time() - c0) * 1000)
                    if name == "query":
                        named += any(v["seed"] for v in out["nodes"].values())
            stats = kb.stats()
    base_wall, base_cpu = percentile(wall["query"], 50), percentile(cpu["query"], 50)
    rows = {name: {"p50_ms": round(percentile(w, 50), 3), "p95_ms": round(percentile(w, 95), 3),
                   "cpu_p50_ms": round(percentile(cpu[name], 50), 3),
                   "ratio_p50": round(percentile(w, 50) / base_wall, 3),
                   "ratio_cpu_p50": round(percentile(cpu[name], 50) / base_cpu, 3)}
            for name, w in wall.items()}
    return {"n_docs": n, "queries": n_queries, "questions_with_named_seeds": named, "paths": rows,
            "entities": stats["entities"], "edges": stats["edges"], "chunks": stats["chunks"]}


def musique_seeds(folder: Path) -> dict[str, Any]:
    """Seeds of kb.query on MuSiQue's 100 questions, judged by the questions' gold passages."""
    corpus = json.loads((folder / "musique_train_corpus.json").read_text(encoding="utf-8"))
    questions = json.loads((folder / "musique_train.json").read_text(encoding="utf-8"))
    index = {(p["title"], p["text"]): f"p{i}" for i, p in enumerate(corpus)}
    with tempfile.TemporaryDirectory(prefix="graphmem-qe-musique-") as tmp:
        jsonl = Path(tmp) / "musique.jsonl"
        with jsonl.open("w", encoding="utf-8") as f:
            for (title, text), pid in index.items():
                f.write(json.dumps({"id": pid, "title": title, "text": text}) + "\n")
        with graphmem.open(Path(tmp) / "kb", config=CONFIG) as kb:
            kb.ingest_paths([str(jsonl)], extractor="offline")
            total = in_gold = empty = covered = 0
            per_question = []
            for q in questions:
                gold = {index.get((p["title"], p["paragraph_text"])) for p in q["paragraphs"] if p["is_supporting"]}
                sg = kb.query(q["question"])
                seeds = [nid for nid, v in sg["nodes"].items() if v["seed"]]
                docs = {m.doc_id for ms in kb.ctx.store.mentions_of(seeds, 1000).values() for m in ms}
                hits = [nid for nid in seeds
                        if {m.doc_id for m in kb.ctx.store.mentions_of([nid], 1000).get(nid, [])} & gold]
                total += len(seeds)
                in_gold += len(hits)
                empty += not seeds
                covered += bool(hits)
                per_question.append({"question": q["question"], "seeds": [sg["nodes"][s]["name"] for s in seeds],
                                     "in_gold": [sg["nodes"][s]["name"] for s in hits],
                                     "seed_docs": len(docs)})
    return {"questions": len(questions), "seeds": total, "seeds_per_question": round(total / len(questions), 2),
            "seed_precision_gold": round(in_gold / total, 3) if total else None,
            "questions_without_seeds": empty, "questions_with_a_gold_seed": covered, "per_question": per_question}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10000, help="documents of the latency workload (0: skip it)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="build the knowledge base in DIR/n<N> and keep it (reused if there)")
    ap.add_argument("--musique", type=Path, help="folder with musique_train.json and musique_train_corpus.json")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    out: dict[str, Any] = {"load_before": os.getloadavg()}
    if args.n:
        out["latency"] = r = latency(args.n, args.queries, args.seed, args.keep)
        print(f"\nN={r['n_docs']} documents ({r['chunks']} chunks, {r['entities']} entities, {r['edges']} relations),"
              f" {r['queries']} questions, {r['questions_with_named_seeds']} with named seeds")
        print(f"{'path':<24} {'p50 ms':>8} {'p95 ms':>8} {'CPU p50':>8} {'x query':>8} {'x CPU':>7}")
        for name, row in r["paths"].items():
            print(f"{name:<24} {row['p50_ms']:>8.2f} {row['p95_ms']:>8.2f} {row['cpu_p50_ms']:>8.2f} "
                  f"{row['ratio_p50']:>8.2f} {row['ratio_cpu_p50']:>7.2f}")
    if args.musique:
        out["musique"] = m = musique_seeds(args.musique)
        print(f"\nMuSiQue, {m['questions']} questions: {m['seeds_per_question']} seeds/question, "
              f"{m['seed_precision_gold']:.1%} of seeds mentioned in a gold passage, "
              f"{m['questions_with_a_gold_seed']} questions with a seed in a gold passage, "
              f"{m['questions_without_seeds']} without seeds")
    out["load_after"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
