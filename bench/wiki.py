"""Wiki benchmark: write cost as the wiki grows, search and lint at 10,000 pages, and what the
generated pages cost an ingest.

What it measures
----------------
On fresh knowledge bases in a temporary folder (``--tmpdir``):

1. **Writes.** ``kb.wiki.write_page`` of N pages (default 10,000), timed one by one: mean ms of
   the first 1,000 and of the last 1,000 and their ratio (last / first; ~1.0 means a write does
   not get dearer as the wiki grows: index.md is sharded, nothing rereads the whole wiki).
   Pages: three categories (topic, entity, summary); titles and a body of ~1,200 characters
   drawn from ~2,000 content words with Zipf-like popularity (plus stop words), with 3 to 6
   ``[[wikilinks]]`` to other pages (some to pages not written yet).
2. **Search** at N pages: one warm-up query (not counted), then 50
   ``kb.wiki.search_wiki(q, k=10)`` calls of one to three words drawn like the text: p50 and
   p95 ms (the automatic sync runs before each; a full re-scan at most every
   ``wiki.autosync_interval`` seconds). Also timed: ``wiki.sync()`` with nothing changed (a
   full stat scan of N files) and ``search_pages`` in the store alone (FTS5 only).
3. **Lint** at N pages: ``kb.wiki.lint_wiki()`` wall time and the number of problems found.
4. **Ingest** with generated pages on vs off, side by side in one run (ratios, not remembered
   numbers): M documents (default 2,000) of the ingest_query corpus (10 entities, 12 relations,
   ~1,500 characters each) through the bulk pipeline (``ingest_documents`` with supplied
   extractions, 2 workers) and K documents (default 300) through ``ingest_with_content`` one by
   one, with pages off, on, and on inside ``kb.wiki.deferred()`` (off and on also report the
   CPU ms per document of the first and last 10%).

How to run
----------
From the repository root, with the project's virtualenv active::

    python bench/wiki.py                         # N = 10,000 pages, M = 2,000, K = 300
    python bench/wiki.py --pages 2000 --ingest-docs 500 --single-docs 100   # quick look
    python bench/wiki.py --tmpdir /dev/shm      # take the file system out of the figures

It prints a table and writes JSON (default ``bench/results/wiki.json``). Embeddings are off
(``embeddings.model = "none"``): this measures the wiki, not the embedder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import graphmem
from graphmem.extraction import parse_extraction
from graphmem.ingest.extractors.base import SourceDocument
from graphmem.ingest.pipeline import ingest_documents

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import percentile  # noqa: E402
from ingest_query import Corpus  # noqa: E402 - the foundation benchmark's corpus, reused

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "wiki.json"
BASE_CONFIG: dict[str, Any] = {"embeddings": {"model": "none"}}

STEMS = ["cache", "queue", "broker", "replica", "shard", "index", "ledger", "packet", "router", "socket", "buffer", "thread", "kernel", "driver", "sensor", "valve", "pump", "motor", "relay", "switch", "gateway", "proxy", "tunnel", "vault", "token", "session", "cookie", "schema", "column", "table", "cursor", "lock", "latch", "mutex", "barrier", "signal", "timer", "clock", "budget", "quota", "tenant", "cluster", "region", "zone", "rack", "node", "disk", "volume", "snapshot", "backup", "restore", "migration", "rollout", "canary", "feature", "flag", "metric", "alert", "pager", "incident", "outage", "latency", "throughput", "backlog", "retry", "timeout", "deadline"]
SUFFIXES = ["ing", "er", "ion", "ity", "al", "ive", "ment", "ness", "ous", "able", "ize", "ward", "ship", "hood", "less", "ful", "ism", "ist", "ory", "ant"]
FILLER = ["the", "a", "of", "and", "to", "in", "is", "that", "for", "on", "with", "as", "by", "at", "from", "this", "be", "are", "was", "it", "an", "which", "or", "has", "have", "not", "but", "can", "will", "its", "one", "all", "were", "when", "there", "been", "more", "also", "into", "other"]
# ~2,000 distinct content words (stem + suffix + a letter), drawn with Zipf-like popularity:
# a few words are on most pages, most words on a few, as in real notes.
WORDS = [f"{s}{x}{c}" for s in STEMS for x in SUFFIXES for c in "abcd"]
random.Random("words").shuffle(WORDS)
WORDS = WORDS[:2000]
_CUM: list[float] = []
for _rank in range(len(WORDS)):
    _CUM.append((_CUM[-1] if _CUM else 0.0) + 1.0 / (_rank + 1))


def zipf_word(rng: random.Random) -> str:
    x = rng.random() * _CUM[-1]
    lo, hi = 0, len(_CUM) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _CUM[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return WORDS[lo]


def page_title(i: int) -> str:
    rng = random.Random(f"title:{i}")
    return f"{zipf_word(rng).title()} {zipf_word(rng)} {i}"


def page_body(i: int, n: int) -> str:
    rng = random.Random(f"body:{i}")
    words: list[str] = []
    size = 0
    while size < 1200:
        words.append(zipf_word(rng) if rng.random() < 0.3 else rng.choice(FILLER))
        size += len(words[-1]) + 1
    for _ in range(rng.randint(3, 6)):
        j = rng.randrange(n)
        slug = page_title(j).lower().replace(" ", "-")
        words.insert(rng.randrange(len(words)), f"[[{slug}]]")
    lines = [" ".join(words[k : k + 16]) for k in range(0, len(words), 16)]
    return f"# {page_title(i)}\n\n" + "\n".join(lines) + "\n"


def bench_pages(n: int, tmp: Path, queries: int) -> dict[str, Any]:
    home = tmp / "pages"
    kb = graphmem.open(home, config=BASE_CONFIG)
    cats = ["topic", "entity", "summary"]
    ms: list[float] = []
    try:
        for i in range(n):
            body = page_body(i, n)
            t0 = time.perf_counter()
            kb.wiki.write_page(cats[i % 3], page_title(i), body, summary=f"page {i} about {page_title(i)}")
            ms.append((time.perf_counter() - t0) * 1000)
            if (i + 1) % max(n // 10, 1) == 0:
                print(f"  pages: {i + 1} written, last {ms[-1]:.2f} ms", file=sys.stderr, flush=True)
        block = min(1000, max(n // 10, 1))
        first, last = statistics.mean(ms[:block]), statistics.mean(ms[-block:])
        rng = random.Random("queries")
        qs = [" ".join(zipf_word(rng) for _ in range(rng.randint(1, 3))) for _ in range(queries + 1)]
        t0 = time.perf_counter()
        kb.wiki.search_wiki(qs[0])  # warm-up (not counted)
        first_search = (time.perf_counter() - t0) * 1000
        search_ms, store_ms, hits = [], [], []
        for q in qs[1:]:
            t0 = time.perf_counter()
            out = kb.wiki.search_wiki(q, k=10)
            search_ms.append((time.perf_counter() - t0) * 1000)
            hits.append(len(out))
            t0 = time.perf_counter()
            kb.store.search_pages(q, 10)
            store_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        kb.wiki.sync()
        sync_ms = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        report = kb.wiki.lint_wiki()
        lint_s = time.perf_counter() - t0
        index_bytes = (kb.wiki.dir / "index.md").stat().st_size
    finally:
        kb.close()
    return {
        "pages": n,
        "write_ms_first_block": round(first, 3),
        "write_ms_last_block": round(last, 3),
        "write_block": block,
        "write_last_over_first": round(last / first, 3),
        "write_ms_deciles": [round(statistics.mean(ms[j * n // 10 : (j + 1) * n // 10]), 3) for j in range(10)],
        "search_first_ms": round(first_search, 2),
        "search_p50_ms": round(percentile(search_ms, 50), 3),
        "search_p95_ms": round(percentile(search_ms, 95), 3),
        "store_search_p50_ms": round(percentile(store_ms, 50), 3),
        "search_mean_hits": round(statistics.mean(hits), 1),
        "sync_nothing_changed_ms": round(sync_ms, 1),
        "lint_s": round(lint_s, 3),
        "lint_problems": report["problems"],
        "index_md_bytes": index_bytes,
    }


def _open(path: Path, auto: bool) -> graphmem.KnowledgeBase:
    return graphmem.open(path, config={**BASE_CONFIG, "wiki": {"auto_pages": auto}})


def bench_ingest(m: int, k: int, tmp: Path) -> dict[str, Any]:
    corpus = Corpus(0, 3000, 1.0)
    docs = [corpus.document(i) for i in range(max(m, k))]
    out: dict[str, Any] = {"bulk_docs": m, "single_docs": k}
    for auto in (False, True):
        kb = _open(tmp / f"bulk-{auto}", auto)
        try:
            sds = [SourceDocument(d[0], d[1], d[2], d[3], extraction=parse_extraction(d[4], d[5])) for d in docs[:m]]
            t0 = time.perf_counter()
            ingest_documents(kb.ctx, sds, None, workers=2)
            dt = time.perf_counter() - t0
            out[f"bulk_docs_per_s_{'on' if auto else 'off'}"] = round(m / dt, 1)
            out[f"bulk_pages_{'on' if auto else 'off'}"] = kb.store.stats()["nodes"].get("page", 0)
        finally:
            kb.close()
        print(f"  ingest: bulk pages {'on' if auto else 'off'} done", file=sys.stderr, flush=True)
    out["bulk_on_over_off"] = round(out["bulk_docs_per_s_on"] / out["bulk_docs_per_s_off"], 3)
    for mode in ("off", "on", "deferred"):
        kb = _open(tmp / f"single-{mode}", mode != "off")
        try:
            t0 = time.perf_counter()
            if mode == "deferred":
                with kb.wiki.deferred():
                    for d in docs[:k]:
                        kb.ingest_with_content(*d)
            else:
                cpu: list[float] = []
                for d in docs[:k]:
                    c0 = time.process_time()
                    kb.ingest_with_content(*d)
                    cpu.append((time.process_time() - c0) * 1000)
                tenth = max(k // 10, 1)
                out[f"single_cpu_ms_first10_{mode}"] = round(statistics.mean(cpu[:tenth]), 2)
                out[f"single_cpu_ms_last10_{mode}"] = round(statistics.mean(cpu[-tenth:]), 2)
            out[f"single_docs_per_s_{mode}"] = round(k / (time.perf_counter() - t0), 1)
        finally:
            kb.close()
        print(f"  ingest: single {mode} done", file=sys.stderr, flush=True)
    return out


def table(r: dict[str, Any]) -> str:
    p, g = r["pages"], r["ingest"]
    rows = [
        ("pages", f"{p['pages']:,}"),
        (f"write_page ms, first {p['write_block']:,}", f"{p['write_ms_first_block']:.2f}"),
        (f"write_page ms, last {p['write_block']:,}", f"{p['write_ms_last_block']:.2f}"),
        ("write last / first", f"{p['write_last_over_first']:.2f}"),
        ("search_wiki p50 / p95 ms", f"{p['search_p50_ms']:.2f} / {p['search_p95_ms']:.2f}"),
        ("  store FTS5 only, p50 ms", f"{p['store_search_p50_ms']:.2f}"),
        ("  first search ms", f"{p['search_first_ms']:.1f}"),
        ("wiki sync, nothing changed, ms", f"{p['sync_nothing_changed_ms']:.1f}"),
        ("lint_wiki s (problems)", f"{p['lint_s']:.2f} ({p['lint_problems']:,})"),
        ("index.md bytes", f"{p['index_md_bytes']:,}"),
        (f"bulk ingest docs/s, pages off ({g['bulk_docs']:,} docs)", f"{g['bulk_docs_per_s_off']:.0f}"),
        ("bulk ingest docs/s, pages on", f"{g['bulk_docs_per_s_on']:.0f} ({g['bulk_pages_on']:,} pages)"),
        ("bulk on / off", f"{g['bulk_on_over_off']:.2f}"),
        (f"ingest_with_content docs/s off ({g['single_docs']} docs)", f"{g['single_docs_per_s_off']:.0f}"),
        ("ingest_with_content docs/s on", f"{g['single_docs_per_s_on']:.0f}"),
        ("ingest_with_content docs/s on, deferred()", f"{g['single_docs_per_s_deferred']:.0f}"),
        *((f"  CPU ms/doc first / last 10%, {m}",
           f"{g[f'single_cpu_ms_first10_{m}']:.1f} / {g[f'single_cpu_ms_last10_{m}']:.1f}") for m in ("off", "on")),
    ]
    w = max(len(a) for a, _ in rows)
    return "\n".join(f"{a:<{w}}  {b}" for a, b in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=10_000, help="pages to write (default 10000)")
    ap.add_argument("--queries", type=int, default=50, help="timed searches (default 50)")
    ap.add_argument("--ingest-docs", type=int, default=2000, help="documents for the bulk ingest (default 2000)")
    ap.add_argument("--single-docs", type=int, default=300, help="documents ingested one by one (default 300)")
    ap.add_argument("--tmpdir", default=None, help="where to create the temporary knowledge bases")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    args = ap.parse_args(argv)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    with tempfile.TemporaryDirectory(prefix="graphmem-bench-wiki-", dir=args.tmpdir) as t:
        tmp = Path(t)
        print(f"writing {args.pages:,} pages...", file=sys.stderr, flush=True)
        pages = bench_pages(args.pages, tmp, args.queries)
        print("ingesting...", file=sys.stderr, flush=True)
        ingest = bench_ingest(args.ingest_docs, args.single_docs, tmp)
    result = {
        "benchmark": "wiki",
        "started": started,
        "command": "python bench/wiki.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
                    "platform": platform.platform(), "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg")
                    else None, "tmpdir": args.tmpdir or tempfile.gettempdir()},
        "pages": pages,
        "ingest": ingest,
    }
    print(table(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"JSON: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
