"""The configuration sections: one frozen dataclass per ``config.toml`` table.

Every setting is declared once, here, with its default, its bounds and the comment it gets in the
``config.toml`` template (``setting(...)``). :mod:`graphmem.config` builds the defaults, validates
values and writes the template from these declarations; nothing else restates a default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar
from urllib.parse import urlsplit

from .errors import InvalidInput

__all__ = [
    "setting", "ChunkingConfig", "GraphConfig", "OntologyConfig", "StoreConfig", "IngestConfig",
    "EmbeddingsConfig", "SearchSettings", "SkillsConfig", "WikiConfig", "MemoryEdgeLLMConfig",
    "MemoryEdgesConfig", "MemoryRetrievalConfig", "MemoryDecayConfig", "ContextGraphConfig", "MemoryConfig",
    "LLMConfig", "SECTIONS", "STORE_URL_SCHEMES", "check_store_url", "has_password", "redact_url",
]


def setting(default: Any, doc: str = "", *, low: float | None = None, high: float | None = None,
            low_open: bool = False, choices: tuple[str, ...] = (), template: bool = False,
            table: bool = False, checked_where_used: bool = False) -> Any:
    """A field with its bounds and template comment.

    ``low``/``high``: the accepted range (``low_open``: ``low`` itself is refused); ``choices``: the
    accepted strings; ``template``: written into a new knowledge base's config.toml with ``doc`` as
    its comment (a ``doc`` with line breaks goes above the line); ``table``: a free-form table of
    strings (synonyms, readers) merged over the default rather than replacing it; ``checked_where_used``:
    no range check when the knowledge base opens (the command that uses it checks it and names the key).
    A number with no ``low`` refuses values below zero.
    """
    meta = {"doc": doc, "low": low, "high": high, "low_open": low_open, "choices": choices,
            "template": template, "table": table, "checked_where_used": checked_where_used}
    if table:
        frozen = MappingProxyType(dict(default))
        return field(default_factory=lambda: frozen, metadata=meta)
    return field(default=default, metadata=meta)


def _nested(cls: type) -> Any:
    return field(default_factory=cls, metadata={"nested": True})


@dataclass(frozen=True)
class ChunkingConfig:
    size: int = setting(500, "characters per chunk; chunks end at sentence or word boundaries",
                        low=50, high=10_000_000, template=True)
    overlap: int = setting(100, "characters shared by consecutive chunks", low=0, high=10_000_000, template=True)


@dataclass(frozen=True)
class GraphConfig:
    min_confidence: float = setting(0.6, "relations below this are skipped and reported", low=0.0, high=1.0,
                                    template=True)
    max_depth: int = setting(2, "BFS depth for query()", low=0, template=True)
    max_nodes: int = setting(50, "subgraph size cap for query()", low=0, template=True)
    max_edges: int = setting(200)
    max_seeds: int = setting(10, low=0)
    max_evidence_per_item: int = setting(3)
    max_evidence_chunks: int = setting(20)


@dataclass(frozen=True)
class OntologyConfig:
    TEMPLATE_NOTE: ClassVar[str] = (
        "Extra synonyms, merged over the Mini Context Graph defaults:\n"
        "[ontology.type_synonyms]\nmicroservice = \"software\"\n"
        "[ontology.relation_synonyms]\n\"is powered by\" = \"uses\"\n"
        "[ontology.inverse_relations]   # phrase -> relation, with source and target swapped\n"
        "\"is hosted on\" = \"hosts\"")
    max_entity_types: int = setting(50, template=True)
    type_synonyms: Mapping[str, str] = setting({}, table=True)
    relation_synonyms: Mapping[str, str] = setting({}, table=True)
    inverse_relations: Mapping[str, str] = setting({}, table=True)
    opposite_relations: Mapping[str, str] = setting({}, table=True)


@dataclass(frozen=True)
class StoreConfig:
    busy_timeout: float = setting(30.0, "seconds a writer waits for another process's write lock",
                                  low=0.0, high=86_400.0, low_open=True, template=True)
    # "" keeps the store in this folder's graph.db; postgresql://user@host/db puts it on a PostgreSQL server
    # (`graphmem init --store URL`; env GRAPHMEM_STORE wins over this file). Keep passwords in PGPASSWORD or
    # ~/.pgpass rather than here.
    url: str = setting("")


STORE_URL_SCHEMES = ("postgresql", "postgres")


_PASSWORD_PARAM = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``url`` without its password (``postgresql://ann:***@host/db``, ``...?password=***``), for errors, logs,
    status and events: the one function every url shown or stored goes through.

    The password is what lies between the first ``:`` after ``://`` and the *last* ``@``, found by plain string
    search rather than by parsing, so that a password with an unencoded ``/ # ? @`` (which a URL parser would
    read as the path, fragment, query or host) is masked whole; a ``password=`` query parameter is masked too."""
    scheme, sep, rest = url.partition("://")
    if sep:
        at = rest.rfind("@")
        colon = rest.find(":", 0, at) if at > 0 else -1
        if 0 <= colon < at - 1:  # an empty password (``postgres:@``, as pgserver prints it) hides nothing
            rest = f"{rest[:colon]}:***{rest[at:]}"
        url = f"{scheme}{sep}{rest}"
    return _PASSWORD_PARAM.sub(lambda m: m.group(0) if m.group(0).endswith("=") else f"{m.group(1)}***", url)


