"""bench/channel_fit.py's ``knobs`` grid (the static class's feedback and seed knobs tried on the
contextual class): every configuration is distinct, is a valid passage configuration, and the
shipped contextual entry is one of them (the docs' table is the grid's ranking)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

from channel_fit import CONTEXTUAL_WEIGHTINGS, grid  # noqa: E402
from graphmem.retrieval.config import CLASS_WEIGHTS, resolve_config  # noqa: E402

KNOBS = ("feedback_terms", "feedback_words", "feedback_with_query", "named_seeds_only", "link_entities_densely")


def test_the_knobs_grid_crosses_three_second_queries_three_toggles_and_two_weightings() -> None:
    configs = grid("knobs")
    assert len(configs) == 3 * 2 ** 3 * len(CONTEXTUAL_WEIGHTINGS) == 48
    assert {preset for preset, _ in configs} == {"feedback"}
    assert len({json.dumps(cfg, sort_keys=True) for _, cfg in configs}) == 48
    assert {(c["feedback_terms"], c["feedback_words"]) for _, c in configs} == {
        ("words", 0), ("names", 0), ("names", 40)}


def test_every_knobs_configuration_resolves_for_the_contextual_class() -> None:
    for preset, cfg in grid("knobs"):
        resolved = resolve_config(preset, cfg, embedder="contextual")
        assert {k: getattr(resolved, k) for k in cfg} == cfg
        assert resolved.feedback_passages == 1


def test_the_shipped_contextual_entry_is_a_row_of_the_knobs_grid() -> None:
    shipped = resolve_config("feedback", embedder="contextual")
    rows = [resolve_config(p, c, embedder="contextual") for p, c in grid("knobs")]
    assert shipped in rows
    assert {k: getattr(shipped, k) for k in KNOBS} == {
        "feedback_terms": "names", "feedback_words": 40, "feedback_with_query": False,
        "named_seeds_only": True, "link_entities_densely": True}
    assert set(CLASS_WEIGHTS["contextual"]) >= {"alpha", "beta", "gamma"}
