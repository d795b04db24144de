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
  store-only config (offline extractor, no embeddings, no wiki pages) on the same documents;
- ``ingest store-only`` the store-only config's ingest of the documents (extraction included), and
  ``store write`` the same with the offline extraction done beforehand (what the store write step
  alone costs), each vs the raw insert of the same rows: every row that ingest left in the store's
  tables (documents, chunks, nodes, names, edges, evidence, mentions, types, events), copied out and
  inserted with one ``executemany`` per table in one transaction into a fresh knowledge base with
  the same schema, indexes, FTS5 tables and triggers (the replay log's rows come from its triggers);
- ``disk per document`` graph.db on the seed workload (bench/ingest_query.py's documents) against their raw text,
  with sqlite's dbstat per table and index.

The 2Wiki knowledge base is built once in ``--kb`` (offline extractor, static model, no wiki
pages) and reused by later runs.

    python bench/primitives.py --data ../shared/data [--kb /tmp/2wiki-kb] [--queries 100]
        [--only search,cold,kinds,memkinds,coldkinds,ingest,raw,disk] [--ingest-docs 300] [--raw-docs 1000]
        [--raw-runs 3] [--profile 25] [--disk-docs 1000] [--out bench/results/primitives.json]
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
from collections.abc import Callable, Sequence
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


def search_rows(data: Path, home: Path, queries: list[str], warm: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The three 2Wiki presets, each beside its primitive, interleaved per query. ``warm``: default
    searches run first (other questions): the rows measure a process that keeps searching, whose
    store holds what it reads again and again (the mention graph is loaded after ~35 such searches
    on 2Wiki, store/sqlite/mention_graph.py); a CLI command's search is the cold row."""
    kb = graphmem.open(home)
    prim = Primitives(home, static_model_dir(data))
    kb.search(queries[0], k=10)  # model and vector index load
    for q in warm:
        kb.search(q, k=10)
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


# Tables an ingest writes whose rows are not derived: FTS5 tables and the replay log are filled by triggers,
# counters and bookkeeping by the schema itself.
_DERIVED = ("sqlite_", "schema_migrations", "kb_meta", "replay_log", "feed_cursors")


def _copy_rows(db: Path) -> list[tuple[str, list[str], list[tuple[Any, ...]]]]:
    """Every row of the knowledge base's own tables, in rowid order: ``(table, columns, rows)``."""
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY rowid")]
        shadow = {r[0] + s for r in conn.execute("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL%'")
                  for s in ("_data", "_idx", "_content", "_docsize", "_config")}
        out = []
        for t in tables:
            if t.startswith(_DERIVED) or t in shadow:
                continue
            cur = conn.execute(f'SELECT * FROM "{t}"')
            cols = [d[0] for d in cur.description]
            rows = cur.fetchall()
            if rows:
                out.append((t, cols, rows))
        return out
    finally:
        conn.close()


def raw_insert(home: Path, tables: list[tuple[str, list[str], list[tuple[Any, ...]]]]) -> tuple[float, float]:
    """Insert ``tables`` raw into a new, empty knowledge base at ``home`` (graphmem creates the schema;
    the insert runs on a plain connection with graphmem's pragmas, one transaction)."""
    graphmem.open(home, config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}).close()
    conn = sqlite3.connect(home / "graph.db", isolation_level=None)
    for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON",
                   "cache_size = -65536", "mmap_size = 67108864"):
        conn.execute(f"PRAGMA {pragma}")

    def insert() -> None:
        conn.execute("BEGIN IMMEDIATE")
        for t, cols, rows in tables:
            names = ", ".join(f'"{c}"' for c in cols)
            conn.executemany(f'INSERT INTO "{t}" ({names}) VALUES ({", ".join("?" * len(cols))})', rows)
        conn.execute("COMMIT")
    try:
        return _timed(insert)
    finally:
        conn.close()


def raw_rows(data: Path, n_docs: int, runs: int) -> list[dict[str, Any]]:
    """Store-only ingest (with and without the extraction) vs the raw insert of the rows it wrote, per document;
    the variants alternate run by run, each on a new knowledge base."""
    from graphmem.ingest.extractors.base import SourceDocument
    from graphmem.ingest.extractors.offline import OfflineExtractor
    from graphmem.ingest.pipeline import _extract, ingest_documents

    corpus = json.loads((data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))[:n_docs]
    config = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}
    per: dict[str, list[tuple[float, float]]] = {"ingest": [], "write": [], "raw": []}
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "corpus.json"
        src.write_text(json.dumps(corpus), encoding="utf-8")
        docs: list[SourceDocument] = []
        for r in range(runs):
            kb = graphmem.open(Path(tmp) / f"ingest{r}", config=config)
            per["ingest"].append(_timed(lambda kb=kb: kb.ingest_paths([src], extractor="offline")))  # type: ignore[misc]
            if not docs:  # the same documents as ingest_paths read them, with their extraction done beforehand
                extractor = OfflineExtractor()
                stored = [kb.store.get_document(d.doc_id) for d in kb.store.list_documents()]
                for d in sorted((d for d in stored if d is not None), key=lambda d: d.created_at):
                    plain = SourceDocument(d.doc_id, d.title, d.source, d.content, d.metadata)
                    got = _extract(extractor, plain, kb.ctx.config.graph.min_confidence)
                    assert not isinstance(got, Exception)
                    docs.append(SourceDocument(d.doc_id, d.title, d.source, d.content, d.metadata, got[0]))
            kb.close()
            kb = graphmem.open(Path(tmp) / f"write{r}", config=config)
            per["write"].append(_timed(lambda kb=kb: ingest_documents(kb.ctx, docs)))  # type: ignore[misc]
            kb.close()
            tables = _copy_rows(Path(tmp) / f"write{r}" / "graph.db")
            counts = {t: len(rows) for t, _, rows in tables}
            per["raw"].append(raw_insert(Path(tmp) / f"raw{r}", tables))
    per = {k: [(w / n_docs, c / n_docs) for w, c in v] for k, v in per.items()}
    what = f"raw insert of the same {sum(counts.values()):,} rows, one transaction ({n_docs} docs, {runs} runs)"
    print(f"  rows per table: {counts}", flush=True)
    return [row("ingest store-only", per["ingest"], per["raw"], what),
            row("store write", per["write"], per["raw"], what + "; extraction done beforehand")]