def has_password(url: str) -> bool:
    """Whether ``url`` carries a password (in ``user:password@`` or a ``password=`` parameter)."""
    return redact_url(url) != url


def check_store_url(url: str, where: str) -> str:
    """``url`` trimmed when it is a PostgreSQL connection URL ("" stays ""); else InvalidInput naming
    ``where`` (the config key or variable) and what to write instead. The url itself is shown only
    without its password."""
    url = url.strip()
    if not url:
        return ""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in STORE_URL_SCHEMES:
        raise InvalidInput(f"{where}: {redact_url(url)!r} is not a PostgreSQL URL; write postgresql://user@host/db "
                           "(or postgres://...), or leave it empty to keep the store in this folder's graph.db")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 — parsing the port is the check
    except ValueError:
        # the parser's message is left out: it may quote the password (an unencoded '/' or '#' in it)
        raise InvalidInput(f"{where}: {redact_url(url)!r} is not a valid URL (a port that is not a number, a "
                           "bracket left open, or a password with an unencoded / # ? @: percent-encode it or "
                           "put it in PGPASSWORD or ~/.pgpass); write postgresql://user@host:5432/db") from None
    if not rest.strip("/") or (not parts.hostname and "host=" not in parts.query):
        raise InvalidInput(f"{where}: {redact_url(url)!r} names no server; write postgresql://user@host/db "
                           "(or postgresql:///db?host=/path/to/socket)")
    return url


@dataclass(frozen=True)
class IngestConfig:
    extractor: str = setting("offline", "offline | llm | none (agent-supplied entities/relations always win)",
                             template=True)
    max_mentions_per_entity: int = setting(50, low=0, high=10_000_000)
    max_file_mb: float = setting(20.0, "larger single documents are skipped with a reason",
                                 low=0.0, high=1_048_576.0, low_open=True, template=True)
    max_bulk_file_mb: float = setting(2048.0, low=0.0, high=1_048_576.0, low_open=True)
    max_record_chars: int = setting(5_000_000, low=1, high=10**10)
    batch_size: int = setting(64, low=1, high=1_000_000)
    workers: int = setting(2, low=1, high=1024)
    readers: Mapping[str, str] = setting({}, table=True)


@dataclass(frozen=True)
class EmbeddingsConfig:
    model: str = setting(
        "model2vec:minishlab/potion-retrieval-32M",
        "model2vec:<hub id or folder> (default; downloaded on first use where the network allows),\n"
        "sentence-transformers:<id or folder>, openai:<model> (GRAPHMEM_OPENAI_BASE_URL, OPENAI_API_KEY)\n"
        "or none. Env: GRAPHMEM_EMBED_MODEL. Changing it on a filled knowledge base needs `graphmem reindex`.",
        template=True)
    embed_entities: bool = setting(True)
    embed_relations: bool = setting(True)  # "subject relation object" facts, matched against the query
    device: str = setting("")
    base_url: str = setting("")
    batch_size: int = setting(128, low=1, high=1_000_000)
    # above this many vectors of a kind, search uses an HNSW index (extra 'ann': usearch); -1: exact always
    ann_threshold: int = setting(200_000)


@dataclass(frozen=True)
class SearchSettings:
    preset: str = setting("auto", "auto (with an embedding model: feedback, with the weights of its class, "
                                  "static or contextual; without one: default) | default | facts | feedback | "
                                  "facts+feedback | bm25 | dense | rrf | hybrid | bfs | ppr", template=True)


@dataclass(frozen=True)
class SkillsConfig:
    related_weight: float = setting(1.0)
    sibling_weight: float = setting(0.3)
    sibling_max: int = setting(8)  # sibling edges per skill (the most similar ones in big categories)
    similar_min: float = setting(0.6)  # cosine for a 'similar' edge
    similar_top_k: int = setting(5)
    mentions_weight: float = setting(0.5)
    top_k: int = setting(8)
    return_all_factor: float = setting(2.5)  # with <= top_k * this many skills, retrieval returns them all
    # A bigger SKILL.md is not read (the largest public one is 294 KB); checked by `skills build`, which
    # names the key, so that a bad value does not stop the knowledge base from opening.
    max_skill_kb: int = setting(1024, checked_where_used=True)


