"""A one-channel search (the bm25 and dense presets) reads only the best k candidates: the same
hits, scores and parts as from a deep pool (the rerank normalises by the best hit's score)."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmem
import graphmem.retrieval.passages as passages_mod
from graphmem.retrieval.config import resolve_config
from graphmem.retrieval.search import _one_channel

WORDS = ["harbour", "lighthouse", "ferry", "tide", "pier", "gull", "anchor", "buoy"]


def _hits(kb: graphmem.KnowledgeBase, query: str, **kw: object) -> list[tuple[str, float, dict[str, float]]]:
    return [(h.id, h.score, h.parts) for h in kb.search(query, **kw).hits]  # type: ignore[arg-type]


@pytest.fixture
def harbour(tmp_path: Path, model_dir: Path) -> graphmem.KnowledgeBase:
    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": f"model2vec:{model_dir}"}})
    for i in range(60):  # every passage shares words with the query, in different proportions
        text = " ".join(WORDS[j % len(WORDS)] for j in range(i % 7, i % 7 + 3 + i % 5)) + f" note {i}."
        kb.ingest_with_content(f"d{i:02d}", f"Harbour note {i}", f"d{i}.md", text, [], [])
    return kb


@pytest.mark.parametrize("preset", ["bm25", "dense"])
def test_the_best_k_are_those_of_a_deep_pool(harbour: graphmem.KnowledgeBase, preset: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pools: list[int] = []  # candidates each search reranked
    real = passages_mod.rerank

    def spy(ctx, r, cfg, kinds, want, detail=None, texts=None):  # type: ignore[no-untyped-def]
        pools.append(len(r.fused))
        return real(ctx, r, cfg, kinds, want, detail, texts)

    monkeypatch.setattr("graphmem.retrieval.search.rerank", spy)
    for query in ("harbour ferry at the pier", "gull over the lighthouse", "anchor buoy tide"):
        shallow = _hits(harbour, query, k=5, preset=preset)
        deep = _hits(harbour, query, k=5, preset=preset, config={"pool_k": 60})
        assert len(shallow) == 5 and shallow == deep
    # the shallow searches read the channel's pool_k (20), not max_candidates (100); the deep ones more
    assert max(pools[0::2]) <= 20 < min(pools[1::2])
    harbour.close()


def test_only_single_channel_rankings_are_cut() -> None:
    assert _one_channel(resolve_config("bm25")) and _one_channel(resolve_config("dense"))
    for name in ("default", "rrf", "hybrid", "feedback", "ppr"):
        assert not _one_channel(resolve_config(name)), name