def raw_profile(data: Path, n_docs: int, top: int) -> dict[str, Any]:
    """cProfile (CPU time of the profiled thread) of the store-only ingest's two parts on the first ``n_docs``
    2Wiki passages: the offline extraction and its validation (what the ingest's worker threads run), here on this
    thread, then the store write step of the same documents. Prints the ``top`` functions of each by own time."""
    import cProfile
    import io
    import pstats

    from graphmem.ingest.extractors.base import SourceDocument
    from graphmem.ingest.extractors.offline import OfflineExtractor
    from graphmem.ingest.pipeline import _extract, ingest_documents

    corpus = json.loads((data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))[:n_docs]
    plain = [SourceDocument(f"2wiki.json#{i}", c["title"], "", c["text"], {}) for i, c in enumerate(corpus)]
    extractor = OfflineExtractor()
    out: dict[str, Any] = {}

    def profiled(name: str, fn: Callable[[], Any]) -> Any:
        prof = cProfile.Profile(time.thread_time)
        got = prof.runcall(fn)
        text = io.StringIO()
        stats = pstats.Stats(prof, stream=text)
        stats.sort_stats("tottime").print_stats(top)
        total = stats.total_tt  # type: ignore[attr-defined]
        print(f"\n  profile: {name}, {n_docs} documents, {total * 1000 / n_docs:.3f} ms/doc CPU under cProfile")
        print("\n".join("    " + line for line in text.getvalue().splitlines()[5:] if line.strip()), flush=True)
        out[name] = {"cpu_ms_per_doc_profiled": round(total * 1000 / n_docs, 3), "top": text.getvalue()}
        return got

    extracted = profiled("offline extraction + validation", lambda: [_extract(extractor, d, 0.6) for d in plain])
    docs = [SourceDocument(d.doc_id, d.title, d.source, d.text, d.metadata, got[0])
            for d, got in zip(plain, extracted)]
    with tempfile.TemporaryDirectory() as tmp:
        kb = graphmem.open(Path(tmp) / "kb", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}})
        profiled("store write", lambda: ingest_documents(kb.ctx, docs))
        kb.close()
    return out


