"""Config precedence: argument > environment > config.toml > defaults."""

from __future__ import annotations

import pytest

import graphmem
from graphmem.config import load_config


def test_defaults(tmp_path):
    cfg = load_config(tmp_path, environ={})
    assert cfg["chunking"] == {"size": 500, "overlap": 100}
    assert (cfg["graph"]["min_confidence"], cfg["graph"]["max_depth"], cfg["graph"]["max_nodes"]) == (0.6, 2, 50)


def test_precedence(tmp_path):
    (tmp_path / "config.toml").write_text("[graph]\nmax_depth = 3\nmax_nodes = 20\n[chunking]\nsize = 300\n")
    cfg = load_config(tmp_path, overrides={"graph": {"max_nodes": 7}},
                      environ={"GRAPHMEM_GRAPH__MAX_DEPTH": "1", "GRAPHMEM_HOME": "/elsewhere"})
    assert cfg["graph"]["max_depth"] == 1  # env beats file
    assert cfg["graph"]["max_nodes"] == 7  # argument beats file
    assert cfg["chunking"]["size"] == 300  # file beats default


def test_file_synonyms_extend_ontology(tmp_path):
    (tmp_path / "config.toml").write_text(
        '[ontology.type_synonyms]\nmicroservice = "software"\n[ontology.inverse_relations]\n"is hosted on" = "hosts"\n'
    )
    cfg = load_config(tmp_path, environ={})
    assert cfg.ontology.normalize_type("Microservice") == "software"
    assert cfg.ontology.normalize_relation("is hosted on").swapped


@pytest.mark.parametrize("toml,message", [
    ("[graph\n", "not valid TOML"),
    ("[graph]\nmax_depth = 'deep'\n", "graph.max_depth' must be int"),
    ("[graph]\nmax_depth = 2.5\n", "graph.max_depth"),
    ("[graph]\nmin_confidence = 2\n", "min_confidence"),
    ("[nope]\nx = 1\n", "unknown config key 'nope'"),
    ("[ontology]\ntype_synonyms = 3\n", "must be a table"),
    ("[ontology.type_synonyms]\nbug = 3\n", "must be a string"),
])
def test_bad_config_file(tmp_path, toml, message):
    (tmp_path / "config.toml").write_text(toml)
    with pytest.raises(graphmem.InvalidInput, match=message):
        load_config(tmp_path, environ={})


def test_bad_env_value(tmp_path):
    with pytest.raises(graphmem.InvalidInput, match="graph.max_nodes"):
        load_config(tmp_path, environ={"GRAPHMEM_GRAPH__MAX_NODES": "many"})
    with pytest.raises(graphmem.InvalidInput, match="GRAPHMEM_GRAPH__DEPTH"):
        load_config(tmp_path, environ={"GRAPHMEM_GRAPH__DEPTH": "3"})


