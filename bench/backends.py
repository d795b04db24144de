"""SQLite vs PostgreSQL in one run: ingest throughput, chunk search and memory search latency (p50/p95), the
ranking agreement between the two (overlap@10 of the same queries' results), and mixed writes from several
hosts at once (nothing lost, evidence consistent).

Corpus: 2WikiMultihopQA's passages (../shared/data/2wiki), ingested through the public API as records with
``title`` and ``text`` fields (``kb.ingest_paths`` of a JSONL file: the title is a field, not part of the
text); queries: the 2Wiki development questions; memories: the first sentences of (other) passages, searched
with the same questions. Embeddings: the offline static model (``--model none`` for BM25 + graph only). PostgreSQL:
a pgserver instance started for the run (``--pg-url`` to use a server of your own: a user that may create
databases). CPU seconds are this process's (the PostgreSQL server's own CPU is not in them): compare wall
times for the end-to-end cost, CPU for graphmem's own work.

    python bench/backends.py --passages 2000 --queries 100 --memories 500 --writers 4 --writes 250
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import graphmem

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import percentile, static_model_dir  # noqa: E402
from mixed_writes import run as run_writers  # noqa: E402
from mixed_writes import verify as verify_writes  # noqa: E402
from twowiki import load_2wiki  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _server(url: str | None, folder: Path) -> tuple[str, Any]:
    """The server's url (a pgserver started in ``folder`` unless ``url`` is given) and the handle to stop."""
    if url:
        return url, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

        server = pgserver.get_server(str(folder), cleanup_mode="stop")
    return str(server.get_uri()), server


