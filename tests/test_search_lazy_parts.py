"""Parts of a search built on demand or reused: the same answers as building them eagerly."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize("all_matches_max", [5000, 1])
def test_one_match_serves_seeding_and_rerank_with_the_same_numbers(tmp_path, monkeypatch, all_matches_max) -> None:
    """rank_chunks keeps its match's scores for chunk_bm25; with more matches than it keeps
    (all_matches_max=1) both run their own match: the answers are the same either way."""
    from graphmem.store.sqlite import documents

    monkeypatch.setattr(documents, "_ALL_MATCHES_MAX", all_matches_max)
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        for i, text in enumerate(["red kayak", "red red bicycle", "blue kayak on a red lake", "green", "red"]):
            kb.documents.ingest_text(text, doc_id=f"d{i}", title=f"T{i}")
        ids = [c for c, _ in kb.store.rank_chunks("red kayak", 50, keep_scores=True)]
        assert ids == [h.chunk.chunk_id for h in kb.store.search_chunks("red kayak", 50)]
        kept = kb.store.chunk_bm25("red kayak", [*ids, "d3:v1:c0", "nope"])
        kb.store._scores_memo = (None, None)
        assert kept == kb.store.chunk_bm25("red kayak", [*ids, "d3:v1:c0", "nope"]) and set(kept) == set(ids)
        kb.store.rank_chunks("red kayak", 50, keep_scores=True)
        kb.documents.ingest_text("red kayak red kayak", doc_id="d9", title="T9")  # a write: kept scores go
        assert "d9:v1:c0" in kb.store.chunk_bm25("red kayak", ["d9:v1:c0"])


def test_similarity_before_the_matrix_is_loaded_reads_only_those_vectors(tmp_path, model_dir) -> None:
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": f"model2vec:{model_dir}"}}) as kb:
        _fill(kb)
        q = kb.embed_query("dispatch outage")
        ids = sorted(kb.store.find_nodes("entity", ["pgbouncer", "dispatch api", "redis cache"]).values())
        fresh = kb.embeddings.vector_index("entity")
        fresh.__init__(fresh.store, fresh.item_kind, fresh.model)  # as in a new process
        partial = fresh.similarity(q, [*ids, "no-such-id", ids[0]])
        assert len(fresh) == 0  # nothing loaded
        fresh.refresh()
        assert len(fresh) == 8 and partial == fresh.similarity(q, [*ids, "no-such-id", ids[0]])
        assert set(partial) == set(ids) and all(-1.0 <= v <= 1.0 for v in partial.values())


def test_the_configured_preset_is_the_one_a_search_uses(tmp_path, model_dir) -> None:
    cfg = {"embeddings": {"model": f"model2vec:{model_dir}"}, "search": {"preset": "dense"}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        _fill(kb)
        q = "why did the dispatch API have an outage?"
        got = kb.search(q, k=5).to_dict()
        assert got == kb.search(q, k=5, preset="dense").to_dict()
        assert got != kb.search(q, k=5, preset="default").to_dict()
        assert all(h["parts"]["lexical"] == 0.0 for h in got["hits"])
