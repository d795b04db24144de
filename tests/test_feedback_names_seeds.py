"""The static class's feedback round asks for the passage's names, and its entity seeds are only
the entities the query names as names (HippoRAG's "university" case: a lowercase "professor"
matched the one-passage entity "Professor" and took a quarter of the walk's restart mass)."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmem
import graphmem.retrieval.passages as passages_mod
from graphmem.errors import InvalidInput
from graphmem.retrieval.config import CLASS_WEIGHTS, PassageConfig, resolve_config
from graphmem.retrieval.search import feedback_text
from spies import record_rank_queries

PASSAGE = "Cui Liang( born 20 February 1983) is a Chinese handball player who competed in the 2008 Summer Olympics."


def test_names_keep_capitalised_and_numeric_words_the_query_lacks() -> None:
    cfg = PassageConfig(feedback_passages=1, feedback_words=40, feedback_terms="names")
    got = feedback_text("What is Cui Liang known for?", [PASSAGE], cfg)
    assert got == "20 February 1983 Chinese 2008 Summer Olympics"


def test_names_come_from_the_first_feedback_words_only_and_once() -> None:
    cfg = PassageConfig(feedback_passages=1, feedback_words=5, feedback_terms="names")
    assert feedback_text("who?", ["Ada met Ada and Charles Babbage in London"], cfg) == "Ada Charles"
    words = PassageConfig(feedback_passages=1, feedback_words=6)  # the default: words as they are
    assert feedback_text("who?", ["Ada met Ada and Charles Babbage in London"], words) == (
        "Ada met Ada and Charles Babbage")


def test_the_static_class_asks_for_names_and_named_seeds() -> None:
    cfg = resolve_config("feedback", embedder="static")
    assert (cfg.feedback_terms, cfg.feedback_with_query, cfg.named_seeds_only, cfg.link_entities_densely) == (
        "names", False, True, False)
    contextual = resolve_config("feedback", embedder="contextual")
    assert (contextual.feedback_terms, contextual.feedback_with_query, contextual.named_seeds_only,
            contextual.link_entities_densely) == ("names", False, True, True)
    assert set(CLASS_WEIGHTS["static"]) >= {"feedback_terms", "feedback_with_query", "named_seeds_only",
                                            "link_entities_densely"}


def test_a_bad_feedback_terms_is_refused() -> None:
    with pytest.raises(InvalidInput, match="feedback_terms"):
        resolve_config("default", {"feedback_terms": "all"})


def _seeds_of(kb: graphmem.KnowledgeBase, query: str, monkeypatch: pytest.MonkeyPatch, **config: object) -> set[str]:
    seen: list[dict[str, float]] = []
    real = passages_mod._graph_seeds

    def spy(ctx, r, cfg):  # type: ignore[no-untyped-def]
        real(ctx, r, cfg)
        seen.append(dict(r.ent_seeds))

    monkeypatch.setattr(passages_mod, "_graph_seeds", spy)
    kb.search(query, k=3, config={"feedback_passages": 0, **config})
    names = kb.ctx.store.node_names(set(seen[0]))
    return {names[e] for e in seen[0]}


@pytest.fixture
def university(tmp_path: Path) -> graphmem.KnowledgeBase:
    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}})
    ents = [{"name": "Professor", "type": "role"}, {"name": "Stanford University", "type": "organization"},
            {"name": "Alzheimer", "type": "disease"}]
    kb.ingest_with_content("giocomo", "Lisa Giocomo", "g.md",
                           "Professor Lisa Giocomo studies navigation at Stanford University.",
                           [dict(e, supporting_text=e["name"]) for e in ents[:2]], [])
    kb.ingest_with_content("sudhof", "Thomas Sudhof", "s.md",
                           "Sudhof at Stanford University studies Alzheimer disease.",
                           [dict(e, supporting_text=e["name"]) for e in ents[1:]], [])
    return kb


def test_a_lowercase_common_word_names_no_one_word_entity(university: graphmem.KnowledgeBase,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    query = "Which Stanford University professor works on Alzheimer's?"
    assert _seeds_of(university, query, monkeypatch) == {"Stanford University", "Alzheimer"}
    assert _seeds_of(university, query, monkeypatch, named_seeds_only=False) == {
        "Stanford University", "Alzheimer", "Professor"}
    # written as a name, it is one
    assert "Professor" in _seeds_of(university, "What does Professor Giocomo study?", monkeypatch)
    # a query without capitals cannot tell names from words: every match stays
    assert "Professor" in _seeds_of(university, "which stanford university professor studies alzheimer",
                                    monkeypatch)
    university.close()


def test_the_feedback_round_searches_the_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = record_rank_queries(monkeypatch)
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        kb.ingest_with_content("cui", "Cui Liang", "cui.md", PASSAGE, [], [])
        kb.search("What is Cui Liang known for?", k=3, preset="feedback")
        # the static class searches the names alone (the first round searched the question)
        assert seen[-1] == "20 February 1983 Chinese 2008 Summer Olympics"
        kb.search("What is Cui Liang known for?", k=3, preset="feedback", config={"feedback_with_query": True})
        assert seen[-1] == "What is Cui Liang known for?\n20 February 1983 Chinese 2008 Summer Olympics"
        # a best passage without a new name: no second round, the first round's order, fused alone
        calls = len(seen)
        res = kb.search("Cui Liang 20 February 1983 Chinese 2008 Summer Olympics", k=3, preset="feedback")
        assert len(seen) == calls + 1 and [h.doc_id for h in res.hits] == ["cui"]
        assert res.hits[0].parts["feedback"] == 0.0 and res.hits[0].parts["first_round"] > 0
