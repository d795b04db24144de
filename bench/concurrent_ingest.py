"""Several processes ingesting into ONE knowledge base at once (SQLite WAL, BEGIN IMMEDIATE).

Each process ingests ``--docs`` documents through ``kb.ingest_with_content`` with entities from
a shared vocabulary (so they contend for the same entity rows). Afterwards the script checks
that every document is present exactly once, entities were deduplicated across processes, the
evidence count is exact and SQLite's integrity check passes; it reports the wall time against
one process doing all the documents alone.

    python bench/concurrent_ingest.py --procs 2 --docs 500
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import graphmem

WORKER = """
import sys, graphmem
home, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
vocab = [f"component {i}" for i in range(200)]
with graphmem.open(home, config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}) as kb:
    for i in range(n):
        a, b = vocab[(i * 7) % 200], vocab[(i * 11 + 3) % 200]
        if a == b:
            b = vocab[(i + 1) % 200]
        text = f"Report {tag}-{i}: {a} depends on {b}. " + "Nothing else happened that day. " * 30
        kb.ingest_with_content(f"{tag}-{i}", f"Report {i}", "gen", text,
                               [{"name": a, "type": "component"}, {"name": b, "type": "component"}],
                               [{"source": a, "target": b, "type": "depends on", "confidence": 0.9,
                                 "supporting_text": f"{a} depends on {b}."}])
"""


def run(home: Path, tags: list[str], n: int) -> float:
    graphmem.open(home, config={"embeddings": {"model": "none"}}).close()
    t = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(home), tag, str(n)]) for tag in tags]
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"worker failed with exit code {p.returncode}")
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    """Concurrent vs sequential, then consistency checks."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--docs", type=int, default=500, help="documents per process")
    ap.add_argument("--out", default="bench/results/concurrent_ingest.json", type=Path)
    args = ap.parse_args(argv)
    tags = [f"p{i}" for i in range(args.procs)]
    with tempfile.TemporaryDirectory() as tmp:
        concurrent_s = run(Path(tmp) / "shared", tags, args.docs)
        sequential_s = run(Path(tmp) / "alone", ["solo"], args.docs * args.procs)
        with graphmem.open(Path(tmp) / "shared", config={"embeddings": {"model": "none"}}) as kb:
            ids = {d.doc_id for d in kb.documents.list()}
            st = kb.stats()
            ok = kb.store.conn.execute("PRAGMA integrity_check").fetchone()[0]
    expected = {f"{t}-{i}" for t in tags for i in range(args.docs)}
    row = {"processes": args.procs, "docs_per_process": args.docs, "documents_present": len(ids),
           "all_present": ids == expected, "entities": st["entities"], "provenance": st["provenance"],
           "provenance_expected": len(expected) * 3, "integrity": ok,
           "concurrent_s": round(concurrent_s, 1), "one_process_s": round(sequential_s, 1)}
    print("| processes x docs | present | entities | evidence (expected) | integrity | concurrent s | one process s |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {args.procs} x {args.docs} | {len(ids)} ({'all' if row['all_present'] else 'MISSING'}) | "
          f"{st['entities']} | {st['provenance']} ({row['provenance_expected']}) | {ok} | {row['concurrent_s']} | "
          f"{row['one_process_s']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(row, indent=2), encoding="utf-8")
    return 0 if row["all_present"] and ok == "ok" and st["provenance"] == row["provenance_expected"] else 1


if __name__ == "__main__":
    sys.exit(main())
