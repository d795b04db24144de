"""The offline extractor's entity rules of issue 15: stop entities, "X of Y" names, person-name
variants, the title as an entity, and a title line that stays out of the first sentence."""

from __future__ import annotations

import json

import pytest

from graphmem.extraction import Extraction
from graphmem.ingest.chunking import split_sentences
from graphmem.ingest.extractors.base import SourceDocument, validate_extraction
from graphmem.ingest.extractors.offline import OfflineExtractor
from graphmem.ingest.extractors.offline_entities import is_stop_entity, merge_variants, person_like
from graphmem.text import normalize_name


def _extract(text: str, title: str = "t") -> Extraction:
    return OfflineExtractor().extract(SourceDocument("d1", title, "test", text))


def _names(ex: Extraction) -> set[str]:
    return {e.name for e in ex.entities}


def _entity(ex: Extraction, name: str):
    [e] = [e for e in ex.entities if normalize_name(e.name) == normalize_name(name)]
    return e


# -- stop entities ---------------------------------------------------------------------------------


@pytest.mark.parametrize("word", ["film", "Films", "population", "first", "Later", "having", "Mr", "C", "II", "19th",
                                  "April", "out", "President", "unincorporated", "MHz", "BC"])
def test_stop_entities(word):
    assert is_stop_entity(word)


@pytest.mark.parametrize("name", ["Christopher Nolan", "Redis", "memory leak", "API", "Lothair II", "May Day",
                                  "cache", "object", "first aid kit"])
def test_names_and_domain_words_are_not_stop_entities(name):
    assert not is_stop_entity(name)


@pytest.mark.parametrize(("text", "absent"), [
    ("The film was released in 1999.", {"film"}),
    ("The population was 1,234 at the 2010 census.", {"population"}),
    ("The song was written by Jane Roe.", {"song"}),
    ("Later, Father Brown went Out of the house.", {"Later", "Out", "later", "out"}),
    ("Henry II was crowned. II is a number.", {"II"}),
    ("The first was built in April.", {"first", "April"}),
    ("The unincorporated community was founded in 1850.", {"unincorporated community"}),
])
def test_generic_words_are_no_entities(text, absent):
    assert not (_names(_extract(text)) & absent)


def test_subject_noun_phrases_stay_when_they_name_system_parts_or_issues():
    names = _names(_extract("Memory leaks occur when objects are not released. The payment service was slow."))
    assert {"memory leak", "object", "payment service"} <= names


def test_a_common_noun_phrase_the_document_repeats_is_a_topic():
    once = _names(_extract("The retry storm began at noon."))
    twice = _names(_extract("The retry storm began at noon. Engineers watched the retry storm grow."))
    assert "retry storm" not in once and "retry storm" in twice


def test_a_relation_endpoint_stays_an_entity_even_when_generic_looking():
    ex = _extract("The migration results in downtime.")
    assert {(r.source, r.type, r.target) for r in ex.relations} == {("migration", "causes", "downtime")}


# -- "X of Y" proper names -------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "name", "parts"), [
    ("The Reign of Terror ended in 1794.", "Reign of Terror", {"Reign", "Terror"}),
    ("She studied at the University of London.", "University of London", {"University", "London"}),
    ("He served in the House of the Lords for years.", "House of the Lords", {"House", "Lords"}),
    ("A symphony by Ludwig van Beethoven was played.", "Ludwig van Beethoven", {"Ludwig", "Beethoven"}),
])
def test_of_joins_a_proper_name(text, name, parts):
    names = _names(_extract(text))
    assert name in names
    assert not names & parts


# -- person-name variants --------------------------------------------------------------------------


def test_full_and_short_name_are_one_entity_and_the_surname_no_other():
    text = ("Christopher Edward Nolan is a director. Nolan was born in London. "
            "Christopher Nolan won an award.")
    ex = _extract(text)
    nolans = [e for e in ex.entities if "Nolan" in e.name or any("Nolan" in a for a in e.aliases)]
    assert len(nolans) == 1
    [nolan] = nolans
    assert nolan.name == "Christopher Edward Nolan" and nolan.aliases == ("Christopher Nolan",)
    assert "Nolan" not in _names(ex)


def test_two_people_with_one_surname_stay_apart():
    ex = _extract("Jonathan Nolan and Christopher Nolan are brothers. The script is by Nolan.")
    assert {"Jonathan Nolan", "Christopher Nolan"} <= _names(ex)
    assert "Nolan" in _names(ex)  # ambiguous: not merged into either brother


def test_merge_variants_points_relations_at_the_kept_name():
    from graphmem.extraction import EntitySpec, RelationSpec

    ents = [EntitySpec("John Ronald Tolkien", "person", "s"), EntitySpec("John Tolkien", "person", "s"),
            EntitySpec("Tolkien", "person", "s"), EntitySpec("Oxford", "place", "s")]
    rels = [RelationSpec("Tolkien", "Oxford", "uses", 1.0, "s"),
            RelationSpec("John Tolkien", "Tolkien", "uses", 1.0, "s")]
    out, out_rels = merge_variants(ents, rels)
    assert [e.name for e in out] == ["John Ronald Tolkien", "Oxford"]
    assert out[0].aliases == ("John Tolkien",)
    assert [(r.source, r.target) for r in out_rels] == [("John Ronald Tolkien", "Oxford")]  # the self-loop is gone