def _database(server_url: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = urlunsplit(urlsplit(server_url)._replace(path="/" + name))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return url


def _timed(fn: Any) -> tuple[Any, float, float]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def _latency(fn: Any, queries: list[str]) -> tuple[list[Any], dict[str, float]]:
    fn(queries[0])  # warm: model, vector index, connections
    results, lat = [], []
    for q in queries:
        t = time.perf_counter()
        results.append(fn(q))
        lat.append((time.perf_counter() - t) * 1000)
    return results, {"p50_ms": round(statistics.median(lat), 2), "p95_ms": round(percentile(lat, 95), 2)}


def _overlap(a: list[list[str]], b: list[list[str]]) -> dict[str, float]:
    """Mean share of the top-10 both lists hold (as multisets: two memories may have the same text)."""
    per = [(sum((Counter(x) & Counter(y)).values()) / max(len(x), len(y))) if (x or y) else 1.0
           for x, y in zip(a, b)]
    return {"mean": round(sum(per) / len(per), 4), "min": round(min(per), 4),
            "identical": sum(1 for x, y in zip(a, b) if x == y), "queries": len(per)}


def one_backend(label: str, url: str | None, home: Path, corpus: Path, queries: list[str], memories: list[str],
                model: str) -> dict[str, Any]:
    cfg: dict[str, Any] = {"embeddings": {"model": model}, "wiki": {"auto_pages": False}}
    if url:
        cfg["store"] = {"url": url}
    with graphmem.open(home, config=cfg) as kb:
        if model != "none":
            _ = kb.embeddings.embedder  # loaded before timing
        summary, wall, cpu = _timed(lambda: kb.ingest_paths([corpus], extractor="offline", as_jsonl=True))
        ingest = {"passages": summary.added, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                  "passages_per_s": round(summary.added / wall, 1)}
        hits, search = _latency(lambda q: [h.id for h in kb.search(q, k=10).hits], queries)
        _, mwall, mcpu = _timed(lambda: [kb.memory.add(m, user_id="bench") for m in memories])
        mem_hits, msearch = _latency(lambda q: [r["memory"] for r in kb.memory.search(
            q, user_id="bench", limit=10)["results"]], queries)
    row = {"backend": label, "ingest": ingest, "search": search,
           "memory_add": {"memories": len(memories), "wall_s": round(mwall, 2), "cpu_s": round(mcpu, 2)},
           "memory_search": msearch}
    print(f"  {label:<10} ingest {ingest['passages']} passages {ingest['wall_s']:7.1f} s "
          f"({ingest['passages_per_s']:6.1f}/s, cpu {ingest['cpu_s']:.1f} s)  search p50 {search['p50_ms']:7.2f} "
          f"p95 {search['p95_ms']:7.2f} ms  memory search p50 {msearch['p50_ms']:6.2f} p95 {msearch['p95_ms']:6.2f} ms",
          flush=True)
    return {"row": row, "hits": hits, "memory_hits": mem_hits}


def concurrency(label: str, url: str | None, root: Path, writers: int, writes: int) -> dict[str, Any]:
    out = run_writers(url, writers, writes, root=root, timeout=3600)
    cfg = {"embeddings": {"model": "none"}, **({"store": {"url": url}} if url else {})}
    with graphmem.open(Path(out["home"]) if not url else root / "check", config=cfg) as kb:
        report = verify_writes(kb, out["results"])
    row = {"backend": label, "writers": writers, "writes": out["writes"], "wall_s": round(out["wall_s"], 2),
           "writes_per_s": round(out["writes"] / out["wall_s"], 1), "child_cpu_s": round(out["cpu_s"], 2),
           "lost": sum(report["lost"].values()), "bad_evidence": report["bad_evidence"],
           "uncited_relations": report["uncited_relations"], "evidence_rows": report["evidence_rows"],
           "homes": writers if url else 1}
    print(f"  {label:<10} {writers} writers x {writes} mixed writes: {row['wall_s']:.1f} s "
          f"({row['writes_per_s']}/s), lost {row['lost']}, bad evidence {row['bad_evidence']}", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--passages", type=int, default=2000, help="first N corpus passages (0: all 6,119)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--memories", type=int, default=500)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--writes", type=int, default=250, help="mixed writes per writer (0: skip)")
    ap.add_argument("--model", default="static", help="static (the offline model) or none")
    ap.add_argument("--pg-url", default=None)
    ap.add_argument("--out", type=Path, default=Path("bench/results/backends.json"))
    args = ap.parse_args(argv)
    records, questions, _ = load_2wiki(args.data)
    # Memories: the first sentence of passages (distinct texts; equal texts would make ties that either
    # backend may break its own way), from the end of the corpus when it is not all ingested.
    memories = list(dict.fromkeys(r["text"].split(". ")[0].strip() for r in reversed(records)))[: args.memories]
    if args.passages:
        records = records[: args.passages]
    queries = [q["question"] for q in questions][: args.queries]
    model = "none" if args.model == "none" else f"model2vec:{static_model_dir(args.data)}"
    tmp = Path(tempfile.mkdtemp(prefix="gm-backends-"))
    corpus = tmp / "2wiki.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    server_url, server = _server(args.pg_url, tmp / "pg")
    try:
        print(f"2wiki: {len(records)} passages, {len(queries)} queries, {len(memories)} memories, model {args.model}")
        sqlite = one_backend("sqlite", None, tmp / "sqlite", corpus, queries, memories, model)
        pg = one_backend("postgres", _database(server_url, f"gm_bench_{uuid.uuid4().hex[:8]}"), tmp / "postgres",
                         corpus, queries, memories, model)
        agreement = {"search_overlap_at_10": _overlap(sqlite["hits"], pg["hits"]),
                     "memory_overlap_at_10": _overlap(sqlite["memory_hits"], pg["memory_hits"])}
        s, p = sqlite["row"], pg["row"]
        ratios = {"ingest_wall": round(p["ingest"]["wall_s"] / s["ingest"]["wall_s"], 2),
                  "ingest_cpu": round(p["ingest"]["cpu_s"] / s["ingest"]["cpu_s"], 2),
                  "search_p50": round(p["search"]["p50_ms"] / s["search"]["p50_ms"], 2),
                  "memory_search_p50": round(p["memory_search"]["p50_ms"] / s["memory_search"]["p50_ms"], 2)}
        print(f"  agreement: search overlap@10 mean {agreement['search_overlap_at_10']['mean']:.3f} "
              f"(min {agreement['search_overlap_at_10']['min']:.2f}, "
              f"{agreement['search_overlap_at_10']['identical']}/{len(queries)} identical); memory search "
              f"{agreement['memory_overlap_at_10']['mean']:.3f}")
        print(f"  postgres / sqlite: {ratios}")
        conc = []
        if args.writes:
            conc.append(concurrency("sqlite", None, tmp / "conc-sqlite", args.writers, args.writes))
            conc.append(concurrency("postgres", _database(server_url, f"gm_conc_{uuid.uuid4().hex[:8]}"),
                                    tmp / "conc-pg", args.writers, args.writes))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"info": {"passages": len(records), "queries": len(queries),
                                                 "memories": len(memories), "model": args.model},
                                        "rows": [s, p], "ratios": ratios, "agreement": agreement,
                                        "concurrency": conc}, indent=2), encoding="utf-8")
        print(f"wrote {args.out}")
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
