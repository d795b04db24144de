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


def test_pruning_checks_kept_between_calls_give_the_same_expression() -> None:
    import sqlite3

    from graphmem.store.sqlite.fts import pruned_fts_query

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    conn.executemany("INSERT INTO t (x) VALUES (?)", [("common rare",), ("common",), ("common other",)])
    memo: dict[str, bool] = {}
    first = pruned_fts_query(conn, "t", "common rare", 3, max_share=0.5, floor=2, memo=memo)
    assert first == '"rare"' and memo == {"common": True, "rare": False}
    conn.execute("DELETE FROM t")  # a kept answer would now be wrong: the caller empties the memo
    assert pruned_fts_query(conn, "t", "common rare", 3, max_share=0.5, floor=2, memo=memo) == '"rare"'
    assert pruned_fts_query(conn, "t", "common rare", 3, max_share=0.5, floor=2, memo={}) == '"common" OR "rare"'
    assert pruned_fts_query(conn, "t", "common rare", 3, max_share=0.5, floor=2) == '"common" OR "rare"'


def test_the_stores_pruning_memo_is_emptied_by_a_write(tmp_path) -> None:
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        kb.documents.ingest_text("alpha beta", title="One")
        memo = kb.store._prune_memo("chunks_fts", 1)
        memo["alpha"] = True
        assert kb.store._prune_memo("chunks_fts", 1) is memo
        assert kb.store._prune_memo("chunks_fts", 2) == {}  # the table grew
        kb.store._prune_memo("chunks_fts", 1)["alpha"] = True
        kb.documents.ingest_text("gamma", title="Two")
        assert kb.store._prune_memo("chunks_fts", 1) == {}
