"""Configuration: defaults < ``config.toml`` < environment < arguments.

A knowledge base folder holds ``config.toml``. Any key can be overridden from the
environment as ``GRAPHMEM_<SECTION>__<KEY>`` (e.g. ``GRAPHMEM_GRAPH__MAX_DEPTH=3``) and from
code with ``graphmem.open(home, config={"graph": {"max_depth": 3}})``.
"""

from __future__ import annotations

import copy
import json
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import InvalidInput
from .ontology import Ontology

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = ["DEFAULTS", "Config", "load_config", "DEFAULT_CONFIG_TOML", "set_config_value"]

DEFAULTS: dict[str, dict[str, Any]] = {
    "chunking": {"size": 500, "overlap": 100},
    "graph": {
        "min_confidence": 0.6,
        "max_depth": 2,
        "max_nodes": 50,
        "max_edges": 200,
        "max_seeds": 10,
        "max_evidence_per_item": 3,
        "max_evidence_chunks": 20,
    },
    "ontology": {
        "max_entity_types": 50,
        "type_synonyms": {},
        "relation_synonyms": {},
        "inverse_relations": {},
        "opposite_relations": {},
    },
    "store": {"busy_timeout": 30.0},
    "ingest": {
        "extractor": "offline",
        "max_mentions_per_entity": 50,
        "max_file_mb": 20.0,
        "max_bulk_file_mb": 2048.0,
        "max_record_chars": 5_000_000,
        "batch_size": 64,
        "workers": 2,
        "readers": {},
    },
    "embeddings": {
        # SPEC: model2vec:<hub id or folder> | sentence-transformers:<id or folder> | openai:<model> | none
        "model": "model2vec:minishlab/potion-retrieval-32M",
        "embed_entities": True,
        "embed_relations": True,  # "subject relation object" facts, matched against the query
        "device": "",
        "base_url": "",
        "batch_size": 128,
        # above this many vectors of a kind, search uses an HNSW index (extra 'ann': usearch);
        # -1 keeps exact search always
        "ann_threshold": 200_000,
    },
    "search": {"preset": "auto"},
    "skills": {
        "related_weight": 1.0,
        "sibling_weight": 0.3,
        "sibling_max": 8,  # sibling edges per skill (the most similar ones in big categories)
        "similar_min": 0.6,  # cosine for a 'similar' edge
        "similar_top_k": 5,
        "mentions_weight": 0.5,
        "top_k": 8,
        "return_all_factor": 2.5,  # with <= top_k * this many skills, retrieval returns them all
        "max_skill_kb": 1024,  # a bigger SKILL.md is not read (the largest public one is 294 KB)
    },
    "wiki": {
        "auto_pages": True,  # summary + entity pages from every ingest
        "regenerate": "ingest",  # ingest: with each ingest | deferred: before the next wiki use, at close
        "entity_min_documents": 2,  # an entity gets a page once it has a relation or this many documents
        "max_relations": 15,  # per entity page (strongest first)
        "max_documents": 10,  # per entity page (first naming it first)
        "max_claims": 50,  # per summary page
        "max_entities": 100,  # per summary page
        "max_backlinks": 10,  # "See also" summary pages per entity page
        "index_inline_max": 50,  # index.md lists a category's pages inline up to this many, else its shards
        "autosync_interval": 2.0,  # seconds between full re-scans before search (0: every time)
        "bulk_flush_docs": 5000,  # bulk ingest regenerates generated pages every N documents and at the end
        "stub_category": "topic",
    },
    "memory": {
        # add/search/get_all need one of user_id, agent_id, run_id, tenant_id (as in mem0)
        "require_scope": True,
        "mention_entities": True,  # a memory naming a knowledge-graph entity is linked to it
        "max_text_chars": 20_000,
        # ContextKit's field names and defaults, so that its settings carry over.
        "context_graph": {
            "edges": {
                "enable_reply_to": True,
                "enable_temporal_next": True,
                "enable_document_link": True,
                "enable_topic_similar": True,
                "topic_top_k": 5,
                "topic_min_similarity": 0.75,
                "reply_to_window_seconds": 1800.0,
                "llm": {
                    "enabled": False,
                    "max_pairs_per_insert": 3,
                    "min_topic_similarity": 0.80,
                    "min_confidence": 0.60,
                    "daily_token_budget": 20_000,
                    "cooldown_seconds": 3600.0,
                },
            },
            "retrieval": {
                "enabled": True,
                "seed_top_k": 10,
                "expansion_depth": 2,
                "max_candidates": 50,
                "edge_weight_floor": 0.1,
                "alpha_dense": 0.55,
                "beta_bm25": 0.15,
                "gamma_graph": 0.30,
                "algorithm": "bfs",
                "ppr_damping": 0.85,
                "delta_personal": 0.0,
                "epsilon_frequency": 0.0,
                "zeta_success": 0.0,
            },
            "decay": {
                "enabled": True,
                "half_life_days": 30.0,
                "min_edge_weight": 0.05,
                "min_node_relevance": 0.02,
                "tick_on_read": True,
            },
        },
    },
    "llm": {
        "base_url": "",
        "model": "",
        "timeout": 60.0,
        "max_concurrency": 4,
        "requests_per_minute": 0,
    },
}

