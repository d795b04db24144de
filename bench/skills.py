"""Skill retrieval on 1,635 real SKILL.md files and 100 development requests.

Every method runs in ONE process on the same knowledge base and the same embeddings:

* BM25 over name + description          - Okapi BM25 (k1 1.2, b 0.75) in numpy
* dense only                            - cosine with the skills' vectors
* SkillGraph's algorithm                - 5 dense seeds; related 1.0, sibling 0.5, similar >= 0.6
                                          edges; neighbour score seed_sim * weight + 0.5 * own sim;
                                          40% of the slots for graph results
* graphmem                              - kb.skills.retrieve (defaults) and its variants

Metrics: hit@1 (primary first), hit@1-any (any relevant first), recall@8, MRR (first relevant),
query latency p50/p95 (model loaded), build time cold and after touching one file, and the
prompt tokens of the top-8 block vs the block listing every skill.

    python bench/skills.py --data ../shared/data/skills
    python bench/skills.py --data ../shared/data/skills --models static minilm

Prints a table and writes JSON (default bench/results/skills.json). To compare two versions of
the code: ``PYTHONPATH=<their src> python bench/skills.py --rankings FILE.jsonl`` under each, then
diff the files; ``cpu_p50_ms`` in the JSON is CPU time per query (comparable on a busy machine).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import model_spec, static_model_dir  # noqa: E402
from graphmem.skills.index import SkillIndex  # noqa: E402
from graphmem.text import query_words  # noqa: E402

TOP_K = 8


class BM25:
    """Okapi BM25 over name + description (the lexical baseline)."""

    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tfs = [Counter(query_words(d, keep_stop_words=True)) for d in docs]
        self.lens = np.array([sum(t.values()) for t in self.tfs], dtype=np.float64)
        self.avg = float(self.lens.mean()) if len(docs) else 0.0
        df: Counter[str] = Counter()
        for t in self.tfs:
            df.update(t.keys())
        n = len(docs)
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}
        self.post: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, t in enumerate(self.tfs):
            for w, c in t.items():
                self.post[w].append((i, c))

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(len(self.tfs))
        for w in set(query_words(query)):
            idf = self.idf.get(w)
            if idf is None:
                continue
            for i, c in self.post[w]:
                out[i] += idf * c * (self.k1 + 1) / (c + self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg))
        return out


def top(scores: np.ndarray, k: int) -> list[int]:
    k = min(k, len(scores))
    idx = np.argpartition(-scores, k - 1)[:k]
    return [int(i) for i in idx[np.argsort(-scores[idx], kind="stable")]]


def skillgraph(idx: SkillIndex, qvec: np.ndarray, related: dict[int, set[int]], k: int = TOP_K) -> list[int]:
    """SkillGraph's published algorithm on our embeddings (with its neighbours kept)."""
    sims = idx.vectors @ qvec
    seeds = top(sims, 5)
    cats: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(idx.entries):
        cats[e.category].append(i)
    graph: dict[int, float] = {}
    for s in seeds:
        nbrs: dict[int, float] = {}
        for j in related.get(s, ()):
            nbrs[j] = max(nbrs.get(j, 0.0), 1.0)
        for j in cats[idx.entries[s].category]:
            if j != s:
                nbrs[j] = max(nbrs.get(j, 0.0), 0.5)
        row = idx.vectors @ idx.vectors[s]
        for j in np.nonzero(row >= 0.6)[0]:
            if int(j) != s:
                nbrs[int(j)] = max(nbrs.get(int(j), 0.0), float(row[j]))
        for j, w in nbrs.items():
            if j in seeds:
                continue
            sc = float(sims[s]) * w + 0.5 * float(sims[j])
            graph[j] = max(graph.get(j, 0.0), sc)
    n_graph = int(round(k * 0.4))
    picked = seeds[: k - n_graph] if len(graph) >= n_graph else seeds[:k]
    extra = [j for j, _ in sorted(graph.items(), key=lambda t: -t[1]) if j not in picked]
    out = picked + extra[: k - len(picked)]
    for s in seeds:  # fill when the graph gave fewer
        if len(out) >= k:
            break
        if s not in out:
            out.append(s)
    return out[:k]