def test_open_writes_default_config(tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        text = (kb.home / "config.toml").read_text()
    assert "[chunking]" in text and "busy_timeout" in text
    assert (tmp_path / "kb" / "wiki").is_dir()


def test_chunk_size_from_config(tmp_path):
    text = " ".join(f"word{i}" for i in range(300))
    with graphmem.open(tmp_path / "kb", config={"chunking": {"size": 200, "overlap": 20}}) as kb:
        kb.documents.add(text, doc_id="d")
        assert max(len(c.text) for c in kb.documents.chunks("d")) <= 200
        assert len(kb.documents.chunks("d")) > 8


# -- typed sections ----------------------------------------------------------------------------

import dataclasses  # noqa: E402

import tomllib  # noqa: E402

from graphmem.config import DEFAULT_CONFIG_TOML, DEFAULTS, Config, config_template  # noqa: E402
from graphmem.config_sections import SECTIONS, MemoryDecayConfig  # noqa: E402


def test_sections_are_typed_attributes(tmp_path):
    cfg = load_config(tmp_path, overrides={"graph": {"max_depth": 3},
                                           "memory": {"context_graph": {"decay": {"half_life_days": 7}}}},
                      environ={"GRAPHMEM_WIKI__AUTO_PAGES": "off"})
    assert (cfg.graph.max_depth, cfg.graph.max_nodes) == (3, 50)
    assert cfg.wiki.auto_pages is False and cfg.origin("wiki", "auto_pages") == "env"
    assert isinstance(cfg.memory.context_graph.decay, MemoryDecayConfig)
    assert cfg.memory.context_graph.decay.half_life_days == 7.0  # coerced to the declared float
    assert cfg.memory.context_graph.retrieval.alpha_dense == 0.55


def test_sections_are_frozen_and_the_mapping_view_is_read_only(tmp_path):
    cfg = load_config(tmp_path, environ={})
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.graph.max_depth = 9  # type: ignore[misc]
    view = cfg["graph"]
    assert view["max_depth"] == 2 and dict(view) == DEFAULTS["graph"]
    with pytest.raises(TypeError):
        view["max_depth"] = 9  # type: ignore[index]
    with pytest.raises(TypeError):
        cfg["memory"]["context_graph"]["decay"]["enabled"] = False  # type: ignore[index]
    with pytest.raises(TypeError):
        cfg.ontology_settings.type_synonyms["x"] = "y"  # type: ignore[index]
    assert cfg.graph.max_depth == 2
    with pytest.raises(KeyError):
        cfg["nope"]


def test_to_dict_round_trips_through_from_data(tmp_path):
    cfg = load_config(tmp_path, overrides={"ontology": {"type_synonyms": {"microservice": "software"}}}, environ={})
    data = cfg.to_dict()
    assert data["ontology"]["type_synonyms"] == {"microservice": "software"}
    again = Config.from_data(data)
    assert again == cfg and again.ontology.normalize_type("microservice") == "software"
    data["chunking"]["size"] = 999  # a copy: the config did not change
    assert cfg.chunking.size == 500


def test_defaults_are_declared_once_in_the_section_classes():
    assert list(DEFAULTS) == list(SECTIONS)
    assert Config().to_dict() == DEFAULTS
    for name, cls in SECTIONS.items():
        assert DEFAULTS[name] == Config().to_dict()[name] == {
            f.name: DEFAULTS[name][f.name] for f in dataclasses.fields(cls)}


def test_the_template_is_generated_and_holds_only_defaults():
    assert config_template() == DEFAULT_CONFIG_TOML
    parsed = tomllib.loads(DEFAULT_CONFIG_TOML)
    for section, table in parsed.items():
        for key, value in table.items():
            assert DEFAULTS[section][key] == value, f"[{section}] {key}"
    # the comments come from the declarations
    assert "max_depth = 2          # BFS depth for query()" in DEFAULT_CONFIG_TOML
    assert "# sentence-transformers:<id or folder>, openai:<model>" in DEFAULT_CONFIG_TOML
    assert '# "is hosted on" = "hosts"' in DEFAULT_CONFIG_TOML
    assert parsed["embeddings"]["model"] == DEFAULTS["embeddings"]["model"]


def test_a_new_knowledge_base_loads_its_own_template_back(tmp_path):
    graphmem.open(tmp_path / "kb").close()
    cfg = load_config(tmp_path / "kb", environ={})  # the file alone (the test environment sets a model)
    assert cfg == Config()  # the written file restates the defaults
    assert cfg.origins and set(cfg.origins.values()) == {"file"}


@pytest.mark.parametrize("override,message", [
    ({"wiki": {"regenerate": "sometimes"}}, "wiki.regenerate"),
    ({"graph": {"max_depth": -1}}, r"\[graph\] max_depth: -1 is out of range"),
    # settings declared without bounds: below zero is refused too (wiki.max_documents = -5 truncated pages)
    ({"wiki": {"max_documents": -5}}, r"\[wiki\] max_documents: -5 is out of range \(must be >= 0"),
    ({"graph": {"max_edges": -1}}, r"\[graph\] max_edges: -1 is out of range"),
    ({"skills": {"top_k": -2}}, r"\[skills\] top_k: -2 is out of range"),
    ({"memory": {"context_graph": {"retrieval": {"alpha_dense": -0.5}}}},
     r"\[memory.context_graph.retrieval\] alpha_dense: -0.5 is out of range"),
    ({"graph": {"min_confidence": 1.5}}, r"\[graph\] min_confidence"),
    ({"chunking": {"size": 100, "overlap": 60}}, r"\[chunking\] overlap: 60 must be less than half"),
    ({"memory": {"context_graph": {"decay": {"half_life_days": float("inf")}}}},
     r"\[memory.context_graph.decay\] half_life_days"),
    ({"memory": {"context_graph": {"edges": {"nope": 1}}}}, "unknown config key 'memory.context_graph.edges.nope'"),
])
def test_bad_values_name_their_key(tmp_path, override, message):
    with pytest.raises(graphmem.InvalidInput, match=message):
        load_config(tmp_path, overrides=override, environ={})
    with pytest.raises(graphmem.InvalidInput, match=message):
        graphmem.open(tmp_path / "kb", config=override)
    assert not (tmp_path / "kb").exists()  # a refused open creates nothing