@pytest.mark.parametrize(("name", "expected"), [("Christopher Nolan", True), ("University of London", False),
                                                ("New York", False), ("Nolan", False), ("Columbia Records", False)])
def test_person_like(name, expected):
    assert person_like(name) is expected


# -- the title -------------------------------------------------------------------------------------


def test_title_in_the_text_is_the_first_entity():
    text = "The Journal of Mathematical Physics is a journal. It is published by the American Institute of Physics."
    ex = _extract(text, title="Journal of Mathematical Physics")
    first = ex.entities[0]
    assert first.name == "Journal of Mathematical Physics"
    assert first.supporting_text == "The Journal of Mathematical Physics is a journal."


def test_title_names_the_first_sentences_subject_as_alias():
    ex = _extract("Christopher Edward Nolan (born 1970) is a British film director.", title="Christopher Nolan")
    first = ex.entities[0]
    assert first.name == "Christopher Nolan" and first.aliases == ("Christopher Edward Nolan",)
    assert "Christopher Edward Nolan" not in _names(ex)
    kept, warnings = validate_extraction(ex, "Christopher Edward Nolan (born 1970) is a British film director.")
    assert warnings == [] and kept.entities == ex.entities


def test_a_disambiguated_title_loses_its_parenthesis():
    ex = _extract("Ridley Scott directed Black Hawk Down in 2001.", title="Black Hawk Down (film)")
    assert ex.entities[0].name == "Black Hawk Down"


@pytest.mark.parametrize("title", ["notes", "t", "README"])
def test_a_file_name_title_that_the_text_does_not_name_is_no_entity(title):
    ex = _extract("Redis is fast. The cache uses Redis.", title=title)
    assert {normalize_name(n) for n in _names(ex)} == {"redis", "cache"}


def test_a_title_the_text_does_not_name_is_no_entity():
    ex = _extract("Redis is fast.", title="Storage Notes")
    assert _names(ex) == {"Redis"}


# -- the title line ------------------------------------------------------------------------------


def test_title_line_is_not_merged_into_the_first_sentence():
    text = "Christopher Nolan\nChristopher Edward Nolan is a British film director."
    ex = _extract(text, title="Christopher Nolan")
    assert not any("\n" in e.name or e.name.count("Nolan") > 1 for e in ex.entities)
    [nolan] = [e for e in ex.entities if "Nolan" in e.name]
    assert nolan.name == "Christopher Nolan" and nolan.supporting_text == "Christopher Nolan"
    assert nolan.aliases == ("Christopher Edward Nolan",)


def test_a_lowercase_title_line_equal_to_the_title_is_split_too():
    text = "redis notes\nRedis is fast."
    spans = [text[s:e] for s, e in split_sentences(text)]
    assert spans == ["redis notes\nRedis is fast."]  # no title case: split_sentences alone keeps it
    ex = _extract(text, title="Redis Notes")
    assert ex.entities[0].supporting_text == "redis notes"


@pytest.mark.parametrize(("text", "expected"), [
    ("Christopher Nolan\nChristopher Edward Nolan is a director.",
     ["Christopher Nolan", "Christopher Edward Nolan is a director."]),
    ("Journal of Mathematical Physics\nThe Journal is old.",
     ["Journal of Mathematical Physics", "The Journal is old."]),
    ("# Redis notes\nRedis is fast.\n## Ops\nIt runs.", ["# Redis notes", "Redis is fast.", "## Ops", "It runs."]),
    ("The payment service talks to\nRedis for caching.", ["The payment service talks to\nRedis for caching."]),
    ("One. Two! \"Three?\" Four\n\nFive", ["One.", "Two!", '"Three?"', "Four", "Five"]),
])
def test_split_sentences_title_and_heading_lines(text, expected):
    assert [text[s:e] for s, e in split_sentences(text)] == expected


def test_ingested_title_entity_cites_offset_zero_and_links_the_texts_name(kb, tmp_path):
    path = tmp_path / "people.jsonl"
    rows = [{"id": "nolan", "title": "Christopher Nolan",
             "text": "Christopher Nolan\nChristopher Edward Nolan is a British film director."},
            {"id": "inception", "title": "Inception", "text": "Inception is a 2010 film by Christopher Edward Nolan."}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    summary = kb.ingest_paths([path], extractor="offline")
    assert summary.added == 2
    ent = kb.graph.get_entity("Christopher Edward Nolan")  # found through the alias
    assert ent["name"] == "Christopher Nolan"
    spans = {(p["doc_id"], p["start"]) for p in ent["evidence"]}
    assert ("nolan", 0) in spans
    assert {p["doc_id"] for p in ent["evidence"]} == {"nolan", "inception"}