def evaluate(name: str, fn: Callable[[str], list[str]], queries: list[dict[str, Any]]) -> dict[str, Any]:
    hit1 = hit1_any = rec = mrr = 0.0
    lat: list[float] = []
    cpu: list[float] = []  # CPU time of this process: what a before/after comparison on a busy machine can use
    per_kind: dict[str, list[float]] = defaultdict(list)
    for q in queries:
        t0, c0 = time.perf_counter(), time.process_time()
        got = fn(q["query"])
        lat.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        rel = set(q["relevant"])
        top8 = got[:TOP_K]
        hit1 += bool(top8) and top8[0] == q["primary"]
        hit1_any += bool(top8) and top8[0] in rel
        r = len(rel & set(top8)) / len(rel)
        rec += r
        per_kind[q["kind"]].append(r)
        first = next((i for i, s in enumerate(got) if s in rel), None)
        mrr += 1.0 / (first + 1) if first is not None else 0.0
    n = len(queries)
    lat.sort()
    return {"method": name, "hit@1": hit1 / n, "hit@1-any": hit1_any / n, "recall@8": rec / n, "mrr": mrr / n,
            "p50_ms": statistics.median(lat), "p95_ms": lat[int(0.95 * (len(lat) - 1))],
            "cpu_p50_ms": statistics.median(cpu), "cpu_mean_ms": statistics.mean(cpu),
            "recall@8_by_kind": {k: sum(v) / len(v) for k, v in sorted(per_kind.items())}}