@dataclass(frozen=True)
class WikiConfig:
    auto_pages: bool = setting(True, "write a summary page per document and a page per entity on every ingest",
                               template=True)
    regenerate: str = setting("ingest", choices=("ingest", "deferred"))  # deferred: before the next wiki use
    entity_min_documents: int = setting(2)  # an entity gets a page once it has a relation or this many documents
    max_relations: int = setting(15)  # per entity page (strongest first)
    max_documents: int = setting(10)  # per entity page (first naming it first)
    max_claims: int = setting(50)  # per summary page
    max_entities: int = setting(100)  # per summary page
    max_backlinks: int = setting(10)  # "See also" summary pages per entity page
    index_inline_max: int = setting(50)  # index.md lists a category's pages inline up to this many
    autosync_interval: float = setting(2.0, low=0.0, high=86_400.0)  # seconds between full re-scans (0: always)
    bulk_flush_docs: int = setting(5000, low=1, high=10**9)  # bulk ingest regenerates pages every N documents
    stub_category: str = setting("topic")


# The memory sections keep ContextKit's field names and defaults, so that its settings carry over.

@dataclass(frozen=True)
class MemoryEdgeLLMConfig:
    enabled: bool = setting(False)
    max_pairs_per_insert: int = setting(3)
    min_topic_similarity: float = setting(0.80)
    min_confidence: float = setting(0.60)
    daily_token_budget: int = setting(20_000)
    cooldown_seconds: float = setting(3600.0)


@dataclass(frozen=True)
class MemoryEdgesConfig:
    enable_reply_to: bool = setting(True)
    enable_temporal_next: bool = setting(True)
    enable_document_link: bool = setting(True)
    enable_topic_similar: bool = setting(True)
    topic_top_k: int = setting(5)
    topic_min_similarity: float = setting(0.75)
    reply_to_window_seconds: float = setting(1800.0)
    llm: MemoryEdgeLLMConfig = _nested(MemoryEdgeLLMConfig)


@dataclass(frozen=True)
class MemoryRetrievalConfig:
    enabled: bool = setting(True)
    seed_top_k: int = setting(10)
    expansion_depth: int = setting(2)
    max_candidates: int = setting(50)
    edge_weight_floor: float = setting(0.1)
    alpha_dense: float = setting(0.55)
    beta_bm25: float = setting(0.15)
    gamma_graph: float = setting(0.30)
    algorithm: str = setting("bfs")
    ppr_damping: float = setting(0.85)
    delta_personal: float = setting(0.0)
    epsilon_frequency: float = setting(0.0)
    zeta_success: float = setting(0.0)


@dataclass(frozen=True)
class MemoryDecayConfig:
    enabled: bool = setting(True)
    half_life_days: float = setting(30.0)
    min_edge_weight: float = setting(0.05)
    min_node_relevance: float = setting(0.02)
    tick_on_read: bool = setting(True)


@dataclass(frozen=True)
class ContextGraphConfig:
    edges: MemoryEdgesConfig = _nested(MemoryEdgesConfig)
    retrieval: MemoryRetrievalConfig = _nested(MemoryRetrievalConfig)
    decay: MemoryDecayConfig = _nested(MemoryDecayConfig)


@dataclass(frozen=True)
class MemoryConfig:
    # add/search/get_all need one of user_id, agent_id, run_id, tenant_id (as in mem0)
    require_scope: bool = setting(True)
    mention_entities: bool = setting(True)  # a memory naming a knowledge-graph entity is linked to it
    max_text_chars: int = setting(20_000, low=1, high=10**9)
    context_graph: ContextGraphConfig = _nested(ContextGraphConfig)


@dataclass(frozen=True)
class LLMConfig:
    TEMPLATE_HEADER: ClassVar[str] = "any OpenAI-compatible chat-completions server; key from OPENAI_API_KEY"
    base_url: str = setting("", "e.g. \"http://localhost:11434/v1\" (Ollama); default GRAPHMEM_OPENAI_BASE_URL",
                            template=True)
    model: str = setting("", template=True)
    timeout: float = setting(60.0, "seconds one request may take, its whole answer included", low=0.0,
                             high=86_400.0, low_open=True)
    max_concurrency: int = setting(4, low=1, high=1024)
    requests_per_minute: int = setting(0, low=0, high=10**9)


# Table name -> section class, in config.toml order.
SECTIONS: dict[str, type] = {
    "chunking": ChunkingConfig, "graph": GraphConfig, "ontology": OntologyConfig, "store": StoreConfig,
    "ingest": IngestConfig, "embeddings": EmbeddingsConfig, "search": SearchSettings, "skills": SkillsConfig,
    "wiki": WikiConfig, "memory": MemoryConfig, "llm": LLMConfig,
}