DEFAULT_CONFIG_TOML = """\
# graphmem knowledge base configuration.
# Precedence: argument > environment (GRAPHMEM_<SECTION>__<KEY>) > this file > defaults.

[chunking]
size = 500        # characters per chunk; chunks end at sentence or word boundaries
overlap = 100     # characters shared by consecutive chunks

[graph]
min_confidence = 0.6   # relations below this are skipped and reported
max_depth = 2          # BFS depth for query()
max_nodes = 50         # subgraph size cap for query()

[ontology]
max_entity_types = 50
# Extra synonyms, merged over the Mini Context Graph defaults:
# [ontology.type_synonyms]
# microservice = "software"
# [ontology.relation_synonyms]
# "is powered by" = "uses"
# [ontology.inverse_relations]   # phrase -> relation, with source and target swapped
# "is hosted on" = "hosts"

[store]
busy_timeout = 30.0   # seconds a writer waits for another process's write lock

[ingest]
extractor = "offline"   # offline | llm | none (agent-supplied entities/relations always win)
max_file_mb = 20.0      # larger single documents are skipped with a reason

[embeddings]
# model2vec:<hub id or folder> (default; downloaded on first use where the network allows),
# sentence-transformers:<id or folder>, openai:<model> (GRAPHMEM_OPENAI_BASE_URL, OPENAI_API_KEY)
# or none. Env: GRAPHMEM_EMBED_MODEL. Changing it on a filled knowledge base needs `graphmem reindex`.
model = "model2vec:minishlab/potion-retrieval-32M"

[search]
preset = "auto"         # auto (contextual embedder: facts+feedback, or feedback on a sparse graph; else default) | default | facts | feedback | facts+feedback | bm25 | dense | rrf | hybrid | bfs | ppr

[wiki]
auto_pages = true       # write a summary page per document and a page per entity on every ingest

[llm]                   # any OpenAI-compatible chat-completions server; key from OPENAI_API_KEY
base_url = ""           # e.g. "http://localhost:11434/v1" (Ollama); default GRAPHMEM_OPENAI_BASE_URL
model = ""
"""


def _merge(base: dict[str, Any], override: Mapping[str, Any], where: str) -> None:
    for key, value in override.items():
        if key not in base:
            raise InvalidInput(
                f"unknown config key '{where}{key}'; known keys: {', '.join(sorted(base))}"
            )
        if isinstance(base[key], dict):
            if not isinstance(value, Mapping):
                raise InvalidInput(f"config key '{where}{key}' must be a table, got {type(value).__name__}")
            if key.endswith(("synonyms", "relations")) or key == "readers":
                for k, v in value.items():
                    if not isinstance(v, str):
                        raise InvalidInput(f"config key '{where}{key}.{k}' must be a string")
                base[key].update(value)
            else:
                _merge(base[key], value, f"{where}{key}.")
        else:
            base[key] = _coerce(value, base[key], f"{where}{key}")


