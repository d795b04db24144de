"""An extraction naming an entity (or a relation end) with an empty or whitespace-only string.

Such an entity used to pass validation; every empty name keys the same node id but gets no
name row, so two of them in one ingest batch collided at commit (``UNIQUE constraint failed:
nodes.id; nothing was written``) and stopped the whole run. Validation drops the item with a
warning naming its field, like the other unacceptable items it drops; a JSONL record whose
entity list holds an empty name is malformed input and is refused as a whole (InvalidInput
naming the field and the line), like the other malformed records; the rest is written. An
``Extraction`` object handed to ``kb.ingest`` with such a name is refused whole (InvalidInput),
as ``kb.ingest_with_content`` refuses the same fault in raw lists, and nothing is written.
"""

from __future__ import annotations

import json

import pytest

import graphmem
from graphmem.errors import InvalidInput
from graphmem.extraction import EntitySpec, Extraction, RelationSpec
from graphmem.ingest.extractors.base import validate_extraction


class EmptyNameExtractor:
    """Each document: its first word as an entity, plus the blank names and relations given."""

    name = "blank"

    def __init__(self, blanks: tuple[str, ...] = ("",), relations: tuple[RelationSpec, ...] = ()) -> None:
        self.blanks = blanks
        self.relations = relations

    def extract(self, doc):
        word = doc.text.split()[0]
        ents = (EntitySpec(word, "component", word),) + tuple(EntitySpec(b) for b in self.blanks)
        return Extraction(ents, self.relations)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in (("a.txt", "Alpha feeds Beta."), ("b.txt", "Beta feeds Gamma."), ("c.txt", "Gamma ends.")):
        (root / name).write_text(text)
    return root


def _entity_names(kb) -> list[str]:
    return sorted(n.name for n in kb.graph.list(limit=1000))


@pytest.mark.parametrize("blanks", [("",), ("   ",), ("\t\n", "\u3000", "")])
def test_empty_entity_names_from_an_extractor_are_dropped_and_every_document_written(folder, tmp_path, blanks):
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([folder], extractor=EmptyNameExtractor(blanks))
        assert (s.added, s.failed, s.skipped) == (3, [], [])
        assert {d.doc_id for d in kb.documents.list()} == {"docs/a.txt", "docs/b.txt", "docs/c.txt"}
        assert _entity_names(kb) == ["Alpha", "Beta", "Gamma"]
        for doc in ("docs/a.txt", "docs/b.txt", "docs/c.txt"):
            for i in range(1, len(blanks) + 1):
                assert f"{doc}: blank extractor: entities[{i}].name: empty; dropped (an entity needs a name)" \
                    in s.warnings
        assert len(s.warnings) == 3 * len(blanks)


def test_a_second_run_after_empty_names_still_writes(folder, tmp_path):
    # The empty-name node of the first run must not exist to collide with the next document's.
    with graphmem.open(tmp_path / "kb") as kb:
        kb.ingest_paths([folder], extractor=EmptyNameExtractor())
        (folder / "d.txt").write_text("Delta starts.")
        s = kb.ingest_paths([folder], extractor=EmptyNameExtractor())
        assert (s.added, s.unchanged, s.failed) == (1, 3, [])
        assert _entity_names(kb) == ["Alpha", "Beta", "Delta", "Gamma"]


def test_relations_with_an_empty_end_or_type_are_dropped_with_the_field_named(folder, tmp_path):
    rels = (
        RelationSpec("", "Alpha", "feeds"),
        RelationSpec("Alpha", "  ", "feeds"),
        RelationSpec("Alpha", "Alpha", " "),
    )
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([folder], extractor=EmptyNameExtractor(("", " "), rels))
        assert (s.added, s.failed) == (3, [])
        assert s.relations == 0
        assert kb.graph.get_entity("Alpha")["relations"] == []
        for doc in ("docs/a.txt", "docs/b.txt", "docs/c.txt"):
            assert f"{doc}: blank extractor: relations[0].source: empty; dropped (a relation needs a source)" \
                in s.warnings
            assert f"{doc}: blank extractor: relations[1].target: empty; dropped (a relation needs a target)" \
                in s.warnings
            assert f"{doc}: blank extractor: relations[2].type: empty; dropped (a relation needs a type)" \
                in s.warnings


def test_a_good_relation_next_to_empty_names_is_kept(folder, tmp_path):
    rels = (RelationSpec("", "", "feeds"), RelationSpec("Alpha", "Beta", "feeds", 1.0, "Alpha feeds Beta"))
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([folder / "a.txt"], extractor=EmptyNameExtractor(("", "Beta"), rels))
        assert (s.added, s.relations) == (1, 1)
        [rel] = kb.graph.get_entity("Alpha")["relations"]
        assert (rel["type"], rel["target"]) == ("feeds", "Beta")
        assert "a.txt: blank extractor: relations[0].source: empty; dropped (a relation needs a source)" \
            in s.warnings


