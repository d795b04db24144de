"""query_with_evidence's graph-only fast path: when the question names entities, the answer comes
from the graph and its evidence alone (no search pipeline run), and it is the same answer as the
slow path's (the pipeline's passage seeding run as well), which only adds unquoted passages."""

from __future__ import annotations

import importlib
import random
from pathlib import Path
from typing import Any

import pytest

import graphmem

# the module (graphmem.retrieval re-exports a function of the same name)
gq = importlib.import_module("graphmem.retrieval.graph_query")

REPO = Path(__file__).resolve().parent.parent

EXAMPLE_QUESTIONS = [
    "Why did dispatch fail during INC-2041?",
    "What does the Tracker Service depend on?",
    "Which incidents involved Redis?",
    "What caused the notification storm in INC-2102?",
    "Which services are affected if PgBouncer runs out of connections?",
    "Would a Kafka outage stop label printing?",
]


@pytest.fixture(scope="module")
def examples_kb(tmp_path_factory: pytest.TempPathFactory):
    with graphmem.open(tmp_path_factory.mktemp("ex") / "kb", config={"embeddings": {"model": "none"}}) as kb:
        assert kb.ingest_paths([str(REPO / "examples")]).added == 15
        yield kb


def _synthetic(kb: graphmem.KnowledgeBase, n_docs: int, seed: int = 7) -> list[str]:
    """A seed-like corpus (agent extraction, shared two-word names with hubs); returns the names."""
    rng = random.Random(seed)
    names = [f"{a} {b}" for a in ("thermal", "backup", "remote", "hydraulic", "optical", "nightly")
             for b in ("valve", "pump", "relay", "sensor", "router", "buffer")]
    types = ["causes", "depends on", "uses", "affects"]
    for i in range(n_docs):
        picked = rng.sample(names[:8], 2) + rng.sample(names, 3)  # the first names recur: hubs
        picked = list(dict.fromkeys(picked))
        sents, rels = [], []
        for a, b in zip(picked, picked[1:]):
            t = rng.choice(types)
            s = f"The {a} {t} the {b}."
            sents.append(s)
            rels.append({"source": a, "target": b, "type": t, "confidence": 0.9, "supporting_text": s})
        sents.append("Nothing else of note happened that day.")
        kb.ingest_with_content(f"doc{i}", f"Report {i}", f"r{i}.txt", " ".join(sents),
                               [{"name": n, "type": "component"} for n in picked], rels)
    return names


def _quoted(r: dict[str, Any]) -> list[tuple[str, str, tuple]]:
    return [(d["doc_id"], c["chunk_id"], tuple((q["start"], q["end"], q["text"], q["supports"]) for q in c["quotes"]))
            for d in r["supporting_documents"] for c in d["supporting_chunks"] if c["quotes"]]


def _assert_same_answer(fast: dict[str, Any], slow: dict[str, Any]) -> None:
    assert fast["subgraph"] == slow["subgraph"]
    assert fast["evidence_paths"] == slow["evidence_paths"]
    assert fast["evidence_chain"] == slow["evidence_chain"]
    assert _quoted(fast) == _quoted(slow)  # the same quotes in the same chunks, in the same order
    fast_chunks = {c["chunk_id"] for d in fast["supporting_documents"] for c in d["supporting_chunks"]}
    extra = [c for d in slow["supporting_documents"] for c in d["supporting_chunks"]
             if c["chunk_id"] not in fast_chunks]
    assert all(c["quotes"] == [] for c in extra)  # the slow path only adds passages it found


def _no_search(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []

    def refuse(ctx, text, **kw):  # the fast path must not run the search pipeline
        calls.append(text)
        raise AssertionError(f"search pipeline ran for {text!r}")

    monkeypatch.setattr(gq, "search", refuse)
    return calls


@pytest.mark.parametrize("question", EXAMPLE_QUESTIONS)
def test_fast_path_gives_the_slow_paths_answer_on_the_example_corpus(examples_kb, question, monkeypatch):
    slow = gq.query_with_evidence(examples_kb.ctx, question, fast=False)
    assert slow["subgraph"]["edges"]
    _no_search(monkeypatch)
    fast = examples_kb.query_with_evidence(question)
    _assert_same_answer(fast, slow)
    assert fast["subgraph"] == examples_kb.query(question)


def test_fast_path_on_a_seed_like_corpus_with_hubs(tmp_path, monkeypatch):
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}
                       ) as kb:
        names = _synthetic(kb, 60)
        questions = [f"What does the {n} affect?" for n in names[:4]]  # hubs
        questions += [f"How is the {a} related to the {b}?" for a, b in zip(names[10:30:4], names[20:40:4])]
        slows = {q: gq.query_with_evidence(kb.ctx, q, fast=False) for q in questions}
        _no_search(monkeypatch)
        for q in questions:
            fast = kb.query_with_evidence(q)
            assert fast["subgraph"]["nodes"], q
            _assert_same_answer(fast, slows[q])


def test_a_question_that_names_nothing_takes_the_search_pipeline(examples_kb, monkeypatch):
    calls = _no_search(monkeypatch)
    with pytest.raises(AssertionError, match="search pipeline ran"):
        examples_kb.query_with_evidence("why do parcels arrive late?")
    assert calls == ["why do parcels arrive late?"]


def test_fast_path_with_an_embedding_model_never_embeds_the_question(tmp_path, model_dir, monkeypatch):
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": f"model2vec:{model_dir}"}}) as kb:
        kb.ingest_paths([str(REPO / "examples")])
        slow = gq.query_with_evidence(kb.ctx, EXAMPLE_QUESTIONS[0], fast=False)
        _no_search(monkeypatch)
        monkeypatch.setattr(kb.embeddings, "embed_query", lambda text: pytest.fail("embedded the question"))
        _assert_same_answer(kb.query_with_evidence(EXAMPLE_QUESTIONS[0]), slow)
