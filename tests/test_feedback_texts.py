"""A feedback search reads passage texts only for the hits it shows (and the first round's best):
every shown hit still carries its text and citation, as when every candidate was read."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmem
import graphmem.retrieval.passages as passages_mod
from graphmem.retrieval.search import SearchResult

DOCS = [
    ("ada", "Ada Lovelace", "Ada Lovelace wrote the first program for the Analytical Engine of Charles Babbage."),
    ("babbage", "Charles Babbage", "Charles Babbage designed the Analytical Engine in London."),
    ("london", "London", "London is the capital of England; Babbage lived there."),
    ("engine", "Analytical Engine", "The Analytical Engine was a proposed mechanical computer."),
    ("turing", "Alan Turing", "Alan Turing studied computable numbers at Cambridge."),
]


@pytest.fixture
def kb(tmp_path: Path) -> graphmem.KnowledgeBase:
    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}})
    for doc_id, title, text in DOCS:
        kb.ingest_with_content(doc_id, title, f"{doc_id}.md", text, [], [])
    return kb


def _counting_reads(kb: graphmem.KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    read: list[int] = []
    real = kb.ctx.store.get_chunks

    def counting(ids):  # type: ignore[no-untyped-def]
        ids = list(ids)
        read.append(len(ids))
        return real(ids)

    monkeypatch.setattr(kb.ctx.store, "get_chunks", counting)
    return read


def _assert_texts_and_citations(res: SearchResult) -> None:
    texts = {doc_id: text for doc_id, _, text in DOCS}
    assert len(res.hits) == 2
    for h in res.hits:
        assert h.text == texts[h.doc_id]
        assert [(c["chunk_id"], c["text"], c["start"], c["end"]) for c in h.citations] == [
            (h.id, texts[h.doc_id], 0, len(texts[h.doc_id]))]


def test_shown_hits_carry_text_and_citation(kb: graphmem.KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    read = _counting_reads(kb, monkeypatch)
    res = kb.search("Where did the man who designed a mechanical computer live?", k=2, preset="feedback")
    _assert_texts_and_citations(res)
    # the query names no title: the first round's best passage (the second query), then the two shown, no other
    assert read[0] == 1 and sum(read[1:]) <= len(res.hits) and len(read) <= 2
    kb.close()


def test_a_named_title_reads_the_pool_once(kb: graphmem.KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    """The title term's share counts the pool passages whose text names the title: one more read of the pool,
    only when the query names a title ("Analytical Engine")."""
    read = _counting_reads(kb, monkeypatch)
    res = kb.search("Where did the designer of the Analytical Engine live?", k=2, preset="feedback")
    _assert_texts_and_citations(res)
    assert read[0] == 1 and len(read) <= 3 and sum(read[1:]) <= len(DOCS)
    kb.close()


def test_the_same_hits_as_with_every_text_read(kb: graphmem.KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    query = "Who wrote a program for the engine that Babbage designed?"
    lazy = kb.search(query, k=4, preset="feedback")
    monkeypatch.setattr(passages_mod, "_chunk_hits", _eager(passages_mod._chunk_hits))
    eager = kb.search(query, k=4, preset="feedback")
    assert [(h.id, h.score, h.text, h.citations, h.path) for h in lazy.hits] == [
        (h.id, h.score, h.text, h.citations, h.path) for h in eager.hits]
    kb.close()


def _eager(chunk_hits):  # type: ignore[no-untyped-def]
    def every_text(ctx, r, cfg, cands, info, want, texts=None):  # type: ignore[no-untyped-def]
        return chunk_hits(ctx, r, cfg, cands, info, want, None)
    return every_text
