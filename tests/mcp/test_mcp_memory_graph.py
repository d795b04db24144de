"""MemoryGraph in process: what the MCP round trips do not reach cheaply."""

from __future__ import annotations

import pytest

import graphmem
from graphmem.errors import BackendError, InvalidInput
from graphmem.mcp import memory_graph
from graphmem.mcp.memory_graph import MemoryGraph


def test_read_graph_says_when_it_is_cut_and_search_looks_past_the_cut(kb: graphmem.KnowledgeBase,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_graph, "MAX_GRAPH_ENTITIES", 2)
    graph = MemoryGraph(kb)
    graph.create_entities([{"name": n, "entityType": "thing", "observations": [f"{n} is here"]}
                           for n in ("alpha", "beta", "zeta")])
    full = graph.read_graph()
    assert full["truncated"] is True and [e["name"] for e in full["entities"]] == ["alpha", "beta"]
    assert [e["name"] for e in graph.search_nodes("zeta is")["entities"]] == ["zeta"]


def test_an_observation_deleted_stays_in_the_previous_version(kb: graphmem.KnowledgeBase) -> None:
    graph = MemoryGraph(kb)
    graph.create_entities([{"name": "Kim", "entityType": "person", "observations": ["likes jazz", "plays chess"]}])
    graph.delete_observations([{"entityName": "Kim", "observations": ["likes jazz"]}])
    node = kb.graph.find("Kim")
    assert node is not None
    doc_id = memory_graph.OBSERVATIONS_PREFIX + node.id
    assert kb.documents.get(doc_id).content == "plays chess"
    assert kb.documents.get(doc_id, version=1).content == "likes jazz\nplays chess"
    obs = kb.documents.get(doc_id).metadata["observations"]
    assert [o["text"] for o in obs] == ["plays chess"] and obs[0]["at"]  # timestamp kept from the first add
    assert kb.documents.get(doc_id).source == "agent"
    graph.delete_observations([{"entityName": "Kim", "observations": ["plays chess"]}])
    assert [d.doc_id for d in kb.documents.list()] == []  # no observations left: no document
    assert kb.graph.find("Kim") is not None  # the entity stays


def test_bad_arguments_name_the_field_and_write_nothing(kb: graphmem.KnowledgeBase) -> None:
    graph = MemoryGraph(kb)
    with pytest.raises(InvalidInput, match=r"entities\[1\]\.entityType"):
        graph.create_entities([{"name": "ok", "entityType": "x", "observations": []}, {"name": "bad"}])
    with pytest.raises(InvalidInput, match=r"observations\[0\]\.contents\[1\]"):
        graph.add_observations([{"entityName": "ok", "contents": ["a", ""]}])
    assert kb.graph.list() == [] and kb.events.list() == []


def _fail_provenance(kb: graphmem.KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the observations document's write fail (after the entity was written in the same call)."""
    def refuse(*_a: object, **_k: object) -> None:
        raise BackendError("disk I/O error (injected by the test)")
    monkeypatch.setattr(kb.store, "insert_provenance", refuse)


def test_a_failed_create_entities_leaves_nothing_and_a_retry_repairs(kb: graphmem.KnowledgeBase,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    graph = MemoryGraph(kb)
    with monkeypatch.context() as m:
        _fail_provenance(kb, m)
        with pytest.raises(BackendError):
            graph.create_entities([{"name": "Ada", "entityType": "person", "observations": ["wrote notes"]}])
    assert kb.graph.find("Ada") is None  # no entity without its observations
    assert kb.documents.list() == []
    created = graph.create_entities([{"name": "Ada", "entityType": "person", "observations": ["wrote notes"]}])
    assert [(e["name"], e["observations"]) for e in created] == [("Ada", ["wrote notes"])]
    assert graph.open_nodes(["Ada"])["entities"][0]["observations"] == ["wrote notes"]


def test_a_failed_delete_entities_keeps_the_entity_with_its_observations(kb: graphmem.KnowledgeBase,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    graph = MemoryGraph(kb)
    graph.create_entities([{"name": "Bo", "entityType": "person", "observations": ["drives the van"]}])

    def refuse(*_a: object, **_k: object) -> None:
        raise BackendError("disk I/O error (injected by the test)")

    with monkeypatch.context() as m:
        m.setattr(kb.store, "delete_node", refuse)
        with pytest.raises(BackendError):
            graph.delete_entities(["Bo"])
    assert graph.open_nodes(["Bo"])["entities"][0]["observations"] == ["drives the van"]
    graph.delete_entities(["Bo"])
    assert graph.open_nodes(["Bo"])["entities"] == [] and kb.documents.list() == []
