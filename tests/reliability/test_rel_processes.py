"""Several processes writing one knowledge base at once, with a reader: nothing acknowledged is
lost, the store stays sound, wiki files and page rows agree, reads never fail.

4 writer processes x 200 mixed writes (documents with overlapping entities, memories, pages of
their own, pages every writer overwrites) + 1 reader. bench/reliability.py runs 8 x 1,000.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import graphmem

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checks import check_mixed, problems  # noqa: E402
from workers import CONFIG  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

WORKERS = Path(__file__).resolve().parent / "workers.py"


def run_mixed(home: Path, procs: int, writes: int, timeout: float = 600) -> dict:
    """Start ``procs`` writers and one reader on ``home``; wait; check the final state."""
    graphmem.open(home, config=CONFIG).close()
    ledgers = [home.parent / f"ledger-{i}.json" for i in range(procs)]
    stop = home.parent / "stop"
    reader_ledger = home.parent / "reader.json"
    reader = subprocess.Popen([sys.executable, str(WORKERS), "reader", str(home), str(stop), str(reader_ledger)])
    writers = [subprocess.Popen([sys.executable, str(WORKERS), "mixed", str(home), f"w{i}", str(writes), str(i),
                                 str(ledgers[i])]) for i in range(procs)]
    try:
        codes = [w.wait(timeout=timeout) for w in writers]
    finally:
        stop.touch()
        reader_code = reader.wait(timeout=60)
    assert codes == [0] * procs and reader_code == 0, f"worker exit codes {codes}, reader {reader_code}"
    return check_mixed(home, ledgers, reader_ledger)


def test_four_processes_lose_no_acknowledged_write(tmp_path: Path) -> None:
    result = run_mixed(tmp_path / "kb", procs=4, writes=200)
    assert result["acknowledged"] > 700  # the writers did work (a handful may give up on StoreBusy)
    assert result["reads"] > 20
    assert problems(result) == []
