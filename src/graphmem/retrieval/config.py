"""Retrieval is configured by data: a SearchConfig, with named presets."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput

__all__ = ["SearchConfig", "PRESETS", "resolve_config", "auto_preset", "is_contextual"]


@dataclass(frozen=True)
class SearchConfig:
    """Every knob of the search pipeline. The defaults are the best configuration found by
    bench/multihop.py on MuSiQue (see docs/benchmarks.md)."""

    # seeds
    use_lexical: bool = True
    use_dense: bool = True
    use_entities: bool = True
    pool_k: int = 20                   # lexical and dense candidates each, before the rerank
    seed_k_lexical: int = 5
    seed_k_dense: int = 5
    seed_k_entities: int = 8
    entity_dense_min: float = 0.65     # query-to-entity cosine needed to link an entity densely
    fact_seed_k: int = 0               # relations ("subject relation object") nearest the query: their
    fact_min: float = 0.0              #   entities become seeds, weighted by cosine (HippoRAG 2)
    fact_weight: float = 1.0
    dense_seed_min: float = 0.0        # a passage needs a positive cosine to be a dense seed
    fusion: str = "rrf"                # "rrf" | "weighted"
    rrf_k: float = 60.0
    fusion_weights: tuple[float, float] = (1.0, 1.0)  # (lexical, dense)
    # expansion
    strategy: str = "ppr"              # "ppr" | "bfs" | "none"
    ppr_restart: float = 0.5           # probability of jumping back to the seeds at each step
    ppr_eps: float = 3e-3             # push threshold (facts preset: 2e-3)
    ppr_max_nodes: int = 5000
    passage_seed_weight: float = 1.0   # share of the restart mass on seed passages vs entities
    entity_seed_weight: float = 1.0
    mention_weight: float = 1.0        # entity <-> passage edge weight (relations use confidence)
    mention_idf_power: float = 0.5     # passage -> entity weight / (passages mentioning it)^power
    relation_weight: float = 0.3       # multiplier of relation confidences in the walk
    lead_chars: int = 120              # a mention this close to a document's start is its topic
    lead_mention_weight: float = 20.0  # entity -> passage weight multiplier for topic mentions
    graph_walk_only: bool = False      # graph part = PPR mass minus the seed's own restart mass
    max_mentions_per_entity: int = 200
    min_confidence: float = 0.6
    bfs_depth: int = 2
    bfs_max_nodes: int = 50
    max_candidates: int = 100
    # feedback: a second round with the query followed by its best passages' text, fused with
    # the first by reciprocal rank (multi-hop: the first hop's passage names the bridge)
    feedback_passages: int = 0
    feedback_rrf_k: float = 10.0
    feedback_weight: float = 1.0
    # rerank: (alpha*dense + beta*lexical + gamma*graph) * relevance, where each part is the
    # score normalised by its maximum ("weighted") or 1 / (rerank_k + rank) ("rrf")
    rerank: str = "weighted"
    rerank_k: float = 10.0
    alpha: float = 0.4
    beta: float = 0.3
    gamma: float = 0.3

    def replace(self, **changes: Any) -> SearchConfig:
        """A copy with some fields changed (unknown fields are an InvalidInput)."""
        known = {f.name for f in dataclasses.fields(self)}
        bad = set(changes) - known
        if bad:
            raise InvalidInput(f"unknown search setting(s) {sorted(bad)}; known: {', '.join(sorted(known))}")
        return dataclasses.replace(self, **changes)


PRESETS: dict[str, SearchConfig] = {
    "default": SearchConfig(),
    "bm25": SearchConfig(use_dense=False, use_entities=False, strategy="none", alpha=0.0, beta=1.0, gamma=0.0),
    "dense": SearchConfig(use_lexical=False, use_entities=False, strategy="none", alpha=1.0, beta=0.0, gamma=0.0),
    "rrf": SearchConfig(use_entities=False, strategy="none", fusion="rrf", alpha=0.0, beta=0.0, gamma=0.0),
    "hybrid": SearchConfig(strategy="none", gamma=0.0, alpha=0.5, beta=0.5),
    "bfs": SearchConfig(strategy="bfs"),
    "ppr": SearchConfig(strategy="ppr"),
    # HippoRAG 2's recipe: the query matched against "subject relation object" facts seeds the
    # walk, passages get little restart mass, walks go further. Better with contextual embedders
    # (MiniLM: MuSiQue R@5 63.4 -> 66.5); worse with static ones (60.1 -> 58.5), see
    # docs/benchmarks.md. "auto" (the configured default) adds it for those, on dense graphs.
    "facts": SearchConfig(fact_seed_k=10, passage_seed_weight=0.1, ppr_restart=0.3, ppr_eps=2e-3),
    # One feedback round (the query + its best passage, searched again, fused by rank): with a
    # contextual embedder MuSiQue R@5 63.4 -> 68.8 (PPR), 66.5 -> 69.4 (facts); with a static
    # one it loses (60.1 -> 55.9): a static vector of a long text is a bag of its words.
    "feedback": SearchConfig(feedback_passages=1),
    "facts+feedback": SearchConfig(fact_seed_k=10, passage_seed_weight=0.1, ppr_restart=0.3, ppr_eps=2e-3,
                                   feedback_passages=1),
}

CONTEXTUAL_BACKENDS = ("sentence-transformers", "openai")


def auto_preset(embedder_spec: str, relations: int = 0, passages: int = 0) -> str:
    """The preset "auto" stands for. With a contextual embedder (sentence-transformers,
    OpenAI-compatible): "facts+feedback" on a graph with at least as many embedded relations as
    passages, else "feedback". With a static Model2Vec model or none: "default". Each rule was
    measured on MuSiQue (docs/benchmarks.md): facts lose on a sparse graph (MiniLM, offline
    extractor's graph: R@5 62.3 -> 59.7), feedback loses with a static model (60.1 -> 55.9)."""
    if not is_contextual(embedder_spec):
        return "default"
    return "facts+feedback" if relations >= max(passages, 1) else "feedback"


def is_contextual(embedder_spec: str) -> bool:
    """Whether a SPEC names a contextual embedder (sentence-transformers, OpenAI-compatible)."""
    backend = embedder_spec.partition(":")[0].strip().lower().replace("_", "-")
    if backend in ("st", "sentence-transformer", "sentencetransformers"):
        backend = "sentence-transformers"
    return backend in CONTEXTUAL_BACKENDS


def resolve_config(preset: str | None = None, overrides: Mapping[str, Any] | None = None,
                   base: SearchConfig | None = None) -> SearchConfig:
    """Preset (default 'default') with overrides applied."""
    name = preset or "default"
    if base is None:
        if name not in PRESETS:
            raise InvalidInput(f"unknown search preset '{name}'; presets: {', '.join(PRESETS)}")
        base = PRESETS[name]
    cfg = base.replace(**dict(overrides or {}))
    if cfg.strategy not in ("ppr", "bfs", "none"):
        raise InvalidInput(f"strategy '{cfg.strategy}': choose ppr, bfs or none")
    if cfg.rerank not in ("rrf", "weighted"):
        raise InvalidInput(f"rerank '{cfg.rerank}': choose rrf or weighted")
    if cfg.fusion not in ("rrf", "weighted"):
        raise InvalidInput(f"fusion '{cfg.fusion}': choose rrf or weighted")
    if not 0.0 < cfg.ppr_restart <= 1.0:
        raise InvalidInput("ppr_restart must be within (0, 1]")
    if not isinstance(cfg.feedback_passages, int) or cfg.feedback_passages < 0:
        raise InvalidInput(f"feedback_passages: expected a whole number >= 0, got {cfg.feedback_passages!r}")
    if cfg.feedback_rrf_k < 0 or cfg.feedback_weight < 0:
        raise InvalidInput("feedback_rrf_k and feedback_weight must be >= 0")
    return cfg