def _coerce(value: Any, default: Any, name: str) -> Any:
    kind = type(default)
    try:
        if kind is bool:
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            return bool(value)
        if kind is int and isinstance(value, float) and not value.is_integer():
            raise ValueError(value)
        if isinstance(value, bool) and kind in (int, float):
            raise ValueError(value)
        return kind(value)
    except (TypeError, ValueError):
        raise InvalidInput(
            f"config key '{name}' must be {kind.__name__}, got {value!r}"
        ) from None


# -- validation of numbers: finite, within a sane range, and per key where it matters ---------

_MAX_NUMBER = 1e12  # no setting needs more; past it arithmetic overflows (busy_timeout * 1000 ...)

# (section, key) -> (low, high, low_inclusive): values outside are refused, naming the key.
_RANGES: dict[tuple[str, str], tuple[float, float, bool]] = {
    ("store", "busy_timeout"): (0.0, 86_400.0, False),
    ("chunking", "size"): (50, 10_000_000, True),
    ("chunking", "overlap"): (0, 10_000_000, True),
    ("ingest", "max_mentions_per_entity"): (0, 10_000_000, True),
    ("ingest", "max_file_mb"): (0.0, 1_048_576.0, False),
    ("ingest", "max_bulk_file_mb"): (0.0, 1_048_576.0, False),
    ("ingest", "max_record_chars"): (1, 10**10, True),
    ("ingest", "batch_size"): (1, 1_000_000, True),
    ("ingest", "workers"): (1, 1024, True),
    ("embeddings", "batch_size"): (1, 1_000_000, True),
    ("wiki", "autosync_interval"): (0.0, 86_400.0, True),
    ("wiki", "bulk_flush_docs"): (1, 10**9, True),
    ("memory", "max_text_chars"): (1, 10**9, True),
    ("llm", "timeout"): (0.0, 86_400.0, False),
    ("llm", "max_concurrency"): (1, 1024, True),
    ("llm", "requests_per_minute"): (0, 10**9, True),
}


def _check_numbers(table: Mapping[str, Any], where: str) -> None:
    """Every number in the configuration is finite and at most 1e12 in size."""
    for key, value in table.items():
        if isinstance(value, Mapping):
            _check_numbers(value, f"{where}{key}.")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value) or abs(value) > _MAX_NUMBER:
                section, _, name = f"{where}{key}".rpartition(".")
                raise InvalidInput(f"config key [{section}] {name}: {value!r} is not a usable number "
                                   f"(must be finite and at most {_MAX_NUMBER:g} in size)")


def _check_ranges(data: Mapping[str, Mapping[str, Any]]) -> None:
    for (section, key), (low, high, low_inclusive) in _RANGES.items():
        value = data.get(section, {}).get(key)
        if value is None:
            continue
        if value > high or value < low or (value == low and not low_inclusive):
            bound = f">= {low:g}" if low_inclusive else f"> {low:g}"
            raise InvalidInput(f"config key [{section}] {key}: {value!r} is out of range "
                               f"(must be {bound} and <= {high:g})")
    size, overlap = data["chunking"]["size"], data["chunking"]["overlap"]
    if overlap >= size // 2:  # the chunker's own rule, checked on open rather than at the first ingest
        raise InvalidInput(f"config key [chunking] overlap: {overlap!r} must be less than half of "
                           f"[chunking] size ({size // 2})")