def run_model(label: str, spec: str, data: Path, queries: list[dict[str, Any]], work: Path,
              variants: dict[str, dict[str, Any]], rankings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    home = work / f"kb-{label}"
    corpus = work / "corpus"
    kb = graphmem.open(home, config={"embeddings": {"model": spec}, "wiki": {"auto_pages": False}})
    kb.embed_query("warm up")  # model loaded before anything is timed
    t0 = time.perf_counter()
    res = kb.skills.build([corpus])
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    kb.skills.build([corpus])
    noop = time.perf_counter() - t0
    touched = next(iter(sorted(corpus.rglob("SKILL.md"))))
    touched.write_text(touched.read_text(encoding="utf-8") + "\n<!-- edited by bench -->\n", encoding="utf-8")
    t0 = time.perf_counter()
    inc = kb.skills.build([corpus])
    incremental = time.perf_counter() - t0
    assert len(inc.updated) == 1, inc.to_dict()
    idx = kb.skills.index()
    ids = [e.id for e in idx.entries]
    bm25 = BM25([e.name.replace("-", " ") + " " + e.description for e in idx.entries])
    related: dict[int, set[int]] = defaultdict(set)
    for i, nbrs in idx.adjacency.items():
        for j, _, t in nbrs:
            if t == "related":
                related[i].add(j)
    info = kb.skills.info()
    rows = [evaluate("BM25 (name+description)", lambda q: [ids[i] for i in top(bm25.scores(q), 50)], queries)]
    if idx.vectors is not None:
        rows.append(evaluate("dense only", lambda q: [ids[i] for i in top(idx.vectors @ kb.embed_query(q), 50)],
                             queries))
        rows.append(evaluate("SkillGraph algorithm", lambda q: [ids[i] for i in skillgraph(idx, kb.embed_query(q),
                                                                                          related)], queries))
    for vname, kwargs in variants.items():
        rows.append(evaluate(vname, lambda q, kw=kwargs: [h.id for h in kb.skills.retrieve(q, TOP_K, **kw)],
                             queries))
    if rankings is not None:  # every graphmem variant's hits, for a before/after comparison of rankings
        for vname, kwargs in variants.items():
            for q in queries:
                hits = kb.skills.retrieve(q["query"], TOP_K, **kwargs)
                rankings.append({"model": label, "method": vname, "query": q["query"],
                                 "hits": [[h.id, round(h.score, 6), h.via] for h in hits]})
    all_block = kb.skills.prompt_all("markdown").tokens
    top8 = [kb.skills.prompt(q["query"], TOP_K, "markdown").tokens for q in queries]
    out = {"model": label, "spec": spec, "skills": len(idx), "edges": info["edges"],
           "unresolved_related_skills": len(info["unresolved_related"]),
           "build_cold_s": cold, "build_noop_s": noop, "build_incremental_s": incremental,
           "prompt_tokens_all": all_block, "prompt_tokens_top8_mean": statistics.mean(top8),
           "prompt_tokens_top8_max": max(top8), "rows": rows, "build": res.to_dict() | {"warnings": len(res.warnings)}}
    kb.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("../shared/data/skills"))
    ap.add_argument("--models", nargs="+", default=["static"])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "skills.json")
    ap.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                    help="extra graphmem variant settings, e.g. --config beta=0.7 (adds a 'graphmem (custom)' row)")
    ap.add_argument("--rankings", type=Path, default=None, metavar="JSONL",
                    help="also write every graphmem variant's ranked hits (id, score, via) per query, to compare "
                         "two versions of the code: run it under each (PYTHONPATH) and diff the files")
    args = ap.parse_args()
    rankings: list[dict[str, Any]] | None = [] if args.rankings else None
    queries = [json.loads(line) for line in (args.data / "dev-queries.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    variants: dict[str, dict[str, Any]] = {
        "graphmem, no graph": {"strategy": "none"},
        "graphmem PPR": {"strategy": "ppr"},
        "graphmem (default: BFS)": {},
    }
    if args.config:
        custom = {}
        for kv in args.config:
            k, _, v = kv.partition("=")
            custom[k] = json.loads(v) if re.match(r"^[\[\d.\-tf]", v) else v
        variants["graphmem (custom)"] = {"config": custom}
    results = []
    with tempfile.TemporaryDirectory(prefix="graphmem-skills-") as tmp:
        work = Path(tmp)
        # a private copy: the incremental build edits one file
        shutil.copytree(args.data, work / "corpus", ignore=shutil.ignore_patterns("*.tsv", "*.jsonl", "LICENSE*"))
        for m in args.models:
            spec = model_spec(m, static_model_dir(args.data.parent))
            if spec is None:
                print(f"[skip] model {m}: not installed here")
                continue
            results.append(run_model(m, spec, args.data, queries, work, variants, rankings))
    for r in results:
        print(f"\nmodel {r['model']}: {r['skills']} skills, edges {r['edges']}; build cold {r['build_cold_s']:.2f} s,"
              f" unchanged {r['build_noop_s']*1000:.0f} ms, one file touched {r['build_incremental_s']*1000:.0f} ms;"
              f" prompt tokens all {r['prompt_tokens_all']:,} vs top-8 mean {r['prompt_tokens_top8_mean']:.0f}"
              f" (1/{r['prompt_tokens_all'] / r['prompt_tokens_top8_mean']:.0f})")
        print(f"{'method':<28} {'hit@1':>6} {'hit@1any':>8} {'R@8':>6} {'MRR':>6} {'p50 ms':>7} {'p95 ms':>7}")
        for row in r["rows"]:
            print(f"{row['method']:<28} {row['hit@1']:6.2f} {row['hit@1-any']:8.2f} {row['recall@8']:6.3f}"
                  f" {row['mrr']:6.3f} {row['p50_ms']:7.2f} {row['p95_ms']:7.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"\nwrote {args.out}")
    if args.rankings and rankings is not None:
        args.rankings.write_text("".join(json.dumps(r) + "\n" for r in rankings), encoding="utf-8")
        print(f"wrote {args.rankings} ({len(rankings)} rankings)")


if __name__ == "__main__":
    main()
