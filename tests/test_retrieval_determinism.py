"""One query gives the same passages and scores in every process, whatever the hash seed.

The walk's seed passages came out of a set, so the float sums and the push order of the approximate
PageRank followed the process's string hashing: a graph part differed by up to 0.02 between two runs
of the same search. The pinned-results script (tests/test_retrieval_pinned.py) computes every preset
on a fixed corpus; two child processes with different hash seeds must print the same passages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PINNED_SCRIPT = Path(__file__).with_name("test_retrieval_pinned.py")


def _passages(model_dir: Path, hash_seed: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-W", "ignore", str(PINNED_SCRIPT), "--stdout", str(model_dir)],
                          env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    return {k: v for k, v in out.items() if k.startswith("passages/")}


def test_passage_search_does_not_depend_on_the_hash_seed(model_dir: Path) -> None:
    first, second = _passages(model_dir, "1"), _passages(model_dir, "2")
    assert set(first) == {"passages/none", "passages/static"}
    for section, results in first.items():
        for query, got in results.items():
            assert second[section][query] == got, f"{section}: {query}"
