"""Does an incremental ingest get slower as the knowledge base grows? Default config beside no-wiki, one run.

An agent or a cron job adds documents a few at a time: every call is its own batch, and its wiki pages are
regenerated at its end. This bench ingests the first N 2Wiki passages in calls of B documents (the offline
extractor, static embeddings) into two knowledge bases, alternating per call: **default** (wiki pages on) and
**no-wiki** (the same without pages). It prints the CPU ms per document of each config over six equal parts of
the run, the wiki's own share (default − no-wiki) and the bytes a call hands to ``write()`` per document (WAL
frames, checkpoints and wiki files: what the disk sees, from /proc/self/io), and writes JSON.
A cost that does not grow with the knowledge base keeps the rows flat.

    python bench/ingest_growth.py --data ../shared/data [--docs 3000] [--batch 20] [--out ...]
    PYTHONPATH=<other tree>/src python bench/ingest_growth.py ...      # another version, same command

Found with it: every generated summary page (``doc-<title>``) was listed in one index shard file, which each
call that changed more than 8 summary pages rendered again in full (a 3,000-line file at 3,000 documents).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import static_model_dir  # noqa: E402

PARTS = 6


def written_bytes() -> int:
    """Bytes this process has passed to write() so far (Linux; 0 elsewhere)."""
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--out", default="bench/results/ingest_growth.json", type=Path)
    args = ap.parse_args(argv)
    corpus = json.loads((args.data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))
    corpus = corpus[: args.docs]
    model = f"model2vec:{static_model_dir(args.data)}"
    configs = {"default": {"embeddings": {"model": model}},
               "no-wiki": {"embeddings": {"model": model}, "wiki": {"auto_pages": False}}}
    calls: dict[str, list[tuple[int, float, int]]] = {k: [] for k in configs}  # (docs, cpu s, bytes written)
    with tempfile.TemporaryDirectory() as tmp:
        kbs = {k: graphmem.open(Path(tmp) / k, config=c) for k, c in configs.items()}
        for kb in kbs.values():
            _ = kb.embeddings.embedder  # model load is not ingest
        for i in range(0, len(corpus), args.batch):
            part = Path(tmp) / "call.json"
            part.write_text(json.dumps(corpus[i:i + args.batch]), encoding="utf-8")
            for name, kb in kbs.items():
                c, w = time.process_time(), written_bytes()
                kb.ingest_paths([part], extractor="offline")
                calls[name].append((len(corpus[i:i + args.batch]), time.process_time() - c, written_bytes() - w))
        pages = len(kbs["default"].store.list_pages(None))
        for kb in kbs.values():
            kb.close()
    n_calls = len(calls["default"])
    size = max(1, -(-n_calls // PARTS))
    rows: list[dict[str, Any]] = []
    print(f"\n{len(corpus)} documents in calls of {args.batch}; the default config made {pages} wiki pages\n")
    print("| documents already in | default cpu ms/doc | no-wiki cpu ms/doc | wiki ms/doc | ratio | "
          "KB written/doc default | no-wiki |")
    print("|---|---|---|---|---|---|---|")
    for start in range(0, n_calls, size):
        seg = {k: v[start:start + size] for k, v in calls.items()}
        docs = sum(d for d, _, _ in seg["default"])
        per = {k: sum(c for _, c, _ in v) * 1000 / docs for k, v in seg.items()}
        kib = {k: sum(f for _, _, f in v) / 1024 / docs for k, v in seg.items()}
        r = {"from_doc": start * args.batch, "docs": docs, "default_ms": round(per["default"], 2),
             "no_wiki_ms": round(per["no-wiki"], 2), "wiki_ms": round(per["default"] - per["no-wiki"], 2),
             "ratio": round(per["default"] / per["no-wiki"], 2), "kib_written_default": round(kib["default"], 1),
             "kib_written_no_wiki": round(kib["no-wiki"], 1)}
        rows.append(r)
        print(f"| {r['from_doc']:,} | {r['default_ms']} | {r['no_wiki_ms']} | {r['wiki_ms']} | {r['ratio']} "
              f"| {r['kib_written_default']} | {r['kib_written_no_wiki']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"docs": len(corpus), "batch": args.batch, "pages": pages, "rows": rows,
                                    "command": " ".join(sys.argv)}, indent=2), encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
