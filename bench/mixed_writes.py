"""Mixed writes from several "hosts" (processes with separate homes) against one knowledge base store, and the
check that nothing was lost and every piece of evidence still points at its chunk and quote.

One writer process (``python bench/mixed_writes.py write HOME URL WORKER N``) makes N writes in turn: a
document with agent-supplied entities and a relation (so: chunks, evidence), a memory, a relation added by
hand between the entities of its previous document, a wiki page. It prints what it wrote as JSON.
:func:`run` starts several writers at once and :func:`verify` checks the store afterwards; tests/backends/
test_pg_concurrency.py and bench/backends.py both use them.

    python bench/mixed_writes.py run URL --workers 4 --writes 1000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

KINDS = ("document", "memory", "relation", "page")
CONFIG = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False},
          "memory": {"context_graph": {"edges": {"enable_topic_similar": False}}}}


def _config(url: str | None) -> dict[str, Any]:
    return {**CONFIG, **({"store": {"url": url}} if url else {})}


def write(home: Path, url: str | None, worker: int, n: int) -> dict[str, Any]:
    """Make ``n`` mixed writes as writer ``worker``; returns the ids written per kind."""
    import graphmem

    done: dict[str, list[str]] = {k: [] for k in KINDS}
    last_pair: tuple[str, str] | None = None
    with graphmem.open(home, config=_config(url)) as kb:
        for i in range(n):
            kind = KINDS[i % len(KINDS)]
            tag = f"w{worker}n{i}"
            if kind == "document" or (kind == "relation" and last_pair is None):
                svc, db = f"service {tag}", f"database {tag}"
                quote = f"The {svc} reads from the {db}."
                text = f"{quote} It was written by writer {worker} as write {i}."
                kb.ingest_with_content(f"doc-{tag}", f"Note {tag}", f"{tag}.txt", text,
                                       [{"name": svc, "type": "service", "supporting_text": quote},
                                        {"name": db, "type": "database", "supporting_text": quote}],
                                       [{"source": svc, "target": db, "type": "uses", "confidence": 0.9,
                                         "supporting_text": quote}])
                done["document"].append(f"doc-{tag}")
                last_pair = (svc, db)
            elif kind == "memory":
                out = kb.memory.add(f"writer {worker} remembers item {i}", user_id=f"user{worker}")
                done["memory"].append(out["results"][0]["id"])
            elif kind == "relation":
                assert last_pair is not None
                done["relation"].append(kb.add_edge(last_pair[1], last_pair[0], "supports", 0.8))
                last_pair = None
            else:
                r = kb.wiki.write_page("topic", f"Page {tag}", f"Written by writer {worker}, write {i}.\n")
                done["page"].append(r["slug"])
    return {"worker": worker, "written": done}


def run(url: str | None, workers: int, writes: int, root: Path | None = None,
        timeout: float = 600.0) -> dict[str, Any]:
    """Start ``workers`` writer processes (each with its own home under ``root``) at once; wait for them.
    Returns ``{"results": [...], "wall_s", "cpu_s" (the children's), "writes"}``; a failed writer raises."""
    import resource

    root = root or Path(tempfile.mkdtemp(prefix="gm-mixed-"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # A PostgreSQL store: a home per writer (a host each). SQLite: one home, the only way to share its file.
    homes = [root / (f"host{w}" if url else "shared") for w in range(workers)]
    if not url:
        import graphmem

        graphmem.open(homes[0], config=_config(None)).close()  # created once, not raced by the writers
    procs = [subprocess.Popen([sys.executable, __file__, "write", str(homes[w]), url or "", str(w),
                               str(writes)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(workers)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"writer failed (exit {p.returncode}): {err[-2000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"results": results, "wall_s": wall, "cpu_s": cpu, "writes": workers * writes, "home": str(homes[0])}


def verify(kb: Any, results: list[dict[str, Any]]) -> dict[str, Any]:
    """What the writers said they wrote, against the store: lost ids per kind, and evidence that does not
    point at an existing chunk containing its quote (``bad_evidence``)."""
    store = kb.store
    rows: dict[str, list[dict[str, Any]]] = {}
    for table in ("documents", "nodes", "edges", "pages", "provenance", "chunks"):
        rows[table] = [row for _, row in store.dump_rows([table])]
    have = {
        "document": {r["doc_id"] for r in rows["documents"]},
        "memory": {r["id"] for r in rows["nodes"] if r["kind"] == "memory"},
        "relation": {r["id"] for r in rows["edges"]},
        "page": {r["slug"] for r in rows["pages"]},
    }
    lost = {k: sorted(set(i for res in results for i in res["written"][k]) - have[k]) for k in KINDS}
    chunks = {r["chunk_id"]: r["text"] for r in rows["chunks"]}
    bad = [r for r in rows["provenance"] if r.get("chunk_id") not in chunks or r["text"] not in chunks[r["chunk_id"]]]
    ingested = {r["id"] for r in rows["edges"] if not r.get("manual")}
    cited = {r["item_id"] for r in rows["provenance"] if r["item_kind"] == "edge"}
    return {"written": {k: sum(len(res["written"][k]) for res in results) for k in KINDS},
            "lost": {k: len(v) for k, v in lost.items()}, "lost_ids": {k: v[:5] for k, v in lost.items() if v},
            "evidence_rows": len(rows["provenance"]), "bad_evidence": len(bad),
            "uncited_relations": len(ingested - cited)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("home", type=Path)
    w.add_argument("url")
    w.add_argument("worker", type=int)
    w.add_argument("n", type=int)
    r = sub.add_parser("run")
    r.add_argument("url", help="postgresql://... or '' (SQLite: one shared home)")
    r.add_argument("--workers", type=int, default=4)
    r.add_argument("--writes", type=int, default=1000)
    args = ap.parse_args()
    if args.cmd == "write":
        print(json.dumps(write(args.home, args.url or None, args.worker, args.n)))
        return
    import graphmem

    out = run(args.url or None, args.workers, args.writes)
    with graphmem.open(out["home"], config=_config(args.url or None)) as kb:
        report = verify(kb, out["results"])
    print(json.dumps({k: v for k, v in out.items() if k != "results"} | report, indent=2))


if __name__ == "__main__":
    main()
