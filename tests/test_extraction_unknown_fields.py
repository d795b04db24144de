"""Fields an extraction's items carry that the contract does not read are named in a warning.

A misspelt field used to vanish without a word: ``{"quote": ...}`` instead of ``supporting_text`` left
every relation with no evidence span and the wiki printed an empty quote for it."""

from __future__ import annotations

import json
from pathlib import Path

import graphmem
from graphmem.extraction import load_extraction_file, parse_extraction

TEXT = "Ada Lovelace worked with Charles Babbage on the Analytical Engine."
ENTITIES = [{"name": "Ada Lovelace", "type": "person", "quote": "Ada Lovelace"},
            {"name": "Charles Babbage", "type": "person", "quote": "Charles Babbage", "description": "engineer"}]
RELATIONS = [{"subject": "x", "source": "Ada Lovelace", "target": "Charles Babbage", "type": "worked with",
              "quote": "Ada Lovelace worked with Charles Babbage"}]


def _kb(tmp_path: Path) -> graphmem.KnowledgeBase:
    return graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}})


def test_parse_names_each_unknown_field_with_its_count_and_the_field_meant() -> None:
    warnings = parse_extraction(ENTITIES, RELATIONS).extra["warnings"]
    assert warnings == [
        "entities: unknown field(s) ignored: 'description' (1 item); 'quote' (2 items, did you mean "
        "'supporting_text'?); the fields read are name, type, supporting_text, aliases",
        "relations: unknown field(s) ignored: 'quote' (1 item, did you mean 'supporting_text'?); 'subject' "
        "(1 item, did you mean 'source'?); the fields read are source, target, type, confidence, supporting_text",
    ]


def test_the_contract_fields_and_bare_names_give_no_warning() -> None:
    ex = parse_extraction(["Ada Lovelace", {"name": "Charles Babbage", "type": "person", "supporting_text": "x",
                                            "aliases": ["Babbage"]}],
                          [{"source": "a", "target": "b", "type": "t", "confidence": 0.9, "supporting_text": "s"}])
    assert "warnings" not in ex.extra


def test_ingest_with_content_reports_them_and_still_stores_what_it_read(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        res = kb.ingest_with_content("d1", "Engines", "", TEXT, ENTITIES, RELATIONS)
        assert res["status"] == "added" and res["nodes_added"] == 2 and res["edges_added"] == 1
        assert any("'quote' (2 items, did you mean 'supporting_text'?)" in w for w in res["warnings"])
        assert any(w.startswith("relations: unknown field(s) ignored: 'quote'") for w in res["warnings"])
        # the same call with the contract's names: no such warning
        fixed = [{k if k != "quote" else "supporting_text": v for k, v in e.items() if k != "description"}
                 for e in ENTITIES]
        res2 = kb.ingest_with_content("d2", "Engines 2", "", TEXT + " Again.", fixed, [])
        assert not any("unknown field" in w for w in res2["warnings"])


def test_an_extraction_file_and_a_jsonl_record_report_them(tmp_path: Path) -> None:
    ex_file = tmp_path / "doc.extraction.json"
    ex_file.write_text(json.dumps({"entities": ENTITIES, "relations": RELATIONS}), encoding="utf-8")
    with _kb(tmp_path) as kb:
        res = kb.ingest("d1", "Engines", "", TEXT, load_extraction_file(ex_file))
        assert res.warnings[0].startswith("entities: unknown field(s) ignored:")
        jsonl = tmp_path / "records.jsonl"
        jsonl.write_text(json.dumps({"id": "r1", "title": "Engines", "text": TEXT, "entities": ENTITIES,
                                     "relations": RELATIONS}) + "\n", encoding="utf-8")
        summary = kb.ingest_paths([jsonl], extractor="none")
        assert summary.added == 1
        assert any("supplied extraction: entities: unknown field(s) ignored" in w and "'quote'" in w
                   for w in summary.warnings)


def test_a_relation_without_supporting_text_gets_no_empty_quote_on_its_pages(tmp_path: Path) -> None:
    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}})
    with kb:
        ents = [{"name": "Ada Lovelace", "type": "person", "supporting_text": "Ada Lovelace"},
                {"name": "Charles Babbage", "type": "person", "supporting_text": "Charles Babbage"},
                {"name": "Analytical Engine", "type": "machine", "supporting_text": "Analytical Engine"}]
        rels = [{"source": "Ada Lovelace", "target": "Charles Babbage", "type": "worked with"},
                {"source": "Charles Babbage", "target": "Analytical Engine", "type": "designed",
                 "supporting_text": "Charles Babbage on the Analytical Engine"}]
        kb.ingest_with_content("d1", "Engines", "", TEXT, ents, rels)
    pages = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "kb" / "wiki").rglob("*.md")}
    assert not any("“”" in text for text in pages.values())
    ada = pages["ada-lovelace.md"]
    assert "**Ada Lovelace** worked with [[charles-babbage]] (confidence 1.00) — [[doc-engines]] v1" in ada
    assert "“Charles Babbage on the Analytical Engine”" in pages["charles-babbage.md"]


def test_the_warning_stays_short_and_knows_a_field_in_another_case() -> None:
    junk = {f"k{i:05d}": 1 for i in range(20_000)}
    (warning,) = parse_extraction([{"name": "A", **junk}], []).extra["warnings"]
    assert len(warning) < 400 and warning.count("(1 item)") == 10 and "and 19990 more" in warning
    (warning,) = parse_extraction([{"name": "A", "Supporting_Text": "A"}], []).extra["warnings"]
    assert "'Supporting_Text' (1 item, did you mean 'supporting_text'?)" in warning
