"""Evidence quotes that are an exact span of the chunk they cite are stored as the span (text '') and their
creation time as the document version's ('') — and every public read returns the same bytes as before: the
store's evidence reads, ``graph.get_entity`` / ``get_edge``, ``query_with_evidence``, document claims, the JSONL
export. A knowledge base written by the previous code (full quotes) is compacted by migration 0014 and reads the
same afterwards."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import graphmem
from clocks import ticking_clock
from graphmem.models import Provenance
from graphmem.portability import export
from graphmem.store.sqlite import store as store_module
from graphmem.store.sqlite.evidence import EvidenceSqlMixin

CONFIG = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}, "chunking": {"size": 120, "overlap": 30}}
# Non-ASCII (code points, not bytes, are the offsets), a quote across a chunk boundary (cited once per chunk),
# one found only after case/whitespace folding, one that is not in the text (kept as given, no span), one
# without supporting text.
TEXT = ("Zoë's café — the Dispatch Service 🚚 depends on the Ledger DB. The ledger db runs on Postgres, "
        "which the dispatch service also reads nightly. Bob maintains the Tracker; the tracker feeds the "
        "dispatch service every   minute. Ünïcode naïve façade.")
ENTITIES = [
    {"name": "Dispatch Service", "type": "service",
     "supporting_text": "the Dispatch Service 🚚 depends on the Ledger DB"},
    {"name": "Ledger DB", "type": "database", "supporting_text": "The ledger db runs on Postgres, which the dispatch "
                                                                   "service also reads nightly. Bob maintains"},
    {"name": "Postgres", "type": "technology", "supporting_text": "THE LEDGER DB  runs on postgres"},
    {"name": "Tracker", "type": "service", "supporting_text": "a sentence that is nowhere in the document"},
    {"name": "Bob", "type": "person"},
    {"name": "façade", "type": "concept", "supporting_text": "naïve façade"},
]
RELATIONS = [
    {"source": "Dispatch Service", "target": "Ledger DB", "type": "depends on", "confidence": 0.9,
     "supporting_text": "the Dispatch Service 🚚 depends on the Ledger DB."},
    {"source": "Ledger DB", "target": "Postgres", "type": "runs on", "confidence": 0.8,
     "supporting_text": "The ledger db runs on Postgres"},
    {"source": "Tracker", "target": "Dispatch Service", "type": "feeds", "confidence": 0.7,
     "supporting_text": "the tracker feeds the dispatch service every minute"},
]


def _build(home: Path) -> None:
    with graphmem.open(home, config=CONFIG, clock=ticking_clock()) as kb:
        kb.ingest_with_content("d1", "Dispatch", "s1", TEXT, ENTITIES, RELATIONS)
        kb.ingest_with_content("d1", "Dispatch", "s1", TEXT + " Version two adds the Ledger DB again.", ENTITIES,
                               RELATIONS)


def _reads(home: Path) -> dict[str, Any]:
    """Every public read that shows evidence, as plain data."""
    with graphmem.open(home, config=CONFIG, clock=ticking_clock()) as kb:
        store = kb.store
        nodes = [r[0] for r in store.conn.execute("SELECT id FROM nodes ORDER BY id")]  # type: ignore[attr-defined]
        edges = [r[0] for r in store.conn.execute("SELECT id FROM edges ORDER BY id")]  # type: ignore[attr-defined]
        out: dict[str, Any] = {
            "nodes": {k: [p.__dict__ for p in v] for k, v in store.provenance_for("node", nodes).items()},
            "nodes_2": {k: [p.__dict__ for p in v] for k, v in store.provenance_for("node", nodes, 2).items()},
            "edges": {k: [p.__dict__ for p in v] for k, v in store.provenance_for("edge", edges).items()},
            "first": {k: p.__dict__ for k, p in store.first_provenance("edge", edges).items()},
            "claims": [(c.edge.id, c.evidence.__dict__) for v in (1, 2) for c in store.document_claims("d1", v, 50)],
            "entity": [graphmem.models.plain(kb.graph.get_entity(n)) for n in nodes],
            "edge": [graphmem.models.plain(kb.graph.get_edge(e)) for e in edges],
            "query": kb.query_with_evidence("dispatch service ledger db"),
        }
        export(kb.ctx, "jsonl", home.parent / f"{home.name}.jsonl")
        out["export"] = [json.loads(line) for line in (home.parent / f"{home.name}.jsonl").read_text().splitlines()
                         if '"provenance"' in line]
        return out


def _stored(home: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(home / "graph.db")
    try:
        return conn.execute('SELECT text, created_at, start FROM provenance ORDER BY id').fetchall()
    finally:
        conn.close()


# The knowledge base of the code before evidence spans: migrations up to 0013 (and the 0021 ones, the storage the
# current code writes mentions, document texts and events to; they need none of 0014-0020).
def _before_spans() -> list[tuple[str, str]]:
    return [mg for mg in store_module.MIGRATIONS if mg[0] < "0014" or mg[0].startswith("0021_")]


def _old_insert(self: EvidenceSqlMixin, records: list[Provenance]) -> None:
    """The previous code's insert: every quote and time as given."""
    self.conn.executemany(
        'INSERT INTO provenance (item_kind, item_id, doc_id, version, chunk_id, start, "end", text, confidence,'
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(p.item_kind, p.item_id, p.doc_id, p.version, p.chunk_id, p.start, p.end, p.text, p.confidence,
          p.created_at) for p in records])


