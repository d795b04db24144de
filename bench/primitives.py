"""graphmem beside the primitives underneath it, in one run (issue 16).

Each row times graphmem and the bare primitive that does the same work, interleaved query by
query in one process (the machine is shared: a ratio from one run is what counts), and prints
wall p50, CPU p50 and the ratio:

- ``2wiki dense``   ``kb.search(preset="dense")`` vs encoding the query + an exact single-threaded
  numpy product over the chunk vectors + top 10;
- ``2wiki lexical`` ``kb.search(preset="bm25")`` vs raw FTS5 top 10 (``bm25()``, same expression);
- ``2wiki default`` ``kb.search()`` (PPR) vs both primitives above (FTS5 top 10 + numpy top 10);
- ``cold search``   a fresh ``graphmem search`` process vs a fresh bare process that imports numpy
  and model2vec, loads the same model, reads the chunk vectors and scores them once;
- ``skills top-8``, ``memory search``, ``cold skills query``, ``cold memory search``: see
  bench/primitives_kinds.py;
- ``ingest default`` (offline extractor, static embeddings, wiki pages) per document vs the
  store-only config (offline extractor, no embeddings, no wiki pages) on the same documents.

The 2Wiki knowledge base is built once in ``--kb`` (offline extractor, static model, no wiki
pages) and reused by later runs.

    python bench/primitives.py --data ../shared/data [--kb /tmp/2wiki-kb] [--queries 100]
        [--only search,cold,kinds,memkinds,coldkinds,ingest] [--ingest-docs 300] [--out bench/results/primitives.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import graphmem  # noqa: E402
from common import percentile, static_model_dir  # noqa: E402
from primitives_kinds import cold_kind_rows, kind_rows  # noqa: E402


def queries_for(data: Path, n: int) -> list[str]:
    """The search_latency bench's deterministic title questions."""
    corpus = json.loads((data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))
    rng = random.Random(0)
    templates = ["Who was {}?", "When was {} born?", "Where did {} die?", "What is {} known for?",
                 "Who directed {}?"]
    return [rng.choice(templates).format(rng.choice(corpus)["title"]) for _ in range(n)]


def build_kb(data: Path, home: Path) -> None:
    """The 2Wiki knowledge base, unless ``home`` already holds it."""
    if not (home / "graph.db").exists():
        kb = graphmem.open(home, config={"embeddings": {"model": f"model2vec:{static_model_dir(data)}"},
                                         "wiki": {"auto_pages": False}})
        kb.ingest_paths([data / "2wiki" / "2wikimultihopqa_corpus.json"], extractor="offline")
        kb.close()
    # The file, not an argument: the CLI of the cold rows reads the same settings.
    cfg = home / "config.toml"
    text = cfg.read_text(encoding="utf-8")
    text = re.sub(r'(?m)^model = "model2vec:[^"]*"', f'model = "model2vec:{static_model_dir(data)}"', text)
    cfg.write_text(text.replace("auto_pages = true", "auto_pages = false"), encoding="utf-8")


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - w) * 1000, (time.process_time() - c) * 1000


def row(name: str, ours: list[tuple[float, float]], prim: list[tuple[float, float]], what: str) -> dict[str, Any]:
    """One printed row: p50 wall and CPU of both sides and their ratios."""
    def p50(xs: list[tuple[float, float]], i: int) -> float:
        return round(percentile([x[i] for x in xs], 50), 3)
    out: dict[str, Any] = {"path": name, "primitive": what, "n": len(ours),
           "graphmem_p50_ms": p50(ours, 0), "graphmem_cpu_p50_ms": p50(ours, 1),
           "primitive_p50_ms": p50(prim, 0), "primitive_cpu_p50_ms": p50(prim, 1)}
    out["ratio"] = round(out["graphmem_p50_ms"] / max(out["primitive_p50_ms"], 1e-9), 2)
    out["cpu_ratio"] = round(out["graphmem_cpu_p50_ms"] / max(out["primitive_cpu_p50_ms"], 1e-9), 2)
    print(f"  {name:<16} graphmem {out['graphmem_p50_ms']:9.2f} ms (cpu {out['graphmem_cpu_p50_ms']:8.2f})"
          f"   primitive {out['primitive_p50_ms']:8.2f} ms (cpu {out['primitive_cpu_p50_ms']:7.2f})"
          f"   ratio {out['ratio']:5.2f} (cpu {out['cpu_ratio']:5.2f})   [{what}]", flush=True)
    return out


