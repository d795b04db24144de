"""Parts of a search built on demand or reused: the same answers as building them eagerly."""

from __future__ import annotations

import graphmem
from graphmem.retrieval.evidence import subgraph_of
from graphmem.retrieval.search import search
from test_search import _fill


def test_lazy_subgraph_is_the_subgraph_of_the_hits_as_returned(tmp_path, model_dir) -> None:
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": f"model2vec:{model_dir}"}}) as kb:
        _fill(kb)
        res = kb.search("why did the dispatch API have an outage?", k=3)
        hits = list(res.hits)
        eager = subgraph_of(kb.store, hits, 0.6)
        assert eager and any(e["type"] == "causes" for e in eager)
        res.hits.clear()  # the caller's edits do not change what the search found
        assert res.subgraph == eager
        assert res.to_dict()["subgraph"] == eager
        assert search(kb.ctx, "why did the dispatch API have an outage?", k=3, with_subgraph=False).subgraph == []
        ctx = kb.search("why did the dispatch API have an outage?", k=3, as_context=True)
        assert ctx.context and "causes" in ctx.context


def test_seeding_scores_are_the_full_rows_scores(tmp_path, model_dir) -> None:
    """rank_chunks (ids and scores only) gives the ranking search_chunks gives."""
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": f"model2vec:{model_dir}"}}) as kb:
        _fill(kb)
        for q in ["pool exhaustion outage", "Redis routes", "label printer S3 bucket", "api"]:
            full = kb.store.search_chunks(q, 50)
            assert full and kb.store.rank_chunks(q, 50) == [(h.chunk.chunk_id, h.score) for h in full]
