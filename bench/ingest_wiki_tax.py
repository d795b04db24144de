"""What the wiki costs a default-config ingest (issue 16), side by side in one run.

The same documents of the 2Wiki corpus (batches of 20, ``kb.ingest_paths`` with the offline
extractor, as in ``bench/primitives.py``'s "ingest default" row) go into three knowledge bases,
batch by batch in turn:

- ``default``     the default config (static embeddings, generated wiki pages);
- ``no-wiki``     static embeddings, ``wiki.auto_pages = false`` (what the embedder costs);
- ``store-only``  no embeddings, no wiki pages (the row's primitive).

It prints wall and CPU ms per document (p50 over batches, and totals) and the ratios to
store-only; ``--profile N`` also prints the cProfile top N functions (cumulative, then own time) of the default
config's ingests, which is what docs/benchmarks.md's "Default ingest and the wiki" quotes.

    python bench/ingest_wiki_tax.py --data ../shared/data [--docs 200] [--profile 25]
        [--out bench/results/ingest_wiki_tax.json]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
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
    args = ap.parse_args(argv)
    corpus = json.loads((args.data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))
    corpus = corpus[: args.docs]
    model = f"model2vec:{static_model_dir(args.data)}"
    configs: dict[str, dict[str, Any]] = {
        "default": {"embeddings": {"model": model}},
        "no-wiki": {"embeddings": {"model": model}, "wiki": {"auto_pages": False}},
        "store-only": {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}},
    }
    per: dict[str, list[tuple[float, float]]] = {k: [] for k in configs}
    prof = cProfile.Profile() if args.profile else None
    pages = 0
    with tempfile.TemporaryDirectory() as tmp:
        kbs = {k: graphmem.open(Path(tmp) / k, config=c) for k, c in configs.items()}
        _ = kbs["default"].embeddings.embedder  # model load is not ingest
        _ = kbs["no-wiki"].embeddings.embedder
        for i in range(0, len(corpus), args.batch):
            part = Path(tmp) / f"part{i}.json"
            part.write_text(json.dumps(corpus[i:i + args.batch]), encoding="utf-8")
            n = len(corpus[i:i + args.batch])
            for name, kb in kbs.items():
                w, c = time.perf_counter(), time.process_time()
                if prof is not None and name == "default":
                    prof.enable()
                kb.ingest_paths([part], extractor="offline")
                if prof is not None and name == "default":
                    prof.disable()
                per[name].append(((time.perf_counter() - w) * 1000 / n, (time.process_time() - c) * 1000 / n))
        pages = len(kbs["default"].store.list_pages(None))
        for kb in kbs.values():
            kb.close()
    rows = []
    base_cpu = sum(c for _, c in per["store-only"])
    base_wall = sum(w for w, _ in per["store-only"])
    print(f"\n{len(corpus)} documents, batches of {args.batch}; default config made {pages} wiki pages\n")
    print("| config | wall ms/doc p50 | cpu ms/doc p50 | cpu ms/doc mean | cpu ratio to store-only (mean) |")
    print("|---|---|---|---|---|")
    for name, xs in per.items():
        cpu_mean = sum(c for _, c in xs) / len(xs)
        r = {"config": name, "wall_p50_ms": round(percentile([w for w, _ in xs], 50), 2),
             "cpu_p50_ms": round(percentile([c for _, c in xs], 50), 2), "cpu_mean_ms": round(cpu_mean, 2),
             "cpu_ratio": round(sum(c for _, c in xs) / max(base_cpu, 1e-9), 2),
             "wall_ratio": round(sum(w for w, _ in xs) / max(base_wall, 1e-9), 2)}
        rows.append(r)
        print(f"| {name} | {r['wall_p50_ms']} | {r['cpu_p50_ms']} | {r['cpu_mean_ms']} | {r['cpu_ratio']} |")
    profile_text = ""
    if prof is not None:
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats("cumulative").print_stats(args.profile)
        stats.sort_stats("tottime").print_stats(args.profile)
        profile_text = buf.getvalue()
        print(profile_text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows, "pages": pages, "command": " ".join(sys.argv),
                                    "profile": profile_text}, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