class Primitives:
    """The bare operations over the knowledge base's own files: FTS5 on a separate connection,
    the chunk vectors in one float32 matrix, the same model."""

    def __init__(self, home: Path, model_dir: Path) -> None:
        from model2vec import StaticModel

        self.conn = sqlite3.connect(home / "graph.db")
        self.model = StaticModel.from_pretrained(str(model_dir))
        rows = self.conn.execute("SELECT item_id, vec FROM vectors WHERE item_kind = 'chunk' ORDER BY id").fetchall()
        self.ids = [r[0] for r in rows]
        self.mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), -1
                                                                                          ).astype(np.float32)

    def dense(self, q: str, k: int = 10) -> list[str]:
        v = self.model.encode([q])[0].astype(np.float32)
        v /= np.linalg.norm(v) or 1.0
        scores = np.einsum("ij,j->i", self.mat, v)  # numpy's own loop: one thread, no BLAS
        top = np.argpartition(-scores, k - 1)[:k]
        return [self.ids[i] for i in top[np.argsort(-scores[top])]]

    def lexical(self, q: str, k: int = 10) -> list[int]:
        from graphmem.store.sqlite.fts import fts_query

        expr = fts_query(q)
        if expr is None:
            return []
        return [r[0] for r in self.conn.execute(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?", (expr, k))]


def search_rows(data: Path, home: Path, queries: list[str]) -> list[dict[str, Any]]:
    """The three 2Wiki presets, each beside its primitive, interleaved per query."""
    kb = graphmem.open(home)
    prim = Primitives(home, static_model_dir(data))
    kb.search(queries[0], k=10)  # model and vector index load
    prim.dense(queries[0])
    cases: list[tuple[str, dict[str, Any], Callable[[str], Any], str]] = [
        ("2wiki dense", {"preset": "dense"}, prim.dense, "encode + numpy exact top-10, 1 thread"),
        ("2wiki lexical", {"preset": "bm25"}, prim.lexical, "raw FTS5 bm25 top-10"),
        ("2wiki default", {}, lambda q: (prim.lexical(q), prim.dense(q)), "FTS5 top-10 + numpy top-10"),
    ]
    out = []
    for name, kwargs, fn, what in cases:
        ours, bare = [], []
        for i, q in enumerate(queries):
            # Who goes first alternates: the second one finds the query's postings in the CPU caches.
            if i % 2:
                bare.append(_timed(lambda q=q, fn=fn: fn(q)))  # type: ignore[misc]
            ours.append(_timed(lambda q=q, kw=kwargs: kb.search(q, k=10, **kw)))  # type: ignore[misc]
            if not i % 2:
                bare.append(_timed(lambda q=q, fn=fn: fn(q)))  # type: ignore[misc]
        out.append(row(name, ours, bare, what))
    kb.close()
    return out


_BARE = """
import sqlite3, sys
import numpy as np
from model2vec import StaticModel
m = StaticModel.from_pretrained(sys.argv[1])
conn = sqlite3.connect(sys.argv[2])
rows = conn.execute("SELECT item_id, vec FROM vectors WHERE item_kind = 'chunk'").fetchall()
mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), -1).astype(np.float32)
v = m.encode([sys.argv[3]])[0]
s = mat @ (v / np.linalg.norm(v))
print([rows[i][0] for i in np.argsort(-s)[:10]])
"""


# A fresh process as a user's would start: with its modules' bytecode cached. (This machine sets
# PYTHONDONTWRITEBYTECODE; graphmem is installed editable, so without a cache every cold
# command would compile its ~160 modules from source, while numpy and model2vec come with
# bytecode from pip. The cache goes to a folder of its own, outside the source tree.)
_CHILD_ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
              "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "graphmem-bench-pycache")}


def _run(cmd: list[str]) -> tuple[float, float]:
    w = time.perf_counter()
    before = os.times()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_CHILD_ENV)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return (time.perf_counter() - w) * 1000, cpu * 1000


def _warm(exe: list[str], home: Path, q: str) -> None:
    """One untimed run first: it writes the bytecode cache (and warms the OS file cache)."""
    _run([*exe, "--home", str(home), "--json", "search", q])


def cold_rows(data: Path, home: Path, queries: list[str], runs: int) -> list[dict[str, Any]]:
    """A fresh ``graphmem search`` process vs a fresh bare process, alternating."""
    exe = [sys.executable, "-m", "graphmem"]
    ours, bare = [], []
    _warm(exe, home, queries[0])
    for q in queries[:runs]:
        ours.append(_run([*exe, "--home", str(home), "--json", "search", q]))
        bare.append(_run([sys.executable, "-c", _BARE, str(static_model_dir(data)), str(home / "graph.db"), q]))
    return [row("cold search", ours, bare, "fresh process: numpy + model2vec, load model, score chunk vectors")]


def ingest_rows(data: Path, n_docs: int) -> list[dict[str, Any]]:
    """Default config vs the store-only config on the same documents, alternating batches."""
    corpus = json.loads((data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))[:n_docs]
    model = f"model2vec:{static_model_dir(data)}"
    configs: dict[str, dict[str, Any]] = {"default": {"embeddings": {"model": model}},
               "store-only": {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}}
    per: dict[str, list[tuple[float, float]]] = {k: [] for k in configs}
    batch = 20
    with tempfile.TemporaryDirectory() as tmp:
        kbs = {k: graphmem.open(Path(tmp) / k, config=c) for k, c in configs.items()}
        _ = kbs["default"].embeddings.embedder  # model load is not ingest
        for i in range(0, len(corpus), batch):
            part = Path(tmp) / f"part{i}.json"
            part.write_text(json.dumps(corpus[i:i + batch]), encoding="utf-8")
            for name, kb in kbs.items():
                w, c = _timed(lambda kb=kb, p=part: kb.ingest_paths([p], extractor="offline"))  # type: ignore[misc]
                n = len(corpus[i:i + batch])
                per[name].append((w / n, c / n))
        for kb in kbs.values():
            kb.close()
    return [row("ingest default", per["default"], per["store-only"],
                f"store-only config, per document ({n_docs} docs, batches of {batch})")]


def main(argv: list[str] | None = None) -> int:
    """Run the rows asked for; print them and write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--kb", default=Path(tempfile.gettempdir()) / "graphmem-2wiki-bench", type=Path)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--cold-runs", type=int, default=5)
    ap.add_argument("--ingest-docs", type=int, default=300)
    ap.add_argument("--skills-kb", default=Path(tempfile.gettempdir()) / "graphmem-skills-bench", type=Path)
    ap.add_argument("--memory-kb", default=Path(tempfile.gettempdir()) / "graphmem-memory-bench", type=Path)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--only", default="search,cold,kinds,coldkinds,ingest")
    ap.add_argument("--out", default="bench/results/primitives.json", type=Path)
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    build_kb(args.data, args.kb)
    queries = queries_for(args.data, args.queries)
    rows: list[dict[str, Any]] = []
    if "search" in only:
        rows += search_rows(args.data, args.kb, queries)
    if "cold" in only:
        rows += cold_rows(args.data, args.kb, queries, args.cold_runs)
    if "kinds" in only or "memkinds" in only:  # memkinds: the memory search row alone
        rows += kind_rows(args.data, args.skills_kb, args.memory_kb, args.queries, args.memories, _timed, row,
                          skills="kinds" in only)
    if "coldkinds" in only:
        rows += cold_kind_rows(args.data, args.skills_kb, args.memory_kb, args.cold_runs, _run, row)
    if "ingest" in only:
        rows += ingest_rows(args.data, args.ingest_docs)
    print("\n| path | graphmem p50 ms (cpu) | primitive p50 ms (cpu) | ratio (cpu) | primitive |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['path']} | {r['graphmem_p50_ms']} ({r['graphmem_cpu_p50_ms']}) | {r['primitive_p50_ms']}"
              f" ({r['primitive_cpu_p50_ms']}) | {r['ratio']} ({r['cpu_ratio']}) | {r['primitive']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows, "command": " ".join(sys.argv)}, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
