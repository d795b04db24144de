"""Recall@10 and latency of the HNSW index (usearch) against exact search, side by side.

Vectors: the 2WikiMultihopQA passages embedded with the static model
(../shared/models/minilm-static-256), repeated with small Gaussian jitter up to ``--n`` vectors
so that the index is larger than the corpus (jittered copies are near-duplicates: the hard
case for HNSW). Queries: 500 passage titles as questions. Exact = the float32 matrix product
graphmem uses below ``embeddings.ann_threshold``; ANN = usearch HNSW (float16, M=32,
ef_construction=200, ef_search=512), built through graphmem's AnnIndex from a real store.

    python bench/ann_recall.py --data ../shared/data --n 200000
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import graphmem
from graphmem.retrieval.ann import AnnIndex


def main(argv: list[str] | None = None) -> int:
    """Build, query, compare; print the table and write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--out", default="bench/results/ann_recall.json", type=Path)
    args = ap.parse_args(argv)
    from model2vec import StaticModel

    model = StaticModel.from_pretrained(str(args.data.parent / "models" / "minilm-static-256"))
    corpus = json.loads((args.data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))
    base = model.encode([f"{d['title']}\n{d['text']}" for d in corpus]).astype(np.float32)
    rng = np.random.default_rng(0)
    reps = -(-args.n // len(base))
    vecs = np.concatenate([base + (0 if r == 0 else rng.normal(0, 0.02, base.shape)) for r in range(reps)])[: args.n]
    vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
    picks = random.Random(0).sample(corpus, args.queries)
    queries = model.encode([f"Who was {d['title']}?" for d in picks]).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    with tempfile.TemporaryDirectory() as tmp:
        kb = graphmem.open(Path(tmp) / "kb", config={"embeddings": {"model": "none"}})
        t = time.perf_counter()
        batch = 20_000
        for i in range(0, len(vecs), batch):  # store them as the engine does (float16 rows)
            with kb.store.transaction():
                kb.store.upsert_vectors("chunk", "bench", vecs.shape[1],
                                        [(f"c{j}", "h", vecs[j].astype(np.float16).tobytes())
                                         for j in range(i, min(i + batch, len(vecs)))])
        store_s = time.perf_counter() - t
        ann = AnnIndex(kb.store, "chunk", "bench", Path(tmp) / "vectors", vecs.shape[1])
        t = time.perf_counter()
        ann.refresh()
        build_s = time.perf_counter() - t
        rowids, ids, _ = kb.store.load_vectors("chunk", "bench")
        row_of = {r: int(i[1:]) for r, i in zip(rowids, ids)}
        exact16 = vecs.astype(np.float16).astype(np.float32)  # what the exact index holds
        recalls, t_exact, t_ann = [], [], []
        for q in queries:
            t = time.perf_counter()
            s = exact16 @ q
            top = np.argpartition(-s, 9)[:10]
            t_exact.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            got = {row_of[r] for r, _ in ann.search(q, 10)}
            t_ann.append((time.perf_counter() - t) * 1000)
            recalls.append(len(got & set(top.tolist())) / 10)
        kb.close()
    row = {"vectors": len(vecs), "dim": int(vecs.shape[1]), "queries": len(queries),
           "recall_at_10": round(statistics.mean(recalls), 4),
           "exact_p50_ms": round(statistics.median(t_exact), 3), "ann_p50_ms": round(statistics.median(t_ann), 3),
           "speedup": round(statistics.median(t_exact) / statistics.median(t_ann), 1),
           "hnsw_build_s": round(build_s, 1), "store_s": round(store_s, 1)}
    print("| vectors | dim | recall@10 vs exact | exact p50 ms | HNSW p50 ms | speed-up | HNSW build s |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {row['vectors']:,} | {row['dim']} | {row['recall_at_10']:.3f} | {row['exact_p50_ms']} | "
          f"{row['ann_p50_ms']} | {row['speedup']}x | {row['hnsw_build_s']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(row, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
