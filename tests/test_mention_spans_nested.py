"""Mentions of entities an extraction lists for a document: an entity written only inside a longer
listed name ("Virginia" in "Spotsylvania, Virginia") is still mentioned there (GPT-3.5's MuSiQue
triples lost ~12% of their entities' passage links to the longer names), one also written on its own
is not mentioned inside the longer ones, and a document whose case folding changes lengths ("İ")
keeps its mentions at the document's own offsets."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import graphmem
from graphmem.ingest.mention_spans import fold_keeping_offsets, mention_spans
from graphmem.models import ENTITY
from graphmem.text import normalize_name

CONFIG = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}
PUBLIX = ("Publix is a grocery chain. Locations are found as far north as Spotsylvania, Virginia, and as far "
          "south as Key West, Florida. Florida has the most stores.")


def _mentions(home: Path, doc_id: str) -> list[tuple[str, int, int]]:
    conn = sqlite3.connect(home / "graph.db")
    try:
        return sorted(conn.execute(
            'SELECT n.name, m.start, m."end" FROM mentions m JOIN nodes n ON n.id = m.node_id WHERE m.doc_id = ?',
            (doc_id,)).fetchall())
    finally:
        conn.close()


def _ingest(home: Path, doc_id: str, text: str, names: list[str]) -> None:
    with graphmem.open(home, config=CONFIG) as kb:
        kb.ingest_with_content(doc_id, doc_id, doc_id, text, [{"name": n, "type": "place"} for n in names], [])


def test_an_entity_written_only_inside_a_longer_name_is_mentioned_there(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    _ingest(home, "publix", PUBLIX, ["Publix", "Spotsylvania, Virginia", "Virginia", "Key West, Florida",
                                     "Key West", "Florida"])
    got = _mentions(home, "publix")
    at = {name: [(s, e) for n, s, e in got if n == name] for name in {n for n, _, _ in got}}
    v = PUBLIX.index("Virginia")
    assert at["Virginia"] == [(v, v + len("Virginia"))]  # before: no mention, the longer name took it
    assert at["Spotsylvania, Virginia"] == [(PUBLIX.index("Spotsylvania"), v + len("Virginia"))]
    kw = PUBLIX.index("Key West")
    assert at["Key West"] == [(kw, kw + len("Key West"))]
    # "Florida" is also written on its own: only that occurrence, not the one inside "Key West, Florida".
    alone = PUBLIX.index("Florida has")
    assert at["Florida"] == [(alone, alone + len("Florida"))]
    assert all(PUBLIX[s:e].casefold() == name.casefold() for name, s, e in got)


def test_the_nested_mention_links_the_passage_to_the_entity_other_passages_share(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    _ingest(home, "publix", PUBLIX, ["Publix", "Spotsylvania, Virginia", "Virginia"])
    _ingest(home, "virginia", "Virginia is a state. Richmond is its capital.", ["Virginia", "Richmond"])
    with graphmem.open(home, config=CONFIG) as kb:
        nid = kb.ctx.store.find_nodes(ENTITY, [normalize_name("Virginia")])["virginia"]
        docs = {cid.split(":")[0] for cid, _ in kb.ctx.store.entities_chunks([nid], 10)[nid]}
        assert docs == {"publix", "virginia"}
        assert kb.ctx.store.entity_chunk_counts([nid]) == {nid: 2}


def test_a_document_whose_case_folding_changes_lengths_keeps_its_mentions(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    text = "İsmail Cem was foreign minister of Turkey. He was born in Istanbul."
    _ingest(home, "cem", text, ["Turkey", "Istanbul", "İsmail Cem"])
    got = _mentions(home, "cem")
    names = {n for n, _, _ in got}
    assert {"Turkey", "Istanbul"} <= names  # before: no mention at all in the document
    assert all(text[s:e].casefold() == n.casefold() for n, s, e in got if n != "İsmail Cem")


def test_fold_keeping_offsets_keeps_the_length_and_folds_the_rest() -> None:
    text = "İzmir and STRASSE Straße"
    folded = fold_keeping_offsets(text)
    assert len(folded) == len(text)
    assert folded == "İzmir and strasse straße"
    assert fold_keeping_offsets("Plain Text") == "plain text"


def _spans(text: str, names: dict[str, str], per_entity: int) -> list[tuple[str, int, int]]:
    """mention_spans with every span in one chunk (named by its span, so the test sees what it was asked)."""
    got = mention_spans(text, names, per_entity, lambda a, b: (a, b))
    assert all(chunk == (i, j) for _, i, j, chunk in got)
    return [(nid, i, j) for nid, i, j, _ in got]


def test_a_span_no_chunk_holds_is_no_mention() -> None:
    text = "Memory leak, then memory leak."
    names = {"memory leak": "leak", "memory": "mem"}
    # the first "memory leak" is outside every chunk; the second inside: "memory" stays nested there
    got = mention_spans(text, names, 5, lambda a, b: None if a < 10 else "c1")
    assert got == [("leak", 18, 29, "c1"), ("mem", 18, 24, "c1")]


def test_mention_spans_keeps_the_longest_name_first_and_the_plural() -> None:
    text = "Memory leaks and memory leak reports; memory is fine."
    names = {"memory leak": "leak", "memory": "mem"}
    got = _spans(text, names, 10)
    assert got == [("leak", 0, 12), ("leak", 17, 28), ("mem", 38, 44)]
    # A name written only inside the longer one is mentioned there, each time, up to the per-entity cap.
    text = "Memory leak, then memory leak, then memory leak."
    assert _spans(text, names, 5) == [
        ("leak", 0, 11), ("mem", 0, 6), ("leak", 18, 29), ("mem", 18, 24), ("leak", 36, 47), ("mem", 36, 42)]
    # With a cap of 2 the longer name leaves the third occurrence free: "memory" is mentioned there alone.
    assert _spans(text, names, 2) == [("leak", 0, 11), ("leak", 18, 29), ("mem", 36, 42)]
