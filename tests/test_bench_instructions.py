"""bench/instructions.py: the callgrind total it reads, the per-operation arithmetic, and that each child runs the
pass it claims to (graphmem's measured pass searches through graphmem, the primitive's does not). The counting
itself needs valgrind and minutes, so it is not run here."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from instructions import child, collected, per_operation  # noqa: E402


def test_collected_reads_the_last_total_and_says_when_there_is_none() -> None:
    err = "==12== Callgrind, a call-graph generating cache profiler\n==12== Collected : 4543870525\n==12==\n"
    assert collected(err) == 4543870525
    assert collected(err + "==13== Collected : 7\n") == 7
    with pytest.raises(RuntimeError, match="no 'Collected' line"):
        collected("valgrind: the 'impossible' happened")


def test_per_operation_subtracts_the_warm_run_and_reports_its_noise() -> None:
    got = per_operation({"warm": 1000, "warm2": 1010, "ours": 5000, "bare": 2000}, 10)
    assert got == {"ours": 400.0, "bare": 100.0, "ratio": 4.0, "noise": 1.0}


def _accessed(home: Path) -> int:
    with sqlite3.connect(home / "graph.db") as conn:
        return int(conn.execute("SELECT count(*) FROM events WHERE type = 'memory.accessed'").fetchone()[0])


def test_each_child_runs_the_warm_pass_and_only_its_own_measured_pass(tmp_path: Path, model_dir: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from primitives_kinds import build_memory_kb

    monkeypatch.delenv("GRAPHMEM_EMBED_MODEL", raising=False)  # the bench's knowledge bases embed, as a user's do

    data = tmp_path / "data"
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "minilm-static-256").symlink_to(model_dir)
    data.mkdir()
    built = tmp_path / "memory-kb"
    build_memory_kb(data, built, 1000)  # 50 sessions: every one of the 50 users has memories
    n = 6
    for mode, measured, searches in (("warm", 0, n), ("ours", n, 2 * n), ("bare", n, n)):
        home = tmp_path / mode
        shutil.copytree(built, home)
        before = _accessed(home)
        assert child("memory", mode, data, home, n) == measured
        assert _accessed(home) - before == searches  # a search through graphmem writes its use-count event
