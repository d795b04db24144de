"""bench/channel_fit.py ``--sets``: two graphs of one dataset count as one dataset in the pool, and a
malformed set is refused before any knowledge base is opened."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

from channel_fit import _pooled, main  # noqa: E402


def test_each_dataset_weighs_once_however_many_graphs_it_has() -> None:
    sets = {"musique:offline": {"R@5": 60.0}, "musique:openie": {"R@5": 80.0}, "2wiki:offline": {"R@5": 90.0}}
    # musique's two graphs average to 70, then the two datasets average: (70 + 90) / 2, not (60 + 80 + 90) / 3
    assert _pooled(sets, "R@5") == pytest.approx(80.0)
    assert _pooled({"a:offline": {"R@2": 10.0}, "b:offline": {"R@2": 30.0}}, "R@2") == pytest.approx(20.0)


@pytest.mark.parametrize("bad", ["musique", "musique:triples", "2wiki:"])
def test_a_malformed_set_is_refused_with_the_expected_form(bad: str, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="dataset:graph"):
        main(["--data", str(tmp_path), "--models", "static", "--sets", bad])
