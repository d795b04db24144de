"""Paired before/after recall of one graphmem search over two ingested knowledge bases of one dataset.

Two cached KBs of ``bench/multihop.py`` (``bench/results/cache/<set>-<model>-<graph>-<key>``), e.g.
one built by the code before a change (a run with ``PYTHONPATH`` pointing at an older checkout's
``src``) and one after it, are queried with the same search (default: the default configuration);
prints the mean difference after - before of R@2/5/10 with a paired 95% bootstrap interval.

    python bench/multihop_paired.py --dataset 2wiki --before bench/results/cache/2wiki-static-offline-<old> \\
        --after bench/results/cache/2wiki-static-offline-<new>

Or two rows of bench/multihop.py's JSON (their per-question recalls; the same questions), from one
run or two: ``--rows FILE:SET:MODEL:GRAPH:METHOD FILE:SET:MODEL:GRAPH:METHOD`` (before, after), e.g.

    python bench/multihop_paired.py --rows "bench/results/multihop.json:2wiki:static:offline:graphmem PPR" \\
        "bench/results/multihop.json:2wiki:static:offline:graphmem default"
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import model_spec, paired_bootstrap, static_model_dir  # noqa: E402
from multihop import KS, _config, graphmem_rankings, load_dataset, per_question  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Query both KBs, print and return the paired differences."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--dataset", choices=["musique", "2wiki"])
    ap.add_argument("--rows", nargs=2, default=None, metavar="FILE:SET:MODEL:GRAPH:METHOD",
                    help="compare two rows of bench/multihop.py's JSON instead of two knowledge bases")
    ap.add_argument("--model", default="static", choices=["static", "minilm"])
    ap.add_argument("--before", type=Path, help="cache folder of the 'before' KB")
    ap.add_argument("--after", type=Path, help="cache folder of the 'after' KB")
    ap.add_argument("--preset", default=None, help="search preset (default: the default configuration)")
    ap.add_argument("--out", default=None, type=Path)
    args = ap.parse_args(argv)
    if args.rows:
        return compare_rows(*args.rows)
    if not (args.dataset and args.before and args.after):
        raise SystemExit("give --dataset, --before and --after (two KBs), or --rows (two JSON rows)")
    spec = model_spec(args.model, static_model_dir(args.data))
    if spec is None:
        raise SystemExit(f"model {args.model} is not installed here")
    ds = load_dataset(args.dataset, args.data)
    kwargs = {"preset": args.preset} if args.preset else {}
    rec = {}
    for label, home in (("before", args.before), ("after", args.after)):
        if not (home / "ingested.json").exists():
            raise SystemExit(f"{home}: not a finished bench/multihop.py cache folder")
        kb = graphmem.open(home / "kb", config=_config(spec))
        try:
            ranked, _ = graphmem_rankings(kb, ds.questions, kwargs)
        finally:
            kb.close()
        rec[label] = per_question(ranked, ds.gold)
    out: dict[str, dict[str, Any]] = {}
    for k in KS:
        ci = paired_bootstrap(rec["after"][k], rec["before"][k])
        out[f"R@{k}"] = {"before": round(100 * sum(rec["before"][k]) / len(ds.gold), 1),
                         "after": round(100 * sum(rec["after"][k]) / len(ds.gold), 1),
                         "diff": [round(ci["diff"], 1), round(ci["diff_lo"], 1), round(ci["diff_hi"], 1)]}
        d = out[f"R@{k}"]
        print(f"{args.dataset} R@{k}: before {d['before']}  after {d['after']}  after - before {d['diff'][0]:+.1f} "
              f"[{d['diff'][1]:+.1f}, {d['diff'][2]:+.1f}]")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


def _row(ref: str) -> dict[str, Any]:
    path, dataset, model, graph, method = ref.split(":", 4)
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["rows"]
    want = (dataset, model, graph, method)
    for r in rows:
        if "per_question" in r and (r["dataset"], r["model"], r["graph"], r["method"]) == want:
            return r
    raise SystemExit(f"{ref}: no such row (set, model, graph, method) in {path}")


def compare_rows(before_ref: str, after_ref: str) -> int:
    """Paired after - before of two JSON rows over the same questions."""
    before, after = _row(before_ref), _row(after_ref)
    for k in KS:
        a, b = after["per_question"][f"R@{k}"], before["per_question"][f"R@{k}"]
        if len(a) != len(b):
            raise SystemExit("the two rows are not over the same questions")
        ci = paired_bootstrap(a, b)
        print(f"R@{k}: before {before[f'R@{k}']}  after {after[f'R@{k}']}  after - before {ci['diff']:+.1f} "
              f"[{ci['diff_lo']:+.1f}, {ci['diff_hi']:+.1f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
