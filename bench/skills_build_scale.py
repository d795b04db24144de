"""A skills build at two sizes, to see whether its cost per skill holds (issue 16's "do not get worse").

N generated SKILL.md files whose names share a first word ("skill-17", as collections share "azure-...",
"git-..."), each body naming two others, are built into a fresh knowledge base (no embedding model: the
figure is graphmem's own); it prints CPU seconds and ms per skill for each size and the ratio, and writes JSON.

    python bench/skills_build_scale.py [--sizes 500 3000] [--out bench/results/skills_build_scale.json]
    PYTHONPATH=<other tree>/src python bench/skills_build_scale.py ...     # another version, same command

Name matching in bodies compared every body word with every multi-word name sharing it: 3,000 such skills
took 8.3 s, 2.8 ms per skill against 0.9 at 500 (docs/benchmarks.md, "Scale").
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import graphmem


def make_skills(root: Path, n: int) -> None:
    for i in range(n):
        folder = root / f"col{i % 10}" / f"skill-{i}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i}\ndescription: Does task {i} of the pipeline.\n---\n"
            f"Run this after skill {(i + 1) % n} and before skill-{(i + 2) % n}; see the notes.\n", encoding="utf-8")


def build_cpu(n: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "skills"
        make_skills(root, n)
        with graphmem.open(Path(tmp) / "kb", config={"embeddings": {"model": "none"}}) as kb:
            start = time.process_time()
            res = kb.skills.build([root])
            spent = time.process_time() - start
        assert len(res.added) == n
    return spent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 3000])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "skills_build_scale.json")
    args = ap.parse_args(argv)
    rows = []
    for n in args.sizes:
        cpu = build_cpu(n)
        rows.append({"skills": n, "cpu_s": round(cpu, 3), "cpu_ms_per_skill": round(cpu * 1000 / n, 3)})
        print(f"{n} skills: build {cpu:.2f} s CPU, {cpu * 1000 / n:.2f} ms per skill", flush=True)
    ratio = rows[-1]["cpu_ms_per_skill"] / rows[0]["cpu_ms_per_skill"]
    print("\n| skills | build CPU s | ms per skill |\n|---|---|---|")
    for r in rows:
        print(f"| {r['skills']} | {r['cpu_s']:.2f} | {r['cpu_ms_per_skill']:.2f} |")
    print(f"per-skill cost, largest / smallest: {ratio:.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows, "ratio": round(ratio, 2), "command": " ".join(sys.argv)},
                                   indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
