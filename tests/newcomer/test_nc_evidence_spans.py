"""Issue 13 item 10: an evidence quote is reported inside the chunk it is filed under (a quote
that crossed a chunk boundary was filed under the best-overlapping chunk with offsets outside it)."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmem

REPO = Path(__file__).resolve().parents[2]
SMALL_CHUNKS = {"chunking": {"size": 200, "overlap": 40}}


def _stored_evidence(kb: graphmem.KnowledgeBase) -> list[tuple[int, int, int, int, str, str]]:
    """(quote start, end, chunk start, end, quote text, chunk id) of every located evidence record."""
    docs = [d.doc_id for d in kb.documents.list(limit=1000)]
    out = []
    for d in docs:
        doc = kb.documents.get(d)
        chunks = {c.chunk_id: c for c in kb.documents.chunks(d)}
        for kind, ids in (("node", [n.id for n in kb.graph.list(limit=10000)]),):
            for recs in kb.store.provenance_for(kind, ids).values():
                for p in recs:
                    if p.doc_id == d and p.start is not None:
                        c = chunks[p.chunk_id]
                        assert doc.content[p.start:p.end] == p.text
                        out.append((p.start, p.end, c.start, c.end, p.text, c.chunk_id))
    return out


def test_offline_quotes_lie_inside_their_chunks(tmp_path):
    with graphmem.open(tmp_path / "kb", config=SMALL_CHUNKS) as kb:
        kb.ingest_paths([REPO / "examples" / "ledger-db.md"])
        ev = _stored_evidence(kb)
        assert ev
        outside = [e for e in ev if not (e[2] <= e[0] and e[1] <= e[3])]
        assert outside == []


def test_a_quote_across_a_chunk_boundary_is_cited_piecewise_and_whole(kb_small):
    kb, text, quote = kb_small
    recs = [p for ps in kb.store.provenance_for("node", [kb.graph.find("ledger-db").id]).values() for p in ps]
    chunks = {c.chunk_id: c for c in kb.documents.chunks("d")}
    pieces = sorted((p.start, p.end, p.chunk_id) for p in recs)
    assert len({cid for _, _, cid in pieces}) >= 2  # the quote spans two chunks
    for s, e, cid in pieces:
        assert chunks[cid].start <= s and e <= chunks[cid].end
    q0 = text.index(quote)
    assert pieces[0][0] == q0 and pieces[-1][1] == q0 + len(quote)  # together they cite the whole quote
    assert all(text[a[1]:b[0]].strip() == "" for a, b in zip(pieces, pieces[1:]))  # nothing left out


def test_query_with_evidence_reports_quotes_inside_their_chunk(kb_small):
    kb, _, _ = kb_small
    r = kb.query_with_evidence("What does ledger-db hold?")
    quotes = [(c, q) for d in r["supporting_documents"] for c in d["supporting_chunks"] for q in c["quotes"]
              if q["start"] is not None]
    assert quotes
    assert [(c["chunk_id"], q["start"], q["end"]) for c, q in quotes
            if not (c["start"] <= q["start"] and q["end"] <= c["end"])] == []


@pytest.fixture
def kb_small(tmp_path):
    filler = "Backups run nightly at two in the morning. " * 3
    quote = ("ledger-db holds the shipments table, the scan events table, the depots table, the carriers table, "
             "the invoices table and the audit trail of every change made by the dispatch team over ten years.")
    text = filler + quote + " " + filler
    with graphmem.open(tmp_path / "kb", config=SMALL_CHUNKS) as kb:
        kb.ingest_with_content("d", "Ledger", "ledger.md", text,
                               [{"name": "ledger-db", "type": "database", "supporting_text": quote}])
        yield kb, text, quote
