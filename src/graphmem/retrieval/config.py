"""Retrieval is configured by data: one SearchConfig with a sub-config per kind, and named presets.

``SearchConfig`` holds what every kind of retrieval reads: ``passages`` (the hybrid search over
chunks, entities, documents and pages; named presets in :data:`PRESETS`), ``graph`` (the seed's
entity query), ``memories`` and ``skills`` (named presets in :data:`SKILL_PRESETS`). The knowledge
base's configuration is read in exactly one place, :func:`search_config`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import Config
from ..embeddings.registry import backend_for, is_contextual
from ..errors import InvalidInput
from ..store.protocols.documents import DEFAULT_TITLE_WEIGHT

__all__ = ["SearchConfig", "PassageConfig", "GraphQueryConfig", "MemoryConfig", "SkillConfig", "PRESETS",
           "SKILL_PRESETS", "resolve_config", "search_config", "auto_preset",
           "is_contextual", "CLASS_WEIGHTS", "FOLLOWS_EMBEDDER", "embedder_class"]


def _replace(cfg: Any, what: str, changes: Mapping[str, Any]) -> Any:
    known = {f.name for f in dataclasses.fields(cfg)}
    bad = set(changes) - known
    if bad:
        raise InvalidInput(f"unknown {what} setting(s) {sorted(bad)}; known: {', '.join(sorted(known))}")
    return dataclasses.replace(cfg, **changes)


@dataclass(frozen=True)
class PassageConfig:
    """Every knob of the passage search pipeline. The defaults are the best configuration found by
    bench/multihop.py on MuSiQue (see docs/benchmarks.md)."""

    # seeds
    use_lexical: bool = True
    use_dense: bool = True
    use_entities: bool = True
    title_weight: float = DEFAULT_TITLE_WEIGHT  # BM25F weight of a chunk's title against its text
    pool_k: int = 20                   # lexical and dense candidates each, before the rerank
    seed_k_lexical: int = 5
    seed_k_dense: int = 5
    seed_k_entities: int = 8
    entity_dense_min: float = 0.65     # query-to-entity cosine needed to link an entity densely
    link_entities_densely: bool = True  # entities near the query vector become seeds (not named ones)
    named_seeds_only: bool = False     # a one-word entity is a seed only where the query writes it as a name
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
    entity_seed_max_passages: int = 0  # an entity in more passages than this (a hub: "American",
                                       #   "film") is no seed of the walk (0: no limit)
    # a graph that only adds: a passage in both the lexical and the dense top ``protect_agreed``
    # keeps at least its first-stage place, and so does the first stage's top ``protect_top``
    protect_agreed: int = 0
    protect_top: int = 0
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
    feedback_words: int = 0            # the second query takes at most this many words of the passages (0: all)
    feedback_terms: str = "words"      # "words": those words as they are; "names": only their name-like
                                       #   words (capitalised or numeric) the query lacks
    feedback_with_query: bool = True   # the second query repeats the query before those words
    # a first-round passage (within its top pool_k) whose document title the query names ("... the country
    # Signmark is from?" and the page "Signmark") gets one more reciprocal-rank term in that fusion, as if a third
    # ranking put it first, shared with the other candidates that name the title too, and never over the passage
    # both rounds rank first; weight 0 turns it off. Measured on MuSiQue + 2Wiki, both models, checked on the two notes
    # vaults of bench/data (docs/benchmarks.md, "Titles the question names" and "The title's specificity")
    title_named_weight: float = 1.0
    # rerank: (alpha*dense + beta*lexical + gamma*graph) * relevance, where each part is the
    # score normalised by its maximum ("weighted") or 1 / (rerank_k + rank) ("rrf")
    rerank: str = "weighted"
    rerank_k: float = 10.0
    alpha: float = 0.4
    beta: float = 0.3
    gamma: float = 0.3

    def replace(self, **changes: Any) -> PassageConfig:
        """A copy with some fields changed (unknown fields are an InvalidInput)."""
        return _replace(self, "search", changes)


PRESETS: dict[str, PassageConfig] = {
    "default": PassageConfig(),
    "bm25": PassageConfig(use_dense=False, use_entities=False, strategy="none", alpha=0.0, beta=1.0, gamma=0.0),
    "dense": PassageConfig(use_lexical=False, use_entities=False, strategy="none", alpha=1.0, beta=0.0, gamma=0.0),
    "rrf": PassageConfig(use_entities=False, strategy="none", fusion="rrf", alpha=0.0, beta=0.0, gamma=0.0),
    "hybrid": PassageConfig(strategy="none", gamma=0.0, alpha=0.5, beta=0.5),
    "bfs": PassageConfig(strategy="bfs"),
    "ppr": PassageConfig(strategy="ppr"),
    # HippoRAG 2's recipe: the query matched against "subject relation object" facts seeds the
    # walk, passages get little restart mass, walks go further. Phase A measured it better with
    # MiniLM on MuSiQue alone (R@5 63.4 -> 66.5), worse with static models (60.1 -> 58.5); once
    # titles are a field it loses with MiniLM too (docs/benchmarks.md, phase C): "auto" never picks it.
    "facts": PassageConfig(fact_seed_k=10, passage_seed_weight=0.1, ppr_restart=0.3, ppr_eps=2e-3),
    # One feedback round (the query + its best passage, searched again, fused by rank): with a
    # contextual embedder MuSiQue R@5 63.4 -> 68.8 (PPR), 66.5 -> 69.4 (facts); with a static
    # one it loses (60.1 -> 55.9): a static vector of a long text is a bag of its words.
    "feedback": PassageConfig(feedback_passages=1),
    "facts+feedback": PassageConfig(fact_seed_k=10, passage_seed_weight=0.1, ppr_restart=0.3, ppr_eps=2e-3,
                                    feedback_passages=1),
}


# Channel weights follow the embedder: a static model's dense channel is weak (alone about 35-55 R@5
# where BM25 gets 50-67 on MuSiQue / 2Wiki), a contextual one's is about as strong as BM25 (MiniLM
# alone 62.2 / 61.8 against bm25s 50.9 / 65.5). Fitted per embedder class on pooled MuSiQue + 2Wiki
# (bench/channel_fit.py; docs/benchmarks.md, "Retrieval on unseen data"), applied to the presets that
# combine all channels; a preset that sets its own weights (bm25, dense, rrf, hybrid) or an explicit
# override wins.
CLASS_WEIGHTS: dict[str, dict[str, Any]] = {
    # dense a quarter of lexical in the first-stage fusion and 3 (not 5) of the walk's seed passages;
    # in the rerank dense 0.3, lexical 0.35, graph 0.35; a feedback round searches the names of the
    # passage's first 40 words alone (the first round searched the question; pooled MuSiQue + 2Wiki
    # R@5 with the query + all 40 words 70.4 -> 76.4, and fewer postings to read, see
    # docs/benchmarks.md, "Search latency"); entity seeds only where the query names them: no entity linked by a
    # static vector, no one-word entity matched by a lowercase common word ("professor" -> the entity
    # "Professor", in one passage: node specificity gave it a quarter of the walk's restart mass on
    # HippoRAG's "university" case, R@10 0 -> 75 without both; docs/benchmarks.md, "Search latency")
    "static": {"alpha": 0.3, "beta": 0.35, "gamma": 0.35, "seed_k_dense": 3, "fusion_weights": (1.0, 0.25),
               "feedback_words": 40, "feedback_terms": "names", "feedback_with_query": False,
               "link_entities_densely": False, "named_seeds_only": True},
    # a contextual model (MiniLM): the static class's feedback query (the names of the best passage's
    # first 40 words, without the question) and named seeds, dense entity links kept, rerank dense 0.4,
    # lexical 0.3, graph 0.3. Pooled MuSiQue + 2Wiki R@5 78.75 against 72.75 for the weights alone
    # (alpha 0.55 / beta 0.15 / gamma 0.3 with the question + the whole passage): MuSiQue 71.5 -> 69.2,
    # 2Wiki 74.0 -> 88.2, R@2 51.2 -> 56.5 and 57.0 -> 64.5 (offline graph, feedback round; bench/
    # channel_fit.py --grid knobs); docs/benchmarks.md, "phase C", "with the static class's knobs"
    "contextual": {"alpha": 0.4, "beta": 0.3, "gamma": 0.3, "feedback_words": 40, "feedback_terms": "names",
                   "feedback_with_query": False, "named_seeds_only": True},
}
FOLLOWS_EMBEDDER = frozenset({"default", "bfs", "ppr", "facts", "feedback", "facts+feedback"})


def embedder_class(spec: str | None) -> str:
    """"contextual" for a contextual embedder (the registry's flag), else "static" (a static model,
    or none: without vectors the dense weight multiplies nothing)."""
    return "contextual" if spec and is_contextual(spec) else "static"


@dataclass(frozen=True)
class GraphQueryConfig:
    """The seed's entity query (``kb.query``, ``query_with_evidence``, ``graph.neighbours``): BFS
    constraints and evidence bounds (config section ``[graph]``)."""

    min_confidence: float = 0.6
    max_depth: int = 2
    max_nodes: int = 50
    max_edges: int = 200
    max_seeds: int = 10
    max_evidence_per_item: int = 3
    max_evidence_chunks: int = 20


@dataclass(frozen=True)
class MemoryConfig:
    """Memory search: seeds -> expand -> ``(alpha*dense + beta*lexical + gamma*graph + feedback
    terms) * relevance``. ContextKit's names (config ``[memory.context_graph.retrieval]``); the
    defaults are the best found by bench/locomo.py."""

    enabled: bool = True
    algorithm: str = "bfs"
    seed_top_k: int = 10
    expansion_depth: int = 2
    max_candidates: int = 50
    edge_weight_floor: float = 0.1
    ppr_damping: float = 0.85
    alpha_dense: float = 0.55
    beta_bm25: float = 0.15
    gamma_graph: float = 0.30
    delta_personal: float = 0.0
    epsilon_frequency: float = 0.0
    zeta_success: float = 0.0
    half_life_days: float = 30.0     # [memory.context_graph.decay]: relevance fades with it
    mention_entities: bool = True    # [memory]: memories naming an entity the query names are seeds


@dataclass(frozen=True)
class SkillConfig:
    """Knobs of skill retrieval; the defaults are the best found by bench/skills.py."""

    use_lexical: bool = True
    use_dense: bool = True
    use_exact: bool = True
    # FTS5 bm25() column weights: name, triggers, tags, description, body
    field_weights: tuple[float, float, float, float, float] = (10.0, 10.0, 4.0, 2.0, 0.5)
    pool_k: int = 40                 # lexical and dense candidates each
    seed_k: int = 8                  # fused seeds the graph walk starts from
    rrf_k: float = 60.0
    strategy: str = "bfs"            # bfs (one hop) | ppr | none
    ppr_restart: float = 0.5
    ppr_eps: float = 1e-3
    max_graph: int = 30              # graph-only candidates added
    # multipliers of the stored edge weights in the walk, by edge type
    edge_types: tuple[tuple[str, float], ...] = (("related", 1.0), ("mentions", 1.0), ("similar", 1.0),
                                                 ("sibling", 1.0))
    exact_min_words: int = 2         # a one-word name counts as exact only in backticks or /name
    alpha: float = 0.2               # dense
    beta: float = 0.7                # lexical
    gamma: float = 0.1               # graph

    def replace(self, **changes: Any) -> SkillConfig:
        """A copy with some fields changed (unknown fields are an InvalidInput)."""
        return _replace(self, "skills search", changes)


SKILL_PRESETS: dict[str, SkillConfig] = {
    "default": SkillConfig(),
    "bm25": SkillConfig(use_dense=False, use_exact=False, strategy="none", alpha=0.0, beta=1.0, gamma=0.0),
    "dense": SkillConfig(use_lexical=False, use_exact=False, strategy="none", alpha=1.0, beta=0.0, gamma=0.0),
    "ppr": SkillConfig(strategy="ppr"),
    "none": SkillConfig(strategy="none", gamma=0.0),
}


@dataclass(frozen=True)
class SearchConfig:
    """What retrieval reads, one sub-config per kind. ``preset`` names the passage preset used
    when a search names none ("auto" resolves from the embedder, see :func:`auto_preset`)."""

    passages: PassageConfig = field(default_factory=PassageConfig)
    graph: GraphQueryConfig = field(default_factory=GraphQueryConfig)
    memories: MemoryConfig = field(default_factory=MemoryConfig)
    skills: SkillConfig = field(default_factory=SkillConfig)
    preset: str = "auto"


_MEMORY_KEYS = tuple(f.name for f in dataclasses.fields(MemoryConfig) if f.name not in
                     ("half_life_days", "mention_entities"))
_GRAPH_KEYS = tuple(f.name for f in dataclasses.fields(GraphQueryConfig))


def search_config(config: Config) -> SearchConfig:
    """The retrieval settings of a knowledge base's (validated) configuration.

    The one place retrieval reads the knowledge base's config: ``[search] preset``, ``[graph]``,
    ``[memory.context_graph.retrieval]`` with the decay half-life and ``[memory]
    mention_entities``. Values are taken as configured (validation is the config module's)."""
    memory = config.memory
    cg = memory.context_graph
    return SearchConfig(
        graph=GraphQueryConfig(**{k: getattr(config.graph, k) for k in _GRAPH_KEYS}),
        memories=MemoryConfig(**{k: getattr(cg.retrieval, k) for k in _MEMORY_KEYS},
                              half_life_days=cg.decay.half_life_days,
                              mention_entities=memory.mention_entities),
        preset=config.search.preset,
    )


def configured_preset(config: Config) -> str:
    """``[search] preset`` alone: a search that needs only the preset does not build the whole
    SearchConfig (the typed memory sections cost ~0.7 ms, a tenth of a search)."""
    return str(config.search.preset)


def auto_preset(embedder_spec: str) -> str:
    """The preset "auto" stands for: "feedback" with any embedding model (with its class's channel
    weights, :data:`CLASS_WEIGHTS`), "default" with none. How dense the graph is no longer matters.

    Measured (docs/benchmarks.md, "Retrieval on unseen data", phases B and C): once titles are a
    field, the feedback round gains with a static model on both MuSiQue and 2Wiki (R@5 59.2 -> 61.8
    and 67.5 -> 78.2) and with MiniLM on both (PPR -> feedback: 64.2 -> 71.5, 68.2 -> 74.0). The
    facts seeds lose with MiniLM on both sets' offline graphs (feedback 71.5 / 74.0, facts+feedback
    66.7 / 73.5, pooled fit of bench/channel_fit.py) and on the only dense graph measured, MuSiQue's
    published triples (70.5 against 66.8 with the fitted weights; 69.8 against 68.6 with phase A's),
    so a contextual model no longer gets them on a dense graph either (phase A chose them there on
    MuSiQue alone)."""
    return "feedback" if _names_a_model(embedder_spec) else "default"


def _names_a_model(spec: str) -> bool:
    """Whether a SPEC names an embedding model at all (False for ``none`` and for a bad SPEC)."""
    try:
        return backend_for(spec) is not None
    except InvalidInput:
        return False


def resolve_config(preset: str | None = None, overrides: Mapping[str, Any] | None = None,
                   base: PassageConfig | None = None, embedder: str = "static") -> PassageConfig:
    """Preset (default 'default') with the channel weights of the ``embedder`` class
    (:data:`CLASS_WEIGHTS`, presets in :data:`FOLLOWS_EMBEDDER` only), then overrides applied."""
    name = preset or "default"
    if base is None:
        if name not in PRESETS:
            raise InvalidInput(f"unknown search preset '{name}'; presets: {', '.join(PRESETS)}")
        base = PRESETS[name]
        if name in FOLLOWS_EMBEDDER:
            base = base.replace(**CLASS_WEIGHTS[embedder])
    cfg = base.replace(**dict(overrides or {}))
    if cfg.strategy not in ("ppr", "bfs", "none"):
        raise InvalidInput(f"strategy '{cfg.strategy}': choose ppr, bfs or none")
    if cfg.rerank not in ("rrf", "weighted"):
        raise InvalidInput(f"rerank '{cfg.rerank}': choose rrf or weighted")
    if cfg.fusion not in ("rrf", "weighted"):
        raise InvalidInput(f"fusion '{cfg.fusion}': choose rrf or weighted")
    if not isinstance(cfg.title_weight, (int, float)) or not 0.0 <= cfg.title_weight < float("inf"):
        raise InvalidInput(f"title_weight: expected a number >= 0, got {cfg.title_weight!r}")
    if not 0.0 < cfg.ppr_restart <= 1.0:
        raise InvalidInput("ppr_restart must be within (0, 1]")
    if not isinstance(cfg.feedback_passages, int) or cfg.feedback_passages < 0:
        raise InvalidInput(f"feedback_passages: expected a whole number >= 0, got {cfg.feedback_passages!r}")
    if not isinstance(cfg.feedback_words, int) or cfg.feedback_words < 0:
        raise InvalidInput(f"feedback_words: expected a whole number >= 0 (0: the whole passage), "
                           f"got {cfg.feedback_words!r}")
    if cfg.feedback_terms not in ("words", "names"):
        raise InvalidInput(f"feedback_terms '{cfg.feedback_terms}': choose words or names")
    for name in ("feedback_rrf_k", "feedback_weight", "title_named_weight"):
        value = getattr(cfg, name)
        # a bool is an int to Python, NaN compares False, infinity makes every score infinite (not JSON)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < float("inf"):
            raise InvalidInput(f"{name}: expected a finite number >= 0, got {value!r}")
    return cfg

