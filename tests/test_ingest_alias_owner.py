"""An alias refused at ingest (another entity already owns it) stays that other entity's name for the whole
document: a relation of the same document naming the alias goes to the entity that owns it in the store, never to
the entity that claimed it, whatever the order of the entity list; the refusing entity's own name is resolved
before its aliases, and the warning names the owner. The batched write (bulk records, savepoints on retry) stores
the same rows as one ``ingest_with_content`` per document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import graphmem
from clocks import ticking_clock
from graphmem.context import AFTER_INGEST
from graphmem.errors import InvalidInput

CONFIG: dict[str, Any] = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False},
                          "ingest": {"batch_size": 10, "workers": 1}}

D1 = ("d1", "Ledger", "The ledger db (LDB) stores invoices. Billing owns it. The local disk buffer caches it.",
      [{"name": "ledger db", "type": "database", "supporting_text": "The ledger db", "aliases": ["LDB"]},
       {"name": "billing", "type": "team", "supporting_text": "Billing"},
       {"name": "local disk buffer", "type": "cache", "supporting_text": "The local disk buffer"}])
# "LDB" is the ledger's alias; this document's extractor also calls the (known) cache "LDB".
D2_TEXT = "The local disk buffer (LDB) feeds the reporter. The reporter reads LDB nightly. Billing reviews it."
D2_CACHE = {"name": "local disk buffer", "type": "cache", "supporting_text": "The local disk buffer",
            "aliases": ["LDB"]}
D2_REPORTER = {"name": "reporter", "type": "service", "supporting_text": "the reporter"}
D2_BILLING = {"name": "billing", "type": "team", "supporting_text": "Billing", "aliases": ["LDB"]}
D2_RELATIONS = [
    {"source": "reporter", "target": "LDB", "type": "reads", "confidence": 0.9,
     "supporting_text": "The reporter reads LDB nightly."},
    {"source": "local disk buffer", "target": "reporter", "type": "feeds", "confidence": 0.8,
     "supporting_text": "The local disk buffer (LDB) feeds the reporter."},
]


def _edges(kb: graphmem.KnowledgeBase) -> set[tuple[str, str, str]]:
    names = {n.id: n.name for n in kb.graph.list(limit=1000)}
    rows = kb.store.conn.execute("SELECT source, type, target FROM edges")  # type: ignore[attr-defined]
    return {(names[s], t, names[d]) for s, t, d in rows}


def _names_of(kb: graphmem.KnowledgeBase, name: str) -> set[str]:
    node = kb.graph.find(name)
    assert node is not None
    return {node.name, *node.aliases}


@pytest.mark.parametrize("order", ["cache_first", "reporter_first"])
def test_a_relation_naming_a_refused_alias_goes_to_the_alias_owner(tmp_path: Path, order: str) -> None:
    entities = [D2_CACHE, D2_REPORTER] if order == "cache_first" else [D2_REPORTER, D2_CACHE]
    with graphmem.open(tmp_path / "kb", config=CONFIG) as kb:
        kb.ingest_with_content(*D1[:2], "s1", D1[2], D1[3], [])
        res = kb.ingest_with_content("d2", "Buffer", "s2", D2_TEXT, entities, D2_RELATIONS)
        assert _edges(kb) == {("reporter", "reads", "ledger db"), ("local disk buffer", "feeds", "reporter")}
        assert _names_of(kb, "ledger db") == {"ledger db", "LDB"}
        assert _names_of(kb, "local disk buffer") == {"local disk buffer"}
        refused = [w for w in res["warnings"] if "already name" in w]
        assert refused == [f"entities[{entities.index(D2_CACHE)}] 'local disk buffer': alias(es) ['ldb'] already "
                           "name another entity ('ledger db'); not added as aliases (this document's relations "
                           "naming them go to that entity)"]
        # The buffer's evidence and mentions are its own name's, not the ledger's alias.
        cache = kb.graph.get_entity("local disk buffer")
        assert sorted((p.doc_id, p.text) for p in cache.evidence) == [
            ("d1", "The local disk buffer"), ("d2", "The local disk buffer")]
        q = kb.store.conn.execute  # type: ignore[attr-defined]
        said = {name: sorted(D2_TEXT[s:e] for s, e in q(
            "SELECT m.start, m.end FROM mentions m JOIN nodes n ON n.id = m.node_id "
            "WHERE n.name = ? AND m.doc_id = 'd2'", (name,))) for name in ("local disk buffer", "ledger db")}
        assert said == {"local disk buffer": ["local disk buffer"], "ledger db": []}


def test_the_entity_name_resolves_before_an_alias_claimed_earlier_in_the_document(tmp_path: Path) -> None:
    """'billing' is a node of d1; in d2 the ledger (listed first) has 'LDB', then billing claims 'LDB' too. Billing
    stays billing (its own name is resolved before its aliases), the alias stays the ledger's, and 'billing' in a
    relation means billing: the order of the entity list does not decide."""
    ledger = {"name": "ledger db", "type": "database", "supporting_text": "LDB", "aliases": ["LDB"]}
    relations = [{"source": "billing", "target": "reporter", "type": "reviews", "confidence": 0.9,
                  "supporting_text": "Billing reviews it."},
                 {"source": "reporter", "target": "LDB", "type": "reads", "confidence": 0.9,
                  "supporting_text": "The reporter reads LDB nightly."}]
    with graphmem.open(tmp_path / "kb", config=CONFIG) as kb:
        kb.ingest_with_content(*D1[:2], "s1", D1[2], D1[3], [])
        before = {n.name: n.id for n in kb.graph.list()}
        res = kb.ingest_with_content("d2", "Buffer", "s2", D2_TEXT, [ledger, D2_REPORTER, D2_BILLING], relations)
        after = {n.name: n.id for n in kb.graph.list()}
        assert after == {**before, "reporter": after["reporter"]}
        assert _edges(kb) == {("billing", "reviews", "reporter"), ("reporter", "reads", "ledger db")}
        assert _names_of(kb, "billing") == {"billing"} and _names_of(kb, "ledger db") == {"ledger db", "LDB"}
        assert (res["nodes_added"], res["nodes_linked"]) == (1, 2)
        assert [w for w in res["warnings"] if "already name" in w] == [
            "entities[2] 'billing': alias(es) ['ldb'] already name another entity ('ledger db'); not added as "
            "aliases (this document's relations naming them go to that entity)"]
        billing = kb.graph.get_entity("billing")
        assert sorted((p.doc_id, p.text) for p in billing.evidence) == [("d1", "Billing"), ("d2", "Billing")]


def test_an_alias_refused_for_a_node_of_this_document_names_it(tmp_path: Path) -> None:
    """Both claimants are new in this document: the first keeps the alias; the second's claim is refused with
    the first one named, and the relation naming the alias goes to the first."""
    text = "Queue A (QX) feeds Queue B. Queue B (QX) drains fast. The worker polls QX."
    entities = [{"name": "Queue A", "type": "queue", "supporting_text": "Queue A", "aliases": ["QX"]},
                {"name": "Queue B", "type": "queue", "supporting_text": "Queue B"},
                {"name": "worker", "type": "service", "supporting_text": "The worker"}]
    relations = [{"source": "worker", "target": "QX", "type": "polls", "confidence": 0.9,
                  "supporting_text": "The worker polls QX."}]
    with graphmem.open(tmp_path / "kb", config=CONFIG) as kb:
        kb.ingest_with_content("d0", "B", "s0", "Queue B drains.",
                               [{"name": "Queue B", "type": "queue", "supporting_text": "Queue B"}], [])
        res = kb.ingest_with_content("d1", "Queues", "s1", text,
                                     entities + [{"name": "Queue B", "type": "queue", "supporting_text": "Queue B",
                                                  "aliases": ["QX"]}], relations)
        assert _edges(kb) == {("worker", "polls", "Queue A")}
        assert _names_of(kb, "Queue A") == {"Queue A", "QX"} and _names_of(kb, "Queue B") == {"Queue B"}
        assert [w for w in res["warnings"] if "already name" in w] == [
            "entities[3] 'Queue B': alias(es) ['qx'] already name another entity ('Queue A'); not added as aliases "
            "(this document's relations naming them go to that entity)"]


# -- the batched write gives the same rows ---------------------------------------------------------------------------

def _records() -> list[dict[str, Any]]:
    return [
        {"id": D1[0], "title": D1[1], "text": D1[2], "entities": D1[3], "relations": []},
        {"id": "d2", "title": "Buffer", "text": D2_TEXT, "entities": [D2_CACHE, D2_REPORTER, D2_BILLING],
         "relations": D2_RELATIONS + [{"source": "billing", "target": "reporter", "type": "reviews",
                                       "confidence": 0.9, "supporting_text": "Billing reviews it."}]},
        {"id": "d3", "title": "Again", "text": "LDB backs the reporter. The local disk buffer is small.",
         "entities": [{"name": "reporter", "type": "service", "supporting_text": "the reporter"},
                      {"name": "local disk buffer", "type": "cache", "supporting_text": "The local disk buffer",
                       "aliases": ["LDB"]}],
         "relations": [{"source": "LDB", "target": "reporter", "type": "backs", "confidence": 0.9,
                        "supporting_text": "LDB backs the reporter."}]},
    ]


def _rows(kb: graphmem.KnowledgeBase) -> dict[str, list[Any]]:
    q = kb.store.conn.execute  # type: ignore[attr-defined]
    return {
        "nodes": [list(r) for r in q("SELECT id, kind, name, type FROM nodes ORDER BY rowid")],
        "names": [list(r) for r in q("SELECT node_id, norm, alias FROM node_names ORDER BY rowid")],
        "edges": [list(r) for r in q("SELECT id, source, target, type, confidence FROM edges ORDER BY rowid")],
        "evidence": [list(r) for r in q("SELECT item_kind, item_id, doc_id, chunk_id, start, end FROM provenance "
                                        "ORDER BY rowid")],
        "mentions": [list(r) for r in q("SELECT node_id, chunk_id, start, end FROM mentions ORDER BY doc_id, start")],
        "events": [list(r) for r in q("SELECT type, target FROM events WHERE type NOT LIKE 'document.%' "
                                      "AND type NOT LIKE 'ingest%' ORDER BY id")],
    }


def _per_document(home: Path, path: Path) -> dict[str, list[Any]]:
    with graphmem.open(home, config=CONFIG, clock=ticking_clock()) as kb:
        for i, rec in enumerate(_records()):
            kb.ingest_with_content(rec["id"], rec["title"], f"{path}#{i}", rec["text"], rec["entities"],
                                   rec["relations"], {"path": str(path), "record": i})
        return _rows(kb)


def _write_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "docs" / "records.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    return path


def test_the_batched_write_stores_the_rows_of_one_ingest_per_document(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = _write_jsonl(tmp_path)
    with graphmem.open(tmp_path / "batched", config=CONFIG, clock=ticking_clock()) as kb:
        summary = kb.ingest_paths([path], extractor="none")
        assert (summary.added, summary.skipped) == (3, [])
        got = _rows(kb)
        source = kb.store.conn.execute("SELECT source FROM documents WHERE doc_id = 'd1'").fetchone()[0]  # type: ignore[attr-defined]
    want = _per_document(tmp_path / "single", Path(source.rsplit("#", 1)[0]))
    assert got == want
    names = {r[0]: r[2] for r in got["nodes"]}
    assert sorted((names[s], t, names[d]) for _, s, d, t, _ in got["edges"]) == [
        ("billing", "reviews", "reporter"), ("ledger db", "backs", "reporter"),
        ("local disk buffer", "feeds", "reporter"), ("reporter", "reads", "ledger db")]
    d3 = _records()[2]["text"]
    assert [(names[n], d3[s:e]) for n, c, s, e in got["mentions"] if c.startswith("d3:")] == [
        ("reporter", "reporter"), ("local disk buffer", "local disk buffer")]  # "LDB" is not the buffer's


def test_the_guarded_retry_stores_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A later document of the batch fails half-way: the batch is written again with a savepoint per document;
    the alias resolution of the documents kept is the same as without the failure."""
    monkeypatch.chdir(tmp_path)
    path = _write_jsonl(tmp_path)
    records = _records()
    records.append({"id": "d4", "title": "Fails", "text": "The reporter (LDB) fails.",
                    "entities": [{"name": "reporter", "type": "service", "supporting_text": "The reporter",
                                  "aliases": ["LDB"]}], "relations": []})
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    calls: list[str] = []

    def fail_d4(doc_id: str, node_ids: list[str], warnings: list[str]) -> None:
        calls.append(doc_id)
        if doc_id == "d4":
            raise InvalidInput("d4: refused by a hook")

    with graphmem.open(tmp_path / "retried", config=CONFIG, clock=ticking_clock()) as kb:
        kb.ctx.hooks.register(AFTER_INGEST, fail_d4)
        summary = kb.ingest_paths([path], extractor="none")
        assert summary.added == 3 and [s.reason for s in summary.skipped] == ["d4: refused by a hook"]
        assert calls == ["d1", "d2", "d3", "d4", "d1", "d2", "d3", "d4"]
        got = _rows(kb)
        source = kb.store.conn.execute("SELECT source FROM documents WHERE doc_id = 'd1'").fetchone()[0]  # type: ignore[attr-defined]
    want = _per_document(tmp_path / "single", Path(source.rsplit("#", 1)[0]))
    assert {k: v for k, v in got.items() if k != "events"} == {k: v for k, v in want.items() if k != "events"}