@pytest.fixture
def old_kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A knowledge base written by the code before evidence spans: schema up to 0013, full quotes."""
    with monkeypatch.context() as m:
        m.setattr(store_module, "MIGRATIONS", _before_spans())
        m.setattr(EvidenceSqlMixin, "insert_provenance", _old_insert)
        _build(tmp_path / "old")
    return tmp_path / "old"


def test_quotes_kept_as_spans_read_back_byte_identical(tmp_path: Path, old_kb: Path) -> None:
    full = _stored(old_kb)
    assert all(t for t, _, _ in full)  # the previous code stored every quote
    new = tmp_path / "new"
    _build(new)
    stored = _stored(new)
    assert len(stored) == len(full)
    # Exact spans (across the chunk boundary too, and the folded match's piece) are stored as spans; the quote
    # that is not in the text, and evidence without a span, keep their text.
    compact = [(t, c) for t, c, s in stored if s is not None]
    assert compact and all(t == "" and c == "" for t, c in compact)
    assert {t for t, _, s in stored if s is None} == {"a sentence that is nowhere in the document"}
    assert sum(len(t) for t, _, _ in stored) < sum(len(t) for t, _, _ in full) / 5
    got, want = _reads(new), _reads(old_kb)
    assert got["nodes"] and got["edges"] and got["claims"] and got["first"] and got["export"]
    quotes = {p["text"] for v in got["nodes"].values() for p in v}
    assert "the Dispatch Service 🚚 depends on the Ledger DB" in quotes and "naïve façade" in quotes
    assert all(p["created_at"] for v in got["nodes"].values() for p in v)
    assert json.dumps(got, sort_keys=True, default=str) == json.dumps(want, sort_keys=True, default=str)


def test_migration_compacts_an_old_knowledge_base_and_reads_the_same(old_kb: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:  # read before the migration
        m.setattr(store_module, "MIGRATIONS", _before_spans())
        before = _reads(old_kb)
    assert all(t for t, _, _ in _stored(old_kb))
    after = _reads(old_kb)  # opened with every migration: compacted
    stored = _stored(old_kb)
    assert [t for t, _, s in stored if s is not None and t] == []
    assert all(c == "" for _, c, _ in stored)  # every record was made with its document version
    assert json.dumps(after, sort_keys=True, default=str) == json.dumps(before, sort_keys=True, default=str)
    # and the replay log did not record the compaction as changes
    conn = sqlite3.connect(old_kb / "graph.db")
    try:
        assert conn.execute("SELECT count(*) FROM replay_log WHERE tbl = 'provenance'").fetchone()[0] == 0
    finally:
        conn.close()


def test_old_reads_equal_new_reads_after_migration(tmp_path: Path, old_kb: Path) -> None:
    new = tmp_path / "new"
    _build(new)
    assert json.dumps(_reads(old_kb), sort_keys=True, default=str) == json.dumps(_reads(new), sort_keys=True,
                                                                                 default=str)
