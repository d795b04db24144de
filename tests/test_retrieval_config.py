"""One SearchConfig: a sub-config per kind, read from the knowledge base's config in one place."""

from __future__ import annotations

import dataclasses

import pytest

import graphmem
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT
from graphmem.errors import InvalidInput
from graphmem.retrieval.config import (
    PRESETS,
    SKILL_PRESETS,
    GraphQueryConfig,
    MemoryConfig,
    PassageConfig,
    SearchConfig,
    SkillConfig,
    search_config,
)
from graphmem.skills.retrieve import SkillSearchConfig


def test_search_config_reads_every_section_it_needs(tmp_path) -> None:
    overrides = {"search": {"preset": "bm25"}, "graph": {"max_depth": 3, "max_nodes": 7},
                 "memory": {"mention_entities": False,
                            "context_graph": {"retrieval": {"alpha_dense": 0.9, "algorithm": "ppr"},
                                              "decay": {"half_life_days": 12.0}}}}
    with graphmem.open(tmp_path / "kb", config=overrides) as kb:
        cfg = search_config(kb.config)
    assert cfg.preset == "bm25"
    assert (cfg.graph.max_depth, cfg.graph.max_nodes, cfg.graph.min_confidence) == (3, 7, 0.6)
    m = cfg.memories
    assert (m.alpha_dense, m.algorithm, m.half_life_days, m.mention_entities) == (0.9, "ppr", 12.0, False)
    assert (m.beta_bm25, m.seed_top_k) == (0.15, 10)  # the rest are the defaults
    assert cfg.passages == PRESETS["default"] and cfg.skills == SKILL_PRESETS["default"]


def test_defaults_of_the_sub_configs_are_the_config_files_defaults(tmp_path) -> None:
    with graphmem.open(tmp_path / "kb") as kb:
        cfg = search_config(kb.config)
    assert cfg.graph == GraphQueryConfig() and cfg.memories == MemoryConfig() and cfg.preset == "auto"


def test_a_search_config_passed_to_search_uses_its_passage_part(tmp_path) -> None:
    with graphmem.open(tmp_path / "kb") as kb:
        kb.ingest_with_content("doc_1", "System Crash Analysis", "crash.txt", QUICKSTART_TEXT,
                               QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
        by_name = kb.search("memory leaks", preset="bm25").to_dict()
        by_config = kb.search("memory leaks", config=SearchConfig(passages=PRESETS["bm25"])).to_dict()
        by_passages = kb.search("memory leaks", config=PRESETS["bm25"]).to_dict()
        assert by_name == by_config == by_passages and by_name["hits"]
        assert by_name["hits"][0]["parts"]["graph"] == 0.0  # bm25: no walk
        walked = kb.search("memory leaks", config=SearchConfig(), strategy="bfs").to_dict()
        assert walked["hits"][0]["parts"]["graph"] > 0.0
        with pytest.raises(InvalidInput, match="config"):
            kb.search("memory leaks", config=42)  # type: ignore[arg-type]


def test_replace_names_unknown_settings() -> None:
    assert PassageConfig().replace(alpha=0.1).alpha == 0.1
    with pytest.raises(InvalidInput, match=r"unknown search setting\(s\) \['nope'\]"):
        PassageConfig().replace(nope=1)
    with pytest.raises(InvalidInput, match=r"unknown skills search setting\(s\) \['nope'\]"):
        SkillConfig().replace(nope=1)
    assert SkillSearchConfig is SkillConfig  # the name the skills face and users know
    assert {f.name for f in dataclasses.fields(SearchConfig)} == {"passages", "graph", "memories", "skills",
                                                                  "preset"}