class Config:
    """Resolved configuration of one knowledge base (read-only after construction)."""

    def __init__(self, data: dict[str, dict[str, Any]], origins: Mapping[str, str] | None = None) -> None:
        self.data = data
        _check_numbers(data, "")
        _check_ranges(data)
        # "section.key" -> "file" | "env" | "argument" (absent: default), for the key rule (trust.py)
        self.origins = dict(origins or {})
        g = data["graph"]
        if not 0.0 <= g["min_confidence"] <= 1.0:
            raise InvalidInput("config key 'graph.min_confidence' must be within [0, 1]")
        for key in ("max_depth", "max_nodes", "max_seeds"):
            if g[key] < 0:
                raise InvalidInput(f"config key 'graph.{key}' must not be negative")
        if data["wiki"]["regenerate"] not in ("ingest", "deferred"):
            raise InvalidInput("config key 'wiki.regenerate' must be 'ingest' or 'deferred'")
        o = data["ontology"]
        try:
            self.ontology = Ontology(
                o["type_synonyms"],
                o["relation_synonyms"],
                o["inverse_relations"],
                o["opposite_relations"],
                max_entity_types=o["max_entity_types"],
            )
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None

    def __getitem__(self, section: str) -> dict[str, Any]:
        return self.data[section]

    def origin(self, section: str, key: str) -> str:
        """Where ``[section] key`` was set last: file, env, argument or default."""
        return self.origins.get(f"{section}.{key}", "default")

    def to_dict(self) -> dict[str, Any]:
        """The resolved configuration as plain data."""
        return copy.deepcopy(self.data)


def load_config(
    home: Path | None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Resolve the configuration for the knowledge base at ``home``."""
    data = copy.deepcopy(DEFAULTS)
    origins: dict[str, str] = {}
    if home is not None:
        path = home / "config.toml"
        if path.exists():
            try:
                with path.open("rb") as fh:
                    file_data = tomllib.load(fh)
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise InvalidInput(f"{path}: not valid TOML ({exc}); fix or delete the file") from None
            _merge(data, file_data, "")
            _record_origins(origins, file_data, "file")
    env = os.environ if environ is None else environ
    env_data: dict[str, dict[str, Any]] = {}
    for name, value in env.items():
        if not name.startswith("GRAPHMEM_") or "__" not in name:
            continue
        section, _, key = name[len("GRAPHMEM_"):].lower().partition("__")
        if section not in data or isinstance(data[section].get(key), dict):
            continue
        if key not in data[section]:
            raise InvalidInput(f"environment variable {name}: unknown config key '{section}.{key}'")
        env_data.setdefault(section, {})[key] = value
    # The issue-named shortcut for the one embedding setting.
    if env.get("GRAPHMEM_EMBED_MODEL"):
        env_data.setdefault("embeddings", {})["model"] = env["GRAPHMEM_EMBED_MODEL"]
    _merge(data, env_data, "")
    _record_origins(origins, env_data, "env")
    if overrides:
        _merge(data, json.loads(json.dumps(overrides)), "")
        _record_origins(origins, overrides, "argument")
    return Config(data, origins)


def _record_origins(origins: dict[str, str], source: Mapping[str, Any], origin: str) -> None:
    for section, table in source.items():
        if isinstance(table, Mapping):
            for key in table:
                origins[f"{section}.{key}"] = origin


def set_config_value(home: Path, section: str, key: str, value: str) -> None:
    """Set one string value in ``<home>/config.toml``, keeping the rest of the file (comments
    included) as it is; the file is replaced atomically."""
    if section not in DEFAULTS or key not in DEFAULTS[section]:
        raise InvalidInput(f"unknown config key '{section}.{key}'")
    path = home / "config.toml"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    rendered = f"{key} = {json.dumps(value)}"
    start = next((i for i, ln in enumerate(lines) if ln.strip() == f"[{section}]"), None)
    if start is None:
        lines += ["", f"[{section}]", rendered]
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
        hit = next((i for i in range(start + 1, end)
                    if lines[i].split("=", 1)[0].strip() == key and not lines[i].lstrip().startswith("#")), None)
        if hit is None:
            lines.insert(start + 1, rendered)
        else:
            lines[hit] = rendered
    tmp = path.with_name(".config.toml.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
