"""Bulk ingest throughput on the 2WikiMultihopQA corpus (6,119 passages, a JSON list of
{title, text}), through the same path as ``graphmem ingest FILE``.

Runs, side by side in one process, on fresh knowledge bases:
  1. offline extractor, no embeddings
  2. offline extractor, static Model2Vec embeddings (../shared/models/minilm-static-256)
  3. no extractor, no embeddings (reading, chunking, FTS and the store alone)
and reports passages/s, the per-passage cost of the first and last 10% of passages (flat
means the store does not slow down as it fills), and what was extracted.

    python bench/ingest_throughput.py --data ../shared/data [--limit N] [--wiki]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import graphmem


def run(corpus: Path, extractor: str, model: str, limit: int | None, wiki: bool) -> dict[str, Any]:
    """Ingest the corpus into a fresh knowledge base; per-batch timings give first/last 10%."""
    with tempfile.TemporaryDirectory() as tmp:
        src = corpus
        if limit:
            src = Path(tmp) / "subset.json"
            src.write_text(json.dumps(json.loads(corpus.read_text(encoding="utf-8"))[:limit]), encoding="utf-8")
        cfg: dict[str, Any] = {"embeddings": {"model": model}}
        from graphmem.config import DEFAULTS

        if "wiki" in DEFAULTS:
            cfg["wiki"] = {"auto_pages": wiki}
        kb = graphmem.open(Path(tmp) / "kb", config=cfg)
        if model != "none":
            _ = kb.embeddings.embedder  # load the model before timing (model load is not ingest)
        marks: list[tuple[float, int]] = []
        t0 = time.perf_counter()
        s = kb.ingest_paths([src], extractor=extractor,
                            on_progress=lambda done, total, _id: marks.append((time.perf_counter(), done)))
        total_s = time.perf_counter() - t0
        n = s.added
        # per-passage cost per batch, then the mean over the batches in the first/last 10%
        per, prev_t, prev_n = [], t0, 0
        for t, done in marks:
            if done > prev_n:
                per.append((done, (t - prev_t) / (done - prev_n) * 1000))
            prev_t, prev_n = t, done
        first = [ms for done, ms in per if done <= max(n // 10, per[0][0])]
        last = [ms for done, ms in per if done > n - max(n // 10, n - per[-2][0] if len(per) > 1 else 0)]
        st = kb.stats()
        kb.close()
    return {
        "extractor": extractor, "embeddings": model.split("/")[-1], "wiki": wiki, "passages": n,
        "seconds": round(total_s, 2), "passages_per_s": round(n / total_s, 1),
        "first10_ms": round(sum(first) / len(first), 3), "last10_ms": round(sum(last) / len(last), 3),
        "last_over_first": round((sum(last) / len(last)) / (sum(first) / len(first)), 2),
        "entities": st["entities"], "relations": st["edges"], "mentions": st["mentions"],
        "chunks": st["chunks"], "skipped": len(s.skipped), "warnings": len(s.warnings),
        "size_mb": round(st["size_bytes"] / 1e6, 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Print the table and write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--limit", type=int, default=None, help="only the first N passages")
    ap.add_argument("--wiki", action="store_true", help="also generate wiki pages during ingest")
    ap.add_argument("--out", default="bench/results/ingest_throughput.json", type=Path)
    args = ap.parse_args(argv)
    corpus = args.data / "2wiki" / "2wikimultihopqa_corpus.json"
    static = args.data.parent / "models" / "minilm-static-256"
    runs = [("offline", "none"), ("offline", f"model2vec:{static}"), ("none", "none")]
    rows = [run(corpus, ex, model, args.limit, args.wiki) for ex, model in runs]
    cols = ["extractor", "embeddings", "passages", "seconds", "passages_per_s", "first10_ms", "last10_ms",
            "last_over_first", "entities", "relations", "mentions", "size_mb"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
