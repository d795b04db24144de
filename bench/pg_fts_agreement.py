"""How closely the PostgreSQL backend's full text ranks like the SQLite backend's FTS5 BM25 (issue 20).

One run, one process: the 2Wiki corpus (6,119 passages, one chunk each) goes into a SQLite store and into a
PostgreSQL store (a fresh database on a pgserver started for the run, or GRAPHMEM_TEST_PG_URL's server), then
the same queries (the 100 dev questions, plus passage phrases to reach --queries) are ranked by both:
overlap@10 (shared chunks among the two top 10s, over 10), the share of identical top-10 orders, and the
largest relative score difference. Three settings:

- ``text``: documents without titles (both backends rank the text alone);
- ``title``: documents with titles, SQLite as shipped on this branch (text only) vs PostgreSQL with the title
  indexed at weight 0 (it still counts in the row length: the two differ until issue 15's BM25F lands);
- ``bm25f``: issue 15's BM25F, SQLite as an FTS5 table (text, title) ranked by bm25(f, 1.0, W) vs PostgreSQL
  with title_weight W (W = --title-weight).

Also the median and p95 time of one ranked search (rank_chunks, k=10) on each: CPU of this process (for
PostgreSQL the client side only) and wall time (noisy on a loaded machine). Prints a table, writes JSON.

    python bench/pg_fts_agreement.py --data ../shared/data --queries 500 --out bench/results/pg_fts_agreement.json
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from common import percentile  # noqa: E402
from graphmem.models import Chunk, Document  # noqa: E402
from graphmem.store import open_store  # noqa: E402
from graphmem.store.sqlite.fts import pruned_fts_query  # noqa: E402
from pg_server import drop_database, fresh_database  # noqa: E402

T0 = "2026-01-01T00:00:00.000Z"


def _queries(corpus: list[dict[str, str]], dev: list[dict[str, str]], n: int) -> list[str]:
    rng = random.Random(20)
    out = [q["question"] for q in dev][:n]
    while len(out) < n:
        words = rng.choice(corpus)["text"].split()
        start = rng.randrange(max(1, len(words) - 6))
        out.append(" ".join(words[start:start + rng.randint(2, 7)]))
    return out


def _ingest(store: object, corpus: list[dict[str, str]], titles: bool) -> float:
    t = time.process_time()
    for start in range(0, len(corpus), 500):
        with store.transaction():  # type: ignore[attr-defined]
            for i, p in enumerate(corpus[start:start + 500], start):
                doc = Document(f"p{i}", 1, p["title"] if titles else "", "2wiki", p["text"], f"h{i}", {}, T0)
                store.insert_document(doc, [Chunk(f"p{i}:v1:c0", f"p{i}", 1, 0, 0, len(p["text"]), p["text"])])  # type: ignore[attr-defined]
    return time.process_time() - t


def _compare(a: list[list[tuple[str, float]]], b: list[list[tuple[str, float]]]) -> dict[str, float]:
    overlaps, same, worst = [], 0, 0.0
    for x, y in zip(a, b):
        ix, iy = [c for c, _ in x], [c for c, _ in y]
        if not ix and not iy:
            overlaps.append(1.0)
            same += 1
            continue
        overlaps.append(len(set(ix) & set(iy)) / max(len(ix), len(iy)))
        same += ix == iy
        sx, sy = dict(x), dict(y)
        for c in set(ix) & set(iy):
            worst = max(worst, abs(sx[c] - sy[c]) / max(abs(sx[c]), 1e-9))
    return {"overlap@10": sum(overlaps) / len(overlaps), "same_order": same / len(a),
            "min_overlap@10": min(overlaps), "max_rel_score_diff": worst}


def _timed(fn, queries: list[str]) -> tuple[list[list[tuple[str, float]]], dict[str, float]]:  # type: ignore[no-untyped-def]
    out, cpu, wall = [], [], []
    for q in queries:
        t, w = time.process_time(), time.perf_counter()
        out.append(fn(q))
        cpu.append((time.process_time() - t) * 1000)
        wall.append((time.perf_counter() - w) * 1000)
    return out, {"p50_ms": percentile(cpu, 50), "p95_ms": percentile(cpu, 95),
                 "wall_p50_ms": percentile(wall, 50), "wall_p95_ms": percentile(wall, 95)}


def _fts5_bm25f(corpus: list[dict[str, str]], queries: list[str], weight: float) -> list[list[tuple[str, float]]]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5 (text, title, tokenize='porter unicode61')")
    conn.executemany("INSERT INTO f (rowid, text, title) VALUES (?, ?, ?)",
                     [(i + 1, p["text"], p["title"]) for i, p in enumerate(corpus)])
    out, memo = [], {}  # type: ignore[var-annotated]
    for q in queries:
        expr = pruned_fts_query(conn, "f", q, len(corpus), memo=memo)  # the SQLite store's own pruning
        rows = [] if expr is None else conn.execute(
            f"SELECT rowid, -bm25(f, 1.0, {weight!r}) FROM f WHERE f MATCH ? ORDER BY bm25(f, 1.0, {weight!r}),"
            " rowid LIMIT 10", (expr,)).fetchall()
        out.append([(f"p{r[0] - 1}:v1:c0", float(r[1])) for r in rows])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--title-weight", type=float, default=4.0)
    ap.add_argument("--out", type=Path, default=Path("bench/results/pg_fts_agreement.json"))
    args = ap.parse_args()
    corpus = json.loads((args.data / "2wiki" / "2wikimultihopqa_corpus.json").read_text())
    dev = json.loads((args.data / "2wiki" / "2wikimultihopqa_dev100.json").read_text())
    queries = _queries(corpus, dev, args.queries)
    results: dict[str, object] = {"passages": len(corpus), "queries": len(queries)}
    for setting, titles in (("text", False), ("title", True)):
        with tempfile.TemporaryDirectory() as home:
            name, url = fresh_database("gm_bench")
            lite, pg = open_store(Path(home)), open_store(Path(home), url=url)
            try:
                ingest = {"sqlite_cpu_s": _ingest(lite, corpus, titles), "postgres_cpu_s": _ingest(pg, corpus, titles)}
                a, ta = _timed(lambda q, s=lite: s.rank_chunks(q, 10), queries)
                b, tb = _timed(lambda q, s=pg: s.rank_chunks(q, 10, title_weight=0.0), queries)
                results[setting] = {**_compare(a, b), "ingest": ingest, "sqlite": ta, "postgres": tb}
                if titles:
                    c = _fts5_bm25f(corpus, queries, args.title_weight)
                    d, td = _timed(lambda q, s=pg: s.rank_chunks(q, 10, title_weight=args.title_weight), queries)
                    results["bm25f"] = {**_compare(c, d), "title_weight": args.title_weight, "postgres": td}
            finally:
                lite.close()
                pg.close()
                drop_database(name)
    print(f"{'setting':8} {'overlap@10':>10} {'min':>6} {'same order':>10} {'max rel diff':>12}")
    for setting in ("text", "title", "bm25f"):
        r = results[setting]
        assert isinstance(r, dict)
        print(f"{setting:8} {r['overlap@10']:10.4f} {r['min_overlap@10']:6.2f} {r['same_order']:10.3f}"
              f" {r['max_rel_score_diff']:12.2e}")
    text = results["text"]
    assert isinstance(text, dict)
    for what in ("p50_ms", "p95_ms", "wall_p50_ms", "wall_p95_ms"):
        print(f"rank_chunks {what}: sqlite {text['sqlite'][what]:.2f}, postgres {text['postgres'][what]:.2f}"
              + (" (client CPU only)" if not what.startswith("wall") else " (wall, loaded machine)"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