def test_validate_extraction_keeps_the_rest_of_the_document():
    ex = Extraction(
        (EntitySpec("Kafka", supporting_text="Kafka"), EntitySpec(""), EntitySpec("Flink", supporting_text="Flink")),
        (RelationSpec("Kafka", "Flink", "feeds", 0.9, "Kafka feeds Flink"), RelationSpec("Kafka", "", "feeds")),
    )
    valid, warnings = validate_extraction(ex, "Kafka feeds Flink.", source="x")
    assert [e.name for e in valid.entities] == ["Kafka", "Flink"]
    assert [(r.source, r.target) for r in valid.relations] == [("Kafka", "Flink")]
    assert warnings == ["x: entities[1].name: empty; dropped (an entity needs a name)",
                        "x: relations[1].target: empty; dropped (a relation needs a target)"]


def test_jsonl_record_with_an_empty_entity_name_is_refused_and_the_others_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    records = [
        {"id": "good", "text": "Alpha feeds Beta.", "entities": [{"name": "Alpha", "supporting_text": "Alpha"}]},
        {"id": "bad1", "text": "Beta text.", "entities": [{"name": "Beta"}, {"name": "Gamma"}, {"name": ""}]},
        {"id": "bad2", "text": "Gamma text.", "entities": [{"name": "Gamma"}],
         "relations": [{"source": " ", "target": "Gamma", "type": "x"}]},
        {"id": "bad3", "text": "Delta text.", "entities": ["  "]},
        {"id": "also-good", "text": "Epsilon text.", "entities": [{"name": "Epsilon"}]},
    ]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([tmp_path / "r.jsonl"], extractor="none")
        assert (s.added, s.failed) == (2, [])
        assert {d.doc_id for d in kb.documents.list()} == {"good", "also-good"}
        assert _entity_names(kb) == ["Alpha", "Epsilon"]
        reasons = {(k.path, k.line): k.reason for k in s.skipped}
        assert reasons == {
            ("r.jsonl", 2): "entities[2].name: empty; give a non-empty 'name'",
            ("r.jsonl", 3): "relations[0].source: empty; give a non-empty 'source'",
            ("r.jsonl", 4): "entities[0]: empty entity name",
        }


def test_ingest_with_content_refuses_an_empty_name_and_writes_nothing(tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        with pytest.raises(InvalidInput, match=r"entities\[1\]\.name: empty"):
            kb.ingest_with_content("d1", "T", "s", "Alpha text.", [{"name": "Alpha"}, {"name": " "}])
        with pytest.raises(InvalidInput, match=r"relations\[0\]\.target: empty"):
            kb.ingest_with_content("d1", "T", "s", "Alpha text.", [{"name": "Alpha"}],
                                   [{"source": "Alpha", "target": "", "type": "x"}])
        assert kb.documents.list() == [] and _entity_names(kb) == []
        res = kb.ingest_with_content("d1", "T", "s", "Alpha text.", [{"name": "Alpha"}])
        assert res["status"] == "added" and _entity_names(kb) == ["Alpha"]


@pytest.mark.parametrize(("extraction", "field"), [
    (Extraction((EntitySpec("Alpha"), EntitySpec(" \t"))), r"entities\[1\]\.name: empty; give a non-empty 'name'"),
    (Extraction((EntitySpec("Alpha"),), (RelationSpec("Alpha", "", "x"),)),
     r"relations\[0\]\.target: empty; give a non-empty 'target'"),
    (Extraction((EntitySpec("Alpha"),), (RelationSpec("Alpha", "Alpha", "  "),)),
     r"relations\[0\]\.type: empty; give a non-empty 'type'"),
])
def test_kb_ingest_refuses_an_extraction_object_with_an_empty_name(tmp_path, extraction, field):
    # Two documents in a row used to store a nameless node, then fail with a UNIQUE BackendError.
    with graphmem.open(tmp_path / "kb") as kb:
        for doc_id in ("d1", "d2"):
            with pytest.raises(InvalidInput, match=field):
                kb.ingest(doc_id, "T", "s", "Alpha text.", extraction)
        assert kb.documents.list() == [] and _entity_names(kb) == []
        res = kb.ingest("d1", "T", "s", "Alpha text.", Extraction((EntitySpec("Alpha"),)))
        assert res.status == "added" and _entity_names(kb) == ["Alpha"]
