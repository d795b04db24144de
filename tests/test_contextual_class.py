"""The contextual embedder class (sentence-transformers, OpenAI-compatible) gets its own fitted
channel weights (retrieval/config.py CLASS_WEIGHTS["contextual"], fitted on pooled MuSiQue + 2Wiki
by bench/channel_fit.py, docs/benchmarks.md "phase C"); presets with their own weights and explicit
overrides still win."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest

import graphmem
from graphmem.embeddings import EmbeddingBackend, register_backend, registry
from graphmem.retrieval.config import (
    CLASS_WEIGHTS,
    PRESETS,
    PassageConfig,
    auto_preset,
    embedder_class,
    resolve_config,
)
from graphmem.retrieval.search import _resolve, auto_preset_for

# The fitted weights, pinned: a change to them is a change of the default ranking of every
# contextual-model user and must come with a new fit (docs/benchmarks.md).
FITTED = {"alpha": 0.4, "beta": 0.3, "gamma": 0.3, "feedback_words": 40, "feedback_terms": "names",
          "feedback_with_query": False, "named_seeds_only": True}


def test_contextual_specs_resolve_to_the_contextual_class() -> None:
    assert embedder_class("sentence-transformers:all-MiniLM-L6-v2") == "contextual"
    assert embedder_class("st:/models/x") == "contextual"
    assert embedder_class("openai:text-embedding-3-small") == "contextual"
    assert embedder_class("model2vec:minishlab/potion-retrieval-32M") == "static"
    assert embedder_class(None) == "static" and embedder_class("none") == "static"


def test_the_contextual_class_has_the_fitted_weights() -> None:
    assert CLASS_WEIGHTS["contextual"] == FITTED


def test_auto_gives_a_contextual_model_the_feedback_round_without_facts() -> None:
    assert auto_preset("sentence-transformers:all-MiniLM-L6-v2") == "feedback"
    cfg = resolve_config(auto_preset("st:/models/x"), embedder="contextual")
    assert (cfg.feedback_passages, cfg.fact_seed_k, cfg.alpha, cfg.beta, cfg.gamma) == (1, 0, 0.4, 0.3, 0.3)
    # the static class's feedback query and named seeds, but entities still linked by the (contextual) vector
    assert (cfg.feedback_terms, cfg.feedback_words, cfg.feedback_with_query, cfg.named_seeds_only,
            cfg.link_entities_densely) == ("names", 40, False, True, True)


@pytest.mark.parametrize("preset", ["default", "ppr", "bfs", "facts", "feedback", "facts+feedback"])
def test_presets_that_mix_all_channels_take_the_fitted_weights(preset: str) -> None:
    cfg = resolve_config(preset, embedder="contextual")
    for name, value in FITTED.items():
        assert getattr(cfg, name) == value, name
    # what the preset itself says is kept (the walk's strategy, the facts and feedback knobs)
    own = PRESETS[preset]
    assert (cfg.strategy, cfg.fact_seed_k, cfg.feedback_passages, cfg.ppr_restart) == (
        own.strategy, own.fact_seed_k, own.feedback_passages, own.ppr_restart)


@pytest.mark.parametrize("preset", ["bm25", "dense", "rrf", "hybrid"])
def test_presets_with_their_own_weights_ignore_the_class(preset: str) -> None:
    assert resolve_config(preset, embedder="contextual") == PRESETS[preset]


def test_an_explicit_override_wins_over_the_fitted_weights() -> None:
    cfg = resolve_config("feedback", {"alpha": 0.9, "beta": 0.05, "gamma": 0.05, "seed_k_dense": 7,
                                      "fusion_weights": (1.0, 0.1)}, embedder="contextual")
    assert (cfg.alpha, cfg.beta, cfg.gamma, cfg.seed_k_dense, cfg.fusion_weights) == (0.9, 0.05, 0.05, 7,
                                                                                      (1.0, 0.1))
    untouched = {k: v for k, v in FITTED.items() if k not in ("alpha", "beta", "gamma", "seed_k_dense",
                                                               "fusion_weights")}
    for name, value in untouched.items():
        assert getattr(cfg, name) == value, name
    # a whole PassageConfig is taken as given: no class weights are laid over it
    assert resolve_config(None, {}, base=PassageConfig(), embedder="contextual") == PassageConfig()


class _Lengths:
    """A toy contextual embedder: one direction per text length (enough to store and search)."""

    def __init__(self, model_id: str) -> None:
        self.model_id, self.dim = model_id, 8

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % self.dim] = 1.0
        return out


@pytest.fixture
def contextual_kb(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[graphmem.KnowledgeBase]:
    def make(name: str, model_id: str, options: Mapping[str, Any]) -> _Lengths:
        return _Lengths(model_id)

    register_backend(EmbeddingBackend("ctxtoy", make, contextual=True, local_folders=False))
    monkeypatch.setenv("GRAPHMEM_EMBED_MODEL", "ctxtoy:small")
    try:
        with graphmem.open(tmp_path / "kb") as kb:
            kb.ingest_with_content("d1", "Acme", "s", "Alice founded Acme in Paris. Acme makes rockets.")
            yield kb
    finally:
        registry._BY_SCHEME.pop("ctxtoy")
        registry._BY_SPELLING.pop("ctxtoy")


def test_a_knowledge_base_with_a_contextual_model_searches_with_the_fitted_weights(contextual_kb) -> None:
    kb = contextual_kb
    assert kb.embeddings.contextual is True
    assert auto_preset_for(kb) == "feedback"
    cfg = _resolve(kb.ctx, None, None, None)  # no preset named: the configured "auto"
    assert (cfg.feedback_passages, cfg.fact_seed_k) == (1, 0)  # the feedback round, no facts seeds
    for name, value in FITTED.items():
        assert getattr(cfg, name) == value, name
    overridden = _resolve(kb.ctx, None, None, {"alpha": 0.8})
    assert overridden.alpha == 0.8
    hits = kb.search("Who founded Acme?", kinds=["document"], k=1).hits
    assert [h.id for h in hits] == ["d1"]
