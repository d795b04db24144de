"""A graph that only adds (issue 15): first-stage hits that two channels agree on keep their place,
and every passage hit says what the graph did to it."""

from __future__ import annotations

import numpy as np
import pytest

import graphmem
from graphmem.retrieval.config import PassageConfig
from graphmem.retrieval.hits import Hit
from graphmem.retrieval.passages import Round, gate, graph_moves, protected


def _ranked(*pairs: tuple[str, float]) -> list[tuple[str, float, dict[str, float]]]:
    return [(c, s, {}) for c, s in pairs]


def test_gate_keeps_protected_passages_at_their_first_stage_place() -> None:
    # with the graph: x and y (walked to) jump above a and b; without it: a, b, c
    ranked = _ranked(("x", 0.9), ("y", 0.8), ("a", 0.7), ("c", 0.6), ("b", 0.5))
    out = gate(ranked, ["a", "b", "c"], {"a", "b"})
    assert [c for c, _, _ in out] == ["a", "b", "x", "y", "c"]  # b was 2nd without the graph: still 2nd
    scores = [s for _, s, _ in out]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)  # a re-sort keeps it
    assert gate(ranked, ["a", "b", "c"], set()) == ranked  # nothing protected: the graph's order
    # a protected passage the graph already put higher stays there
    assert [c for c, _, _ in gate(_ranked(("b", 0.9), ("x", 0.8), ("a", 0.1)), ["a", "b"], {"b"})] == ["b", "x", "a"]


def test_graph_moves_names_what_the_graph_did() -> None:
    assert graph_moves(["x", "b", "a", "c"], ["a", "b", "c"]) == {
        "x": "added", "b": "kept", "a": "down", "c": "down"}
    assert graph_moves(["b", "a"], ["a", "b"]) == {"b": "up", "a": "down"}


def test_protected_is_the_agreement_of_both_channels_and_the_first_stage_top() -> None:
    r = Round("q", np.zeros(2, dtype=np.float32))
    r.lex = {"a": 5.0, "b": 4.0, "c": 3.0}
    r.dense = {"c": 0.9, "d": 0.8, "a": 0.1}
    cfg = PassageConfig(protect_agreed=3, protect_top=0)
    assert protected(cfg, r, ["a", "c", "b", "d"]) == {"a", "c"}
    assert protected(PassageConfig(protect_agreed=2), r, ["a", "c"]) == set()  # a is 3rd in dense, c 3rd in lexical
    assert protected(PassageConfig(protect_agreed=0, protect_top=1), r, ["c", "a"]) == {"c"}


def test_hit_json_reports_the_graph_move() -> None:
    h = Hit("chunk", "c1", 1.0, {}, True, "T", "text", graph_move="added")
    assert h.to_dict()["graph_move"] == "added"
    assert Hit("entity", "e", 1.0, {}, True, "E", "E").to_dict()["graph_move"] is None


DOCS = {
    "dispatch": ("Dispatch API", "The Dispatch API accepts parcel orders and depends on PgBouncer."),
    "pool": ("PgBouncer pool", "PgBouncer connection pool exhaustion causes outages of the order service."),
    "route": ("Route Planner", "The Route Planner computes delivery routes for parcel orders."),
}


@pytest.fixture
def gkb(tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        for doc_id, (title, text) in DOCS.items():
            ents = [{"name": "PgBouncer", "type": "software"}] if "PgBouncer" in text else []
            kb.ingest_with_content(doc_id, title, f"{doc_id}.md", text, ents, [])
        yield kb


def test_search_hits_say_whether_the_graph_moved_them(gkb) -> None:
    """'Dispatch API' names PgBouncer; the pool passage shares no query word: only the walk finds it."""
    res = gkb.search("what does the dispatch API accept?", k=5, preset="ppr", config={"protect_top": 1})
    moves = {h.doc_id: h.graph_move for h in res.hits}
    assert res.hits[0].doc_id == "dispatch" and moves["dispatch"] == "kept"
    assert moves.get("pool") == "added"
    assert all(m in ("added", "up", "down", "kept") for m in moves.values())
    none = gkb.search("what does the dispatch API accept?", k=5, preset="bm25")
    assert {h.graph_move for h in none.hits} == {"kept"}  # no walk, nothing moved
    docs = gkb.search("what does the dispatch API accept?", k=5, preset="ppr", kinds=["document"])
    assert {h.doc_id: h.graph_move for h in docs.hits}["pool"] == "added"
    assert docs.to_dict()["hits"][0]["graph_move"] in ("added", "up", "down", "kept")
