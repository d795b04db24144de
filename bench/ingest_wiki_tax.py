"""What the wiki costs a default-config ingest (issue 16), side by side in one run.

The same documents of the 2Wiki corpus (batches of 20, ``kb.ingest_paths`` with the offline
extractor, as in ``bench/primitives.py``'s "ingest default" row) go into three knowledge bases,
batch by batch in turn:

- ``default``     the default config (static embeddings, generated wiki pages);
- ``no-wiki``     static embeddings, ``wiki.auto_pages = false`` (what the embedder costs);
- ``store-only``  no embeddings, no wiki pages (the row's primitive).

It prints wall and CPU ms per document (p50 over batches, and totals) and the ratios to
store-only, and the CPU of the calling thread alone (the writer: the rest is the extraction
pool's and, with embeddings, any tokenizer worker threads'), and for the default config the
calling thread's CPU inside the wiki's page regeneration (``kb.wiki.flush``): the wiki's own
work measured directly, not as the difference of two noisy totals; ``--profile N`` also prints the
cProfile top N functions (cumulative, then own time) of the default config's ingests, which
is what docs/benchmarks.md's "Default ingest and the wiki" sections quote.

``--floor`` also measures what the wiki's output costs bare, after the run: every file each
batch changed under wiki/ (its final bytes of that batch) written as a temp file and renamed into
place in a fresh folder, with no checks, and every page row each batch changed (pages with their
FTS5 and counter triggers, links, claims, cited documents, page nodes and names) deleted and
inserted raw, one transaction per batch, into a fresh knowledge base of the same schema. The wiki's
cost (default − no-wiki) is printed beside that floor.

    python bench/ingest_wiki_tax.py --data ../shared/data [--docs 200] [--profile 25] [--floor]
        [--out bench/results/ingest_wiki_tax.json]

``--base SRC --rounds N`` compares two versions instead: N rounds, each running this script
once with ``PYTHONPATH=SRC`` (before: e.g. ``git archive <rev> src | tar -x -C /tmp/base``,
SRC = /tmp/base/src) and once with this checkout's code (after), in turn, then prints one
table of every run's ratios (the machine's load changes between runs; the ratios of one run
are what compare) and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import percentile, static_model_dir  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Run the three configs over the same batches; print the table (and profile) and write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--profile", type=int, default=0, help="print this many top functions of the default config")
    ap.add_argument("--out", default="bench/results/ingest_wiki_tax.json", type=Path)
    ap.add_argument("--base", type=Path, help="the 'before' version's src/ folder: compare it with this checkout")
    ap.add_argument("--rounds", type=int, default=2, help="with --base: before/after pairs, alternating")
    ap.add_argument("--floor", action="store_true", help="also time the wiki's files and page rows written bare")
    args = ap.parse_args(argv)
    if args.base is not None:
        return compare(args)
    corpus = json.loads((args.data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))
    corpus = corpus[: args.docs]
    model = f"model2vec:{static_model_dir(args.data)}"
    configs: dict[str, dict[str, Any]] = {
        "default": {"embeddings": {"model": model}},
        "no-wiki": {"embeddings": {"model": model}, "wiki": {"auto_pages": False}},
        "store-only": {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}},
    }
    per: dict[str, list[tuple[float, float]]] = {k: [] for k in configs}
    main_cpu: dict[str, float] = {k: 0.0 for k in configs}  # this thread's CPU seconds, all batches
    prof = cProfile.Profile() if args.profile else None
    pages = 0
    snaps: list[tuple[dict[str, bytes], dict[str, list[Any]]]] = []  # per batch: changed files, changed rows
    floor: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        kbs = {k: graphmem.open(Path(tmp) / k, config=c) for k, c in configs.items()}
        _ = kbs["default"].embeddings.embedder  # model load is not ingest
        _ = kbs["no-wiki"].embeddings.embedder
        flush_cpu = [0.0]
        face = kbs["default"].wiki
        real_flush = face.flush

        def timed_flush(*a: Any, **k: Any) -> Any:  # the ingest's hooks look the method up on the face
            t = time.thread_time()
            try:
                return real_flush(*a, **k)
            finally:
                flush_cpu[0] += time.thread_time() - t
        face.flush = timed_flush  # type: ignore[method-assign]
        for i in range(0, len(corpus), args.batch):
            part = Path(tmp) / f"part{i}.json"
            part.write_text(json.dumps(corpus[i:i + args.batch]), encoding="utf-8")
            n = len(corpus[i:i + args.batch])
            for name, kb in kbs.items():
                w, c, t = time.perf_counter(), time.process_time(), time.thread_time()
                if prof is not None and name == "default":
                    prof.enable()
                kb.ingest_paths([part], extractor="offline")
                if prof is not None and name == "default":
                    prof.disable()
                per[name].append(((time.perf_counter() - w) * 1000 / n, (time.process_time() - c) * 1000 / n))
                main_cpu[name] += time.thread_time() - t
                if args.floor and name == "default":
                    snaps.append(_changed(kb.home, snaps))
        pages = len(kbs["default"].store.list_pages(None))
        if args.floor:
            floor = _floor(Path(tmp) / "floor", snaps, len(corpus))
        for kb in kbs.values():
            kb.close()
    rows = []
    base_cpu = sum(c for _, c in per["store-only"])
    base_wall = sum(w for w, _ in per["store-only"])
    wiki_cpu = round(flush_cpu[0] * 1000 / len(corpus), 3)
    print(f"\n{len(corpus)} documents, batches of {args.batch}; default config made {pages} wiki pages; its page "
          f"regeneration took {wiki_cpu} ms/doc of calling-thread CPU\n")
    print("| config | wall ms/doc p50 | cpu ms/doc p50 | cpu ms/doc mean | cpu ratio to store-only (mean) "
          "| calling thread cpu ms/doc | its ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, xs in per.items():
        cpu_mean = sum(c for _, c in xs) / len(xs)
        r = {"config": name, "wall_p50_ms": round(percentile([w for w, _ in xs], 50), 2),
             "cpu_p50_ms": round(percentile([c for _, c in xs], 50), 2), "cpu_mean_ms": round(cpu_mean, 2),
             "cpu_ratio": round(sum(c for _, c in xs) / max(base_cpu, 1e-9), 2),
             "wall_ratio": round(sum(w for w, _ in xs) / max(base_wall, 1e-9), 2),
             "main_thread_cpu_ms": round(main_cpu[name] * 1000 / len(corpus), 2),
             "main_thread_ratio": round(main_cpu[name] / max(main_cpu["store-only"], 1e-9), 2)}
        rows.append(r)
        print(f"| {name} | {r['wall_p50_ms']} | {r['cpu_p50_ms']} | {r['cpu_mean_ms']} | {r['cpu_ratio']} "
              f"| {r['main_thread_cpu_ms']} | {r['main_thread_ratio']} |")
    if floor:
        wiki = (sum(c for _, c in per["default"]) - sum(c for _, c in per["no-wiki"])) / len(per["default"])
        n_files = sum(len(f) for f, _ in snaps)
        n_rows = sum(len(r["pages"][1]) for _, r in snaps)
        print(f"\nthe wiki's floor ({n_files} file writes, {n_rows} page rows over {len(snaps)} batches), "
              "cpu ms/doc:\n")
        print("| wiki (default − no-wiki) | bare files: temp + rename | bare page rows | floor total | wiki / floor |")
        print("|---|---|---|---|---|")
        total = floor["files_ms"] + floor["rows_ms"]
        floor.update({"wiki_ms": round(wiki, 3), "total_ms": round(total, 3),
                      "ratio": round(wiki / max(total, 1e-9), 2), "file_writes": n_files, "page_rows": n_rows})
        print(f"| {wiki:.2f} | {floor['files_ms']:.2f} | {floor['rows_ms']:.2f} | {total:.2f} | {floor['ratio']} |")
    profile_text = ""
    if prof is not None:
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats("cumulative").print_stats(args.profile)
        stats.sort_stats("tottime").print_stats(args.profile)
        profile_text = buf.getvalue()
        print(profile_text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows, "pages": pages, "wiki_flush_cpu_ms": wiki_cpu,
                                    "command": " ".join(sys.argv),
                                    "profile": profile_text, "floor": floor}, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


_PAGE_TABLES = {"pages": "slug", "page_links": "source", "page_claims": "page", "page_sources": "page"}


def _changed(home: Path, before: list[tuple[dict[str, bytes], dict[str, list[Any]]]]
             ) -> tuple[dict[str, bytes], dict[str, list[Any]]]:
    """What the last batch changed in ``home``: the files under wiki/ with their new bytes, and the rows
    of the pages whose content changed (``{table: (columns, rows)}``, page nodes and names included)."""
    root = home / "wiki"
    seen: dict[str, bytes] = {}
    for earlier, _ in before:
        seen.update(earlier)
    now = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    files = {rel: data for rel, data in now.items() if seen.get(rel) != data}
    conn = sqlite3.connect(f"file:{home / 'graph.db'}?mode=ro", uri=True)
    try:
        old = {slug for _, rows in before for slug in rows["_hashes"]}
        hashes = {f"{slug}\x1f{h}" for slug, h in conn.execute("SELECT slug, content_hash FROM pages")}
        slugs = sorted(k.split("\x1f")[0] for k in hashes - old)
        out: dict[str, list[Any]] = {"_hashes": sorted(hashes - old)}
        marks = ",".join("?" * len(slugs))
        for table, key in _PAGE_TABLES.items():
            cur = conn.execute(f"SELECT * FROM {table} WHERE {key} IN ({marks})", slugs)
            out[table] = [[d[0] for d in cur.description], cur.fetchall()]
        cur = conn.execute(f"SELECT * FROM nodes WHERE id IN (SELECT node_id FROM pages WHERE slug IN ({marks}))",
                           slugs)
        out["nodes"] = [[d[0] for d in cur.description], cur.fetchall()]
        cur = conn.execute(f"SELECT * FROM node_names WHERE kind = 'page' AND alias IN ({marks})", slugs)
        out["node_names"] = [[d[0] for d in cur.description], cur.fetchall()]
    finally:
        conn.close()
    return files, out


def _floor(where: Path, snaps: list[tuple[dict[str, bytes], dict[str, list[Any]]]], n_docs: int) -> dict[str, float]:
    """CPU ms per document of writing the batches' changed files bare (temp file + rename, no checks) and
    of deleting and inserting their changed page rows raw (one transaction per batch)."""
    files_dir = where / "wiki"
    for files, _ in snaps:
        for rel in files:
            (files_dir / rel).parent.mkdir(parents=True, exist_ok=True)
    c = time.process_time()
    for files, _ in snaps:
        for rel, data in files.items():
            path = files_dir / rel
            temp = f"{path.parent}/.{path.name}.tmp"
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, data)
            os.close(fd)
            os.replace(temp, path)
    files_ms = (time.process_time() - c) * 1000 / n_docs
    home = where / "kb"
    graphmem.open(home, config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}).close()
    conn = sqlite3.connect(home / "graph.db", isolation_level=None)
    for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON",
                   "cache_size = -65536", "mmap_size = 67108864"):
        conn.execute(f"PRAGMA {pragma}")
    c = time.process_time()
    for _, rows in snaps:
        conn.execute("BEGIN IMMEDIATE")
        slugs = [(k.split("\x1f")[0],) for k in rows["_hashes"]]
        conn.executemany("DELETE FROM pages WHERE slug = ?", slugs)  # links, claims, sources cascade
        for table in (*_PAGE_TABLES, "nodes", "node_names"):
            cols, values = rows[table]
            if values:
                names = ", ".join(f'"{col}"' for col in cols)
                conn.executemany(f'INSERT OR REPLACE INTO "{table}" ({names}) VALUES ({", ".join("?" * len(cols))})',
                                 values)
        conn.execute("COMMIT")
    rows_ms = (time.process_time() - c) * 1000 / n_docs
    conn.close()
    return {"files_ms": round(files_ms, 3), "rows_ms": round(rows_ms, 3)}


def compare(args: argparse.Namespace) -> int:
    """Alternate before (``--base``) and after (this checkout) runs; one table of their ratios."""
    here = Path(__file__).resolve()
    mine = str(here.parent.parent / "src")
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(1, args.rounds + 1):
            for version, src in (("before", str(args.base.resolve())), ("after", mine)):
                out = Path(tmp) / f"{version}{rnd}.json"
                env = {**os.environ, "PYTHONPATH": src}
                subprocess.run([sys.executable, str(here), "--data", str(args.data), "--docs", str(args.docs),
                                "--batch", str(args.batch), "--out", str(out)],
                               env=env, check=True, stdout=subprocess.DEVNULL)
                result = json.loads(out.read_text(encoding="utf-8"))
                rows = {r["config"]: r for r in result["rows"]}
                runs.append({"round": rnd, "version": version, "rows": rows, "wiki_cpu": result["wiki_flush_cpu_ms"]})
    print(f"\n{args.docs} documents, batches of {args.batch}; before = {args.base}, after = {mine}\n")
    print("| round | version | default cpu ms/doc | no-wiki | store-only | default / store-only "
          "| no-wiki / store-only | wiki's share: (default − no-wiki) / store-only "
          "| calling thread: default / store-only | wiki regeneration, calling-thread cpu ms/doc |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        d, n, s = (run["rows"][k] for k in ("default", "no-wiki", "store-only"))
        run["wiki_share"] = round((d["cpu_mean_ms"] - n["cpu_mean_ms"]) / max(s["cpu_mean_ms"], 1e-9), 2)
        print(f"| {run['round']} | {run['version']} | {d['cpu_mean_ms']} | {n['cpu_mean_ms']} | {s['cpu_mean_ms']} "
              f"| **{d['cpu_ratio']}** | {n['cpu_ratio']} | {run['wiki_share']} | {d['main_thread_ratio']} "
              f"| {run['wiki_cpu']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"runs": runs, "command": " ".join(sys.argv)}, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
