"""Ontology: the Mini Context Graph tables, inverse phrases, the type cap, config extension."""

from __future__ import annotations

import pytest

from graphmem.ontology import Ontology, normalize_label


@pytest.mark.parametrize("raw,canonical", [
    ("Bug", "issue"), ("  DEFECT ", "issue"), ("Server", "infrastructure"), ("host", "infrastructure"),
    ("Database", "storage"), ("API", "interface"), ("Incident", "event"), ("thread", "process"),
    ("Module", "component"), ("admin", "actor"), ("App", "software"), ("idea", "concept"),
    ("Data_Pipeline", "data pipeline"), ("data-pipeline", "data pipeline"), ("", "concept"),
])
def test_entity_types(raw, canonical):
    assert Ontology().normalize_type(raw) == canonical


@pytest.mark.parametrize("raw,canonical,swapped", [
    ("leads to", "causes", False), ("Leads_To", "causes", False), ("triggers", "causes", False),
    ("results-in", "causes", False), ("needs", "depends on", False), ("invokes", "uses", False),
    ("impacts", "affects", False), ("spawns", "creates", False), ("inherits from", "extends", False),
    ("fetches", "reads from", False), ("persists to", "writes to", False), ("links to", "connects to", False),
    ("is part of", "contains", True), ("belongs to", "contains", True), ("lives in", "contains", True),
    ("is caused by", "causes", True), ("is used by", "uses", True), ("contains", "contains", False),
    ("mentors", "mentors", False),
])
def test_relations(raw, canonical, swapped):
    n = Ontology().normalize_relation(raw)
    assert (n.type, n.swapped) == (canonical, swapped)


def test_label_normalisation():
    assert normalize_label("  Depends__ON  ") == "depends on"


def test_user_tables_extend_defaults():
    o = Ontology(type_synonyms={"Microservice": "software"}, relation_synonyms={"is powered by": "uses"},
                 inverse_relations={"is hosted on": "hosts"})
    assert o.normalize_type("microservice") == "software"
    assert o.normalize_type("bug") == "issue"  # defaults kept
    assert o.normalize_relation("is powered by").type == "uses"
    assert o.normalize_relation("is hosted on") == type(o.normalize_relation("x"))("hosts", True)


def test_user_synonym_overrides_inverse_meaning():
    o = Ontology(relation_synonyms={"belongs to": "owned by"})
    assert o.normalize_relation("belongs to").swapped is False


def test_type_cap_maps_to_closest_and_says_so():
    o = Ontology(max_entity_types=3)
    known = ["network error", "person", "storage"]
    chosen, note = o.cap_type("network errors", known)
    assert chosen == "network error"
    assert "cap of 3" in note and "network error" in note
    assert o.cap_type("person", known) == ("person", None)
    assert o.cap_type("new", known[:2]) == ("new", None)


def test_opposites():
    o = Ontology()
    assert o.are_opposite("causes", "prevents") and o.are_opposite("prevents", "causes")
    assert not o.are_opposite("causes", "uses")
