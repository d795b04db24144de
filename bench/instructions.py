"""Instructions per operation, graphmem beside its primitive, counted by valgrind's callgrind (issue 16).

CPU time on these shared 2-core machines moves more between runs than most changes do: the same code's memory
search p50 went from 3.1 to 5.8 ms within one hour, the primitive's with it. An instruction count does not move with
the machine's load or clock, so a before/after of a few percent can be seen, and a ratio read, in one run each.

For each kind, three child processes run the same script under callgrind (PYTHONHASHSEED=0, one BLAS and tokenizer
thread, on a fresh copy of the knowledge base, since searches write use counts):

- ``warm``: open the knowledge base and the primitive, run every query once through each (the caches a long-lived
  process keeps are then loaded: the steady state that a p50 over many searches sees);
- ``ours``: the same, then every query once more through graphmem;
- ``bare``: the same, then every query once more through the primitive.

Per operation: ``(Ir(ours) - Ir(warm)) / n`` and ``(Ir(bare) - Ir(warm)) / n``. ``warm`` runs twice; the
difference between the two is printed as the noise floor (timestamps and file names differ between runs).
Kinds: ``memory`` (``kb.memory.search(q, user_id=u, limit=10)`` over 10,000 memories, against scoped FTS5 top 10 +
encode + one product over the user's vectors) and ``skills`` (``kb.skills.retrieve(q, 8)`` over the 1,635 skills,
against FTS5 bm25 top pool + encode + one product), the primitives of bench/primitives_kinds.py. The knowledge
bases are built natively first (bench/primitives.py's builders; reused when present).

    python bench/instructions.py --data ../shared/data [--kinds memory,skills] [--queries 100]
    PYTHONPATH=<other tree>/src python bench/instructions.py ...     # another version, same command

Needs valgrind (``apt-get install valgrind``). Each child runs ~50x slower than natively: about 2-3 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

KINDS = ("memory", "skills")
MODES = ("warm", "warm2", "ours", "bare")
_ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS")
_COLLECTED = re.compile(r"==\d+== Collected : (\d+)")


def collected(stderr: str) -> int:
    """The instruction count callgrind printed at the end of a run."""
    found = _COLLECTED.findall(stderr)
    if not found:
        raise RuntimeError("callgrind printed no 'Collected' line; its output ends:\n" + stderr[-2000:])
    return int(found[-1])


def per_operation(counts: dict[str, int], n: int) -> dict[str, float]:
    """Instructions per operation of each side, the ratio and the noise floor, from the four runs' totals."""
    ours = (counts["ours"] - counts["warm"]) / n
    bare = (counts["bare"] - counts["warm"]) / n
    return {"ours": ours, "bare": bare, "ratio": ours / bare if bare > 0 else float("nan"),
            "noise": abs(counts["warm2"] - counts["warm"]) / n}


def _workload(kind: str, data: Path, home: Path, n: int) -> tuple[list[Callable[[], Any]], list[Callable[[], Any]]]:
    """The queries of ``kind``, as calls through graphmem and through the primitive, on the knowledge base
    ``home``."""
    import graphmem
    from primitives_kinds import MemoryPrimitive, SkillPrimitive, _Model, memory_queries, skill_queries

    model = _Model(data)
    kb = graphmem.open(home)
    if kind == "memory":
        prim_m = MemoryPrimitive(home, model)
        mq = memory_queries(n)
        return ([lambda q=q, u=u: kb.memory.search(q, user_id=u, limit=10) for q, u in mq],
                [lambda q=q, u=u: prim_m(q, u) for q, u in mq])
    from graphmem.retrieval.config import SKILL_PRESETS

    cfg = SKILL_PRESETS["default"]
    prim_s = SkillPrimitive(home, model, tuple(cfg.field_weights), cfg.pool_k)
    sq = skill_queries(data, n)
    return [lambda q=q: kb.skills.retrieve(q, 8) for q in sq], [lambda q=q: prim_s(q) for q in sq]


def child(kind: str, mode: str, data: Path, home: Path, n: int) -> int:
    """One measured process: the warm pass, then (``ours`` / ``bare``) the measured one. Returns the calls made."""
    ours, bare = _workload(kind, data, home, n)
    for a, b in zip(ours, bare):
        a()
        b()
    measured = {"ours": ours, "bare": bare}.get(mode, [])
    for call in measured:
        call()
    return len(measured)


def _build(kind: str, data: Path, home: Path, memories: int) -> None:
    from primitives_kinds import build_memory_kb, build_skills_kb

    if kind == "memory":
        build_memory_kb(data, home, memories)
    else:
        build_skills_kb(data, home)


def _run_child(kind: str, mode: str, data: Path, home: Path, n: int, valgrind: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "kb"
        shutil.copytree(home, copy)
        # one thread each: BLAS and tokenizer pools spin while they wait, so their instruction counts follow the
        # clock (a primitive pass once counted fewer instructions than no pass at all)
        env = {**os.environ, "PYTHONHASHSEED": "0", **{v: "1" for v in _ONE_THREAD}, "TOKENIZERS_PARALLELISM": "false"}
        cmd = [valgrind, "--tool=callgrind", "--cache-sim=no", f"--callgrind-out-file={tmp}/callgrind.out",
               sys.executable, str(Path(__file__).resolve()), "--child", kind, mode, "--data", str(data),
               "--home", str(copy), "--queries", str(n)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{kind}/{mode} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return collected(done.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--kinds", default="memory,skills")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--memory-kb", default=Path(tempfile.gettempdir()) / "graphmem-memory-bench", type=Path)
    ap.add_argument("--skills-kb", default=Path(tempfile.gettempdir()) / "graphmem-skills-bench", type=Path)
    ap.add_argument("--jobs", type=int, default=2, help="children run at once (each takes one core)")
    ap.add_argument("--out", default="bench/results/instructions.json", type=Path)
    ap.add_argument("--child", nargs=2, metavar=("KIND", "MODE"), help=argparse.SUPPRESS)
    ap.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child[0], a.child[1], a.data, a.home, a.queries)
        return 0
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("valgrind is not installed: apt-get install valgrind (this bench counts instructions with callgrind)",
              file=sys.stderr)
        return 2
    kinds = [k.strip() for k in a.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        print(f"--kinds: unknown {', '.join(unknown)}; choose from {', '.join(KINDS)}", file=sys.stderr)
        return 2
    homes = {"memory": a.memory_kb, "skills": a.skills_kb}
    rows = []
    for kind in kinds:
        _build(kind, a.data, homes[kind], a.memories)
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            futures = {m: pool.submit(_run_child, kind, m, a.data, homes[kind], a.queries, valgrind) for m in MODES}
            counts = {m: f.result() for m, f in futures.items()}
        got = per_operation(counts, a.queries)
        rows.append({"kind": kind, "queries": a.queries, **got, "totals": counts})
        print(f"  {kind:<7} graphmem {got['ours'] / 1e6:8.3f} M instr/op   primitive {got['bare'] / 1e6:7.3f} M"
              f"   ratio {got['ratio']:5.2f}   (noise floor {got['noise'] / 1e6:.3f} M/op)", flush=True)
    print("\n| kind | graphmem M instructions/op | primitive | ratio | noise floor |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['kind']} | {r['ours'] / 1e6:.3f} | {r['bare'] / 1e6:.3f} | {r['ratio']:.2f} | "
              f"{r['noise'] / 1e6:.3f} |")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"command": " ".join(sys.argv), "rows": rows}, indent=2), encoding="utf-8")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
