"""One search reads each passage's row, each entity's name and passage count once, and its entity
seeds read name-search candidates with their spellings: the same hits as reading everything again
in the feedback round and whole nodes for the seeds (branch lat2)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import graphmem
import graphmem.retrieval.passages as passages_mod
from graphmem.retrieval.config import PassageConfig
from graphmem.retrieval.passages import PassageGraph
from graphmem.retrieval.seeds import find_seed_entities

DOCS = [
    ("ada", "Ada Lovelace", "Ada Lovelace wrote the first program for the Analytical Engine of Charles Babbage.",
     ["Ada Lovelace", "Analytical Engine", "Charles Babbage"]),
    ("babbage", "Charles Babbage", "Charles Babbage designed the Analytical Engine in London.",
     ["Charles Babbage", "Analytical Engine", "London"]),
    ("london", "London", "London is the capital of England; Charles Babbage lived there.",
     ["London", "England", "Charles Babbage"]),
    ("engine", "Analytical Engine", "The Analytical Engine was a proposed mechanical computer.",
     ["Analytical Engine"]),
    ("turing", "Alan Turing", "Alan Turing studied computable numbers at Cambridge in England.",
     ["Alan Turing", "Cambridge", "England"]),
]
QUERIES = ["Where did the designer of the Analytical Engine live?",
           "Who wrote a program for the engine that Babbage designed?",
           "Which country is Cambridge in?"]


def _entities(text: str, names: list[str]) -> list[dict[str, Any]]:
    return [{"name": n, "type": "thing", "supporting_text": text} for n in names]


@pytest.fixture
def kb(tmp_path: Path) -> Any:
    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}})
    for doc_id, title, text, names in DOCS:
        rels = [{"source": names[0], "target": n, "type": "related_to", "confidence": 0.9, "supporting_text": text}
                for n in names[1:]]
        kb.ingest_with_content(doc_id, title, f"{doc_id}.md", text, _entities(text, names), rels)
    with kb.ctx.store.transaction():  # an alias that is the only spelling the query uses
        kb.ctx.store.add_names(_id(kb, "Charles Babbage"), "entity", [("Lord Babbage", "lord babbage")])
    yield kb
    kb.close()


def _id(kb: Any, name: str) -> str:
    return kb.ctx.store.find_nodes("entity", [name.lower()])[name.lower()]


def _spy(monkeypatch: pytest.MonkeyPatch, obj: Any, name: str) -> Counter[str]:
    asked: Counter[str] = Counter()
    real = getattr(obj, name)

    def counting(ids, *args, **kwargs):  # type: ignore[no-untyped-def]
        ids = list(ids)
        asked.update(ids)
        return real(ids, *args, **kwargs)

    monkeypatch.setattr(obj, name, counting)
    return asked


def _shown(res: Any) -> list[tuple[Any, ...]]:
    return [(h.id, h.score, h.parts, h.path, h.graph_move, h.text) for h in res.hits]


def test_a_feedback_search_reads_each_chunk_row_and_name_once(kb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store = kb.ctx.store
    expected = [_shown(kb.search(q, k=5, preset="feedback")) for q in QUERIES]
    infos = _spy(monkeypatch, store, "chunk_info")
    names = _spy(monkeypatch, store, "node_names")
    for q, want in zip(QUERIES, expected):
        infos.clear()
        names.clear()
        res = kb.search(q, k=5, preset="feedback")
        assert _shown(res) == want
        assert infos and max(infos.values()) == 1  # both rounds ranked these chunks; one read each
        assert names and max(names.values()) == 1


def test_the_same_hits_as_reading_again_in_every_round(kb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    cached = [_shown(kb.search(q, k=5, preset="feedback")) for q in QUERIES]
    store = kb.ctx.store
    monkeypatch.setattr(PassageGraph, "chunk_info", lambda self, ids: store.chunk_info(ids))
    monkeypatch.setattr(PassageGraph, "node_names", lambda self, ids: store.node_names(ids))
    monkeypatch.setattr(PassageGraph, "chunk_counts",
                        lambda self, ids: {e: c for e, c in store.entity_chunk_counts(ids).items() if c})
    fresh = [_shown(kb.search(q, k=5, preset="feedback")) for q in QUERIES]
    assert cached == fresh
    assert any(h[4] != "kept" or h[3] for res in cached for h in res)  # the walk took part


def test_passage_graph_reads_remember_what_exists_and_what_does_not(kb: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    store = kb.ctx.store
    graph = PassageGraph(kb.ctx, PassageConfig())
    chunk = next(iter(store.rank_chunks("Babbage London", 1)))[0]
    ada, london = _id(kb, "Ada Lovelace"), _id(kb, "London")
    row = store.chunk_info([chunk])[chunk]
    infos = _spy(monkeypatch, store, "chunk_info")
    names = _spy(monkeypatch, store, "node_names")
    counts = _spy(monkeypatch, store, "entity_chunk_counts")
    assert graph.chunk_info([chunk, "nope"]) == {chunk: row}
    assert graph.node_names({ada, "nope"}) == {ada: "Ada Lovelace"}
    assert graph.chunk_counts({london, "nope"}) == {london: 2}
    before = sum(counts.values())
    assert graph.chunk_info(["nope", chunk]) == {chunk: row} and infos == {chunk: 1, "nope": 1}
    assert graph.node_names({"nope", ada, london}) == {ada: "Ada Lovelace", london: "London"}
    assert names["nope"] == 1 and names[ada] == 1 and names[london] == 1  # only London was new
    assert graph.chunk_counts({"nope", london}) == {london: 2}
    assert sum(counts.values()) == before


def test_seeds_match_aliases_and_skip_spellings_the_text_lacks(kb: Any) -> None:
    babbage, engine = _id(kb, "Charles Babbage"), _id(kb, "Analytical Engine")
    # "Lord Babbage" is only an alias; "analytical engines" only covers the name (plural aside)
    got = find_seed_entities(kb.ctx, "what did lord babbage build, analytical engines?", 5, strict=True)
    assert got == [babbage, engine]
    assert find_seed_entities(kb.ctx, "Babbage", 5, strict=True) == []  # a part of a name is no match
    assert find_seed_entities(kb.ctx, "Babbage", 5, strict=False) == [babbage]  # unless nothing else


def test_seeds_read_no_whole_nodes(kb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kb.ctx.store, "get_nodes", lambda ids: pytest.fail("whole nodes read"))
    assert find_seed_entities(kb.ctx, "the engine of lord babbage", 5, strict=True) == [_id(kb, "Charles Babbage")]


def test_round_graph_is_shared_with_the_feedback_round(kb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    graphs: list[Any] = []
    real = passages_mod.rank

    def keep(*args, **kwargs):  # type: ignore[no-untyped-def]
        r = real(*args, **kwargs)
        graphs.append(r.graph)
        return r

    monkeypatch.setattr("graphmem.retrieval.search.rank", keep)
    kb.search(QUERIES[0], k=5, preset="feedback")
    assert len(graphs) == 2 and graphs[0] is graphs[1] and graphs[0] is not None
