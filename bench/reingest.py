"""Re-ingesting changed files beside a first ingest of the same files, side by side in one run.

A folder of N small Markdown notes (each naming three of 300 services) is ingested into a fresh knowledge base
through the CLI's code path (``kb.ingest_paths``, default wiki pages, the offline extractor, no embedding model
so the figure is graphmem's own), then every file is changed (one line appended) and the folder ingested
again: N new versions, each regenerating its summary page and the entity pages it names; then every tenth file
is deleted and the folder ingested with ``prune=True``. It prints wall and CPU seconds per phase, ms per
document, the re-ingest's ratio to the first ingest and CPU ms per pruned document, and writes JSON.

    python bench/reingest.py [--files 2000] [--rounds 2] [--out bench/results/reingest.json]
    PYTHONPATH=<other tree>/src python bench/reingest.py ...     # another version, same command

A re-ingest did the same work as a first ingest plus replacing rows, yet took ~6x its time per document: with
``PRAGMA temp_store = MEMORY`` the savepoint journal of the wiki's page writes stayed in memory, where SQLite
walks it as a list (see docs/benchmarks.md, "Re-ingest").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import graphmem


def make_notes(folder: Path, n: int, seed: int = 1) -> list[Path]:
    rng = random.Random(seed)
    services = [f"Service{i}" for i in range(300)]
    paths = []
    for i in range(n):
        a, b, c = rng.sample(services, 3)
        path = folder / f"folder{i % 20}" / f"note{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntitle: Note {i}\n---\n# Note {i}\n\n{a} depends on {b}. {b} causes {c} outages.\n",
                        encoding="utf-8")
        paths.append(path)
    return paths


def timed(fn: Any) -> tuple[float, float, Any]:
    w, c = time.perf_counter(), time.process_time()
    got = fn()
    return time.perf_counter() - w, time.process_time() - c, got


def one_round(root: Path, n: int) -> dict[str, Any]:
    vault = root / "vault"
    paths = make_notes(vault, n)
    with graphmem.open(root / "kb", config={"embeddings": {"model": "none"}}) as kb:
        fw, fc, first = timed(lambda: kb.ingest_paths([vault]))
        for p in paths:
            with p.open("a", encoding="utf-8") as fh:
                fh.write("Changed once.\n")
        rw, rc, again = timed(lambda: kb.ingest_paths([vault]))
        gone = paths[:: 10]  # every tenth file deleted, then the folder ingested with prune
        for p in gone:
            p.unlink()
        pw, pc, pruned = timed(lambda: kb.ingest_paths([vault], prune=True))
    assert first.added == n and again.new_versions == n, (first.to_dict(), again.to_dict())
    assert len(pruned.pruned) == len(gone), pruned.to_dict()
    return {"files": n, "first_wall_s": round(fw, 3), "first_cpu_s": round(fc, 3),
            "reingest_wall_s": round(rw, 3), "reingest_cpu_s": round(rc, 3),
            "first_cpu_ms_per_doc": round(fc * 1000 / n, 3), "reingest_cpu_ms_per_doc": round(rc * 1000 / n, 3),
            "cpu_ratio": round(rc / fc, 2), "pruned": len(gone), "prune_wall_s": round(pw, 3),
            "prune_cpu_s": round(pc, 3), "prune_cpu_ms_per_pruned_doc": round(pc * 1000 / len(gone), 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "reingest.json")
    args = ap.parse_args(argv)
    os.environ.pop("GRAPHMEM_EMBED_MODEL", None)
    rows = []
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(one_round(Path(tmp), args.files))
        row = rows[-1]
        print(f"round {r + 1}: first ingest {row['first_cpu_s']:.2f} s CPU ({row['first_cpu_ms_per_doc']:.2f} ms/doc), "
              f"re-ingest of all {args.files} changed {row['reingest_cpu_s']:.2f} s CPU "
              f"({row['reingest_cpu_ms_per_doc']:.2f} ms/doc): ratio {row['cpu_ratio']:.2f}; pruning "
              f"{row['pruned']} deleted files {row['prune_cpu_ms_per_pruned_doc']:.2f} CPU ms each", flush=True)
    print("\n| round | first ingest, CPU ms/doc | re-ingest, CPU ms/doc | ratio | prune, CPU ms per pruned doc |"
          " wall s (first / re-ingest / prune) |")
    print("|---|---|---|---|---|---|")
    for i, row in enumerate(rows, 1):
        print(f"| {i} | {row['first_cpu_ms_per_doc']:.2f} | {row['reingest_cpu_ms_per_doc']:.2f} | "
              f"{row['cpu_ratio']:.2f} | {row['prune_cpu_ms_per_pruned_doc']:.2f} | {row['first_wall_s']:.1f} / "
              f"{row['reingest_wall_s']:.1f} / {row['prune_wall_s']:.1f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows, "command": " ".join(sys.argv), "graphmem": graphmem.__file__},
                                   indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
