"""CPU time per search, side by side in one process, on bench/multihop.py's cached 2Wiki knowledge base
(static model): phase A's default (PPR, its weights, no title field) against today's presets. For a loaded
machine, where wall-clock latencies are noise: the CPU-time ratio is what can be compared.

    OMP_NUM_THREADS=1 python bench/search_cpu_ratio.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
import multihop as mh  # noqa: E402
from common import model_spec, static_model_dir  # noqa: E402

PHASE_A = {"alpha": 0.4, "beta": 0.3, "gamma": 0.3, "seed_k_dense": 5, "fusion_weights": (1.0, 1.0),
           "title_weight": 0.0}
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("ppr, phase A weights, no title field", {"preset": "ppr", "config": PHASE_A}),
    ("ppr (static weights)", {"preset": "ppr"}),
    ("default (auto: feedback)", {}),
]


def main() -> int:
    """Alternate the variants on every question (twice) and print CPU p50 and its ratio."""
    data = Path("../shared/data")
    spec = model_spec("static", static_model_dir(data))
    if spec is None:
        raise SystemExit("the static model is not installed here")
    ds = mh.load_dataset("2wiki", data)
    homes = sorted(p for p in mh.CACHE.glob("2wiki-static-offline-*") if (p / "ingested.json").exists())
    if not homes:
        raise SystemExit("no cached 2Wiki KB: run bench/multihop.py --datasets 2wiki --models static first")
    cpu: dict[str, list[float]] = {n: [] for n, _ in VARIANTS}
    with graphmem.open(homes[-1] / "kb", config=mh._config(spec)) as kb:
        kb.search("warm up", k=1)
        for _ in range(2):
            for q in ds.questions:
                for name, kwargs in VARIANTS:
                    t = time.process_time()
                    kb.search(q["question"], k=10, **kwargs)
                    cpu[name].append((time.process_time() - t) * 1000)
    base = statistics.median(cpu[VARIANTS[0][0]])
    for name, _ in VARIANTS:
        p50 = statistics.median(cpu[name])
        print(f"{name:40} cpu p50 {p50:6.1f} ms  x{p50 / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