def disk_rows(n_docs: int) -> list[dict[str, Any]]:
    """Disk per document on the seed workload (bench/ingest_query.py's generator, store-only config): graph.db after
    a checkpoint against the documents' raw text, and sqlite's dbstat per table and index."""
    from ingest_query import Corpus

    corpus = Corpus(0, 3000, 1.0)
    raw = 0
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "kb"
        with graphmem.open(home, config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}) as kb:
            for i in range(n_docs):
                doc_id, title, source, content, ents, rels = corpus.document(i)
                raw += len(content.encode())
                kb.ingest_with_content(doc_id, title, source, content, ents, rels)
            kb.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]
        size = (home / "graph.db").stat().st_size
        conn = sqlite3.connect(home / "graph.db")
        parts = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        conn.close()
    print(f"  disk per document  graph.db {size / n_docs:,.0f} bytes per document = {size / raw:.2f}x its raw text "
          f"({raw / n_docs:,.0f} bytes; {n_docs} seed documents, store-only config)", flush=True)
    for name, b in parts[:16]:
        print(f"      {b / raw:5.2f}x  {name}")
    return [{"path": "disk per document", "docs": n_docs, "raw_bytes": raw, "db_bytes": size,
             "ratio": round(size / raw, 2), "by_table": {name: round(b / raw, 3) for name, b in parts}}]


def main(argv: list[str] | None = None) -> int:
    """Run the rows asked for; print them and write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--kb", default=Path(tempfile.gettempdir()) / "graphmem-2wiki-bench", type=Path)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--warm", type=int, default=50, help="default searches before the search rows (other questions)")
    ap.add_argument("--cold-runs", type=int, default=5)
    ap.add_argument("--ingest-docs", type=int, default=300)
    ap.add_argument("--raw-docs", type=int, default=1000)
    ap.add_argument("--raw-runs", type=int, default=3)
    ap.add_argument("--disk-docs", type=int, default=1000)
    ap.add_argument("--skills-kb", default=Path(tempfile.gettempdir()) / "graphmem-skills-bench", type=Path)
    ap.add_argument("--memory-kb", default=Path(tempfile.gettempdir()) / "graphmem-memory-bench", type=Path)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--profile", type=int, default=0, help="with --only raw: also print the top N functions "
                    "(cProfile) of the store-only ingest's extraction and store write")
    ap.add_argument("--only", default="search,cold,kinds,coldkinds,ingest,raw,disk")
    ap.add_argument("--out", default="bench/results/primitives.json", type=Path)
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    if only & {"search", "cold"}:
        build_kb(args.data, args.kb)
    queries = queries_for(args.data, args.queries + args.warm)
    queries, warm = queries[:args.queries], queries[args.queries:]
    rows: list[dict[str, Any]] = []
    if "search" in only:
        rows += search_rows(args.data, args.kb, queries, warm)
    if "cold" in only:
        rows += cold_rows(args.data, args.kb, queries, args.cold_runs)
    if "kinds" in only or "memkinds" in only:  # memkinds: the memory search row alone
        rows += kind_rows(args.data, args.skills_kb, args.memory_kb, args.queries, args.memories, _timed, row,
                          skills="kinds" in only)
    if "coldkinds" in only:
        rows += cold_kind_rows(args.data, args.skills_kb, args.memory_kb, args.cold_runs, _run, row)
    if "ingest" in only:
        rows += ingest_rows(args.data, args.ingest_docs)
    if "raw" in only:
        rows += raw_rows(args.data, args.raw_docs, args.raw_runs)
    profile = raw_profile(args.data, args.raw_docs, args.profile) if "raw" in only and args.profile else {}
    disk = disk_rows(args.disk_docs) if "disk" in only else []
    print("\n| path | graphmem p50 ms (cpu) | primitive p50 ms (cpu) | ratio (cpu) | primitive |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['path']} | {r['graphmem_p50_ms']} ({r['graphmem_cpu_p50_ms']}) | {r['primitive_p50_ms']}"
              f" ({r['primitive_cpu_p50_ms']}) | {r['ratio']} ({r['cpu_ratio']}) | {r['primitive']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows, "disk": disk, "profile": profile, "command": " ".join(sys.argv)},
                                   indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
