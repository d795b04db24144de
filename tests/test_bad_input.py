"""Bad input gets a clear error naming the field, and the store is unchanged."""

from __future__ import annotations

import json

import pytest

import graphmem
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT, snapshot
from graphmem.extraction import load_extraction_file

GOOD = dict(doc_id="d2", title="t", source="s", raw_content="Disk full errors cause write failures.",
            entities=[{"name": "disk full", "type": "issue"}], relations=[])

BAD_CASES = [
    ({"doc_id": ""}, "doc_id"),
    ({"doc_id": None}, "doc_id"),
    ({"doc_id": 17}, "doc_id"),
    ({"doc_id": "a\x00b"}, "control characters"),
    ({"title": 5}, "title"),
    ({"raw_content": ""}, "empty"),
    ({"raw_content": "   \n"}, "empty"),
    ({"raw_content": b"bytes"}, "raw_content"),
    ({"raw_content": "bin\x00ary"}, "NUL"),
    ({"entities": [{"type": "issue"}]}, r"entities\[0\]\.name: missing"),
    ({"entities": [{"name": "  "}]}, r"entities\[0\]\.name: empty"),
    ({"entities": [{"name": 3}]}, r"entities\[0\]\.name: expected a string"),
    ({"entities": [{"name": "x", "type": ["issue"]}]}, r"entities\[0\]\.type"),
    ({"entities": "disk full"}, "entities: expected a list"),
    ({"entities": [42]}, r"entities\[0\]"),
    ({"relations": [{"source": "disk full", "target": "x"}]}, r"relations\[0\]\.type: missing"),
    ({"relations": [{"source": "disk full", "target": "x", "type": "causes", "confidence": 1.5}]},
     r"relations\[0\]\.confidence: 1.5 is outside \[0, 1\]"),
    ({"relations": [{"source": "disk full", "target": "x", "type": "causes", "confidence": -0.1}]},
     r"relations\[0\]\.confidence"),
    ({"relations": [{"source": "disk full", "target": "x", "type": "causes", "confidence": "high"}]},
     r"relations\[0\]\.confidence: expected a number"),
    ({"relations": [{"source": "disk full", "target": "x", "type": "causes", "confidence": True}]},
     r"relations\[0\]\.confidence"),
    ({"relations": [{"source": "disk full", "target": "x", "type": "causes", "confidence": float("nan")}]},
     r"relations\[0\]\.confidence"),
    ({"relations": {"source": "a"}}, "relations: expected a list"),
]


@pytest.mark.parametrize("change,message", BAD_CASES)
def test_rejected_ingest_changes_nothing(kb, quickstart, change, message):
    before = snapshot(kb)
    args = {**GOOD, **change}
    with pytest.raises(graphmem.InvalidInput, match=message):
        kb.ingest_with_content(**args)
    assert snapshot(kb) == before


def test_metadata_must_be_json(kb, quickstart):
    before = snapshot(kb)
    with pytest.raises(graphmem.InvalidInput, match="metadata of document 'd2' is not JSON-serialisable"):
        kb.ingest_with_content(**GOOD, metadata={"when": object()})
    with pytest.raises(graphmem.InvalidInput, match="metadata: expected an object"):
        kb.ingest_with_content(**GOOD, metadata=[1, 2])
    assert snapshot(kb) == before


def test_failure_mid_operation_rolls_back(kb, quickstart, monkeypatch):
    """A crash after the document, nodes and edges were written leaves none of them."""
    before = snapshot(kb)

    def boom(records):
        raise OSError("disk on fire")

    monkeypatch.setattr(kb.store, "insert_provenance", boom)
    with pytest.raises(OSError):
        kb.ingest_with_content("d2", "t", "s", "A new bug breaks the parser.",
                               [{"name": "parser", "type": "component"}], [])
    monkeypatch.undo()
    assert snapshot(kb) == before
    # and the store is still writable afterwards
    assert kb.ingest_with_content(**GOOD)["status"] == "added"


def test_failure_during_delete_rolls_back(kb, quickstart, monkeypatch):
    before = snapshot(kb)
    monkeypatch.setattr(kb.store, "prune_unsupported", lambda *a: (_ for _ in ()).throw(RuntimeError("x")))
    with pytest.raises(RuntimeError):
        kb.documents.delete("doc_1")
    monkeypatch.undo()
    assert snapshot(kb) == before


@pytest.mark.parametrize("content,message", [
    ("{bad", "not valid JSON"),
    ("[]", "expected a JSON object"),
    ('{"entities": [], "relation": []}', "unknown top-level key"),
    ('{"entities": [{"type": "x"}]}', r"entities\[0\]\.name: missing"),
    ('{"relations": [{"source": "a", "target": "b", "type": "c", "confidence": 2}]}', "outside"),
])
def test_malformed_extraction_file(tmp_path, content, message):
    p = tmp_path / "x.json"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(graphmem.InvalidInput, match=message):
        load_extraction_file(p)


def test_extraction_file_not_utf8(tmp_path):
    p = tmp_path / "x.json"
    p.write_bytes(b"\xff\xfe{}")
    with pytest.raises(graphmem.InvalidInput, match="not UTF-8"):
        load_extraction_file(p)


def test_good_extraction_file_roundtrip(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"entities": QUICKSTART_ENTITIES, "relations": QUICKSTART_RELATIONS}), encoding="utf-8")
    ex = load_extraction_file(p)
    assert ex.to_dict()["relations"][0]["confidence"] == 1.0
    assert [e.name for e in ex.entities] == ["memory leak", "system crash"]


def test_query_must_be_text(kb):
    with pytest.raises(graphmem.InvalidInput, match="query"):
        kb.query(None)
    with pytest.raises(graphmem.InvalidInput, match="query"):
        kb.documents.search(3)


def test_unknown_config_key_is_named(tmp_path):
    with pytest.raises(graphmem.InvalidInput, match="unknown config key 'graph.depth'"):
        graphmem.open(tmp_path / "kb", config={"graph": {"depth": 3}})


def test_unchanged_document_text_reported(kb):
    kb.ingest_with_content("d", "t", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    r = kb.ingest_with_content("d", "t", "s", QUICKSTART_TEXT, [], [])
    assert r["status"] == "unchanged"
