"""Profiles and ranking dumps for bench/primitives.py's paths (issue 16), to compare two versions.

    python bench/profile_paths.py --kb KB profile           # top functions: 60 default 2Wiki
                                                            # searches (after 50 warm-up ones);
                                                            # default-config ingest of
                                                            # 200 passages in batches of 20
    PYTHONHASHSEED=0 python bench/profile_paths.py --kb KB rankings OUT.jsonl
                                                            # the 100 dev questions x presets
                                                            # default/dense/bm25/bfs x kinds
                                                            # chunk/entity: ids, scores, texts

Run once per version (``PYTHONPATH=<other checkout>/src`` for the other one) and diff. The profiles
time CPU (``time.process_time``), not wall: on a shared machine a wall profile follows the others' load.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import static_model_dir  # noqa: E402
from primitives import queries_for  # noqa: E402


def _top(pr: cProfile.Profile, n: int = 12) -> str:
    out = io.StringIO()
    pstats.Stats(pr, stream=out).sort_stats("tottime").print_stats(n)
    return "\n".join(line for line in out.getvalue().splitlines() if line.strip())


def profile(data: Path, home: Path) -> None:
    """Top functions of a default 2Wiki search and of default-config ingest."""
    qs = queries_for(data, 110)
    kb = graphmem.open(home)
    for q in qs[60:]:
        # model, vector indexes, and what a store holds for a process that keeps searching (the mention
        # graph is loaded after ~35 default searches on 2Wiki): 50 other questions
        kb.search(q)
    qs = qs[:60]
    pr = cProfile.Profile(time.process_time)
    pr.enable()
    for q in qs:
        kb.search(q, k=10)
    pr.disable()
    kb.close()
    print("### 2Wiki default search, 60 queries\n" + _top(pr))
    corpus = json.loads((data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))[:200]
    with tempfile.TemporaryDirectory() as tmp:
        kb = graphmem.open(Path(tmp) / "kb", config={"embeddings": {"model": f"model2vec:{static_model_dir(data)}"}})
        _ = kb.embeddings.embedder
        parts = []
        for i in range(0, len(corpus), 20):
            part = Path(tmp) / f"part{i}.json"
            part.write_text(json.dumps(corpus[i:i + 20]), encoding="utf-8")
            parts.append(part)
        pr = cProfile.Profile(time.process_time)
        pr.enable()
        for part in parts:
            kb.ingest_paths([part], extractor="offline")
        pr.disable()
        kb.close()
    print("### default-config ingest, 200 2Wiki passages in batches of 20\n" + _top(pr))


def rankings(data: Path, home: Path, out: Path) -> None:
    """One JSON line per (preset, kinds, question): the top 10 as (id, score, text head, citations)."""
    questions = [q["question"] for q in json.loads((data / "2wiki" / "2wikimultihopqa_dev100.json"
                                                     ).read_text(encoding="utf-8"))]
    kb = graphmem.open(home)
    with out.open("w", encoding="utf-8") as fh:
        for preset in (None, "dense", "bm25", "bfs"):
            for q in questions:
                for kinds in (["chunk"], ["entity"]):
                    r = kb.search(q, k=10, kinds=kinds, preset=preset)
                    fh.write(json.dumps([preset, kinds, q, [(h.id, round(h.score, 6), h.text[:40], len(h.citations))
                                                            for h in r.hits]]) + "\n")
    kb.close()


def main(argv: list[str] | None = None) -> int:
    """Profile or dump rankings."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--kb", required=True, type=Path, help="a 2Wiki knowledge base (bench/primitives.py builds one)")
    ap.add_argument("what", choices=("profile", "rankings"))
    ap.add_argument("out", nargs="?", type=Path)
    args = ap.parse_args(argv)
    if args.what == "profile":
        profile(args.data, args.kb)
    else:
        if args.out is None:
            ap.error("rankings needs OUT.jsonl")
        rankings(args.data, args.kb, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
