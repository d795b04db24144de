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
