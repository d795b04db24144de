"""Schema migrations 0014- of the SQLite backend: the write path's storage (issue 16: disk per document).

Shipped migrations are never edited: their text is pinned by a hash in the contract suite.
"""

from __future__ import annotations

from .schema_memory import _EV, _REPLAYED

__all__ = ["WRITE_PATH_MIGRATIONS"]


def _provenance_update_trigger() -> str:
    """0012's replay trigger for evidence updates, as 0012 created it (recreated after the compaction below)."""
    cols = ("rowid", *_REPLAYED["provenance"])
    row = "json_object(" + ", ".join(f"'{c}', old.\"{c}\"" for c in cols) + ")"
    return ("CREATE TRIGGER replay_provenance_u AFTER UPDATE ON provenance BEGIN\n    INSERT INTO replay_log (ev, tbl,"
            f" op, rid, old) VALUES ({_EV}, 'provenance', 'U', old.rowid, {row});\nEND;")


_EVIDENCE_SPANS = f"""
-- A quote that is exactly its span of the chunk it cites is stored as that span: text '' with start and end set
-- (a real span is never empty), rebuilt on read from the chunk (store/sqlite/evidence.py PROVENANCE_TEXT), so
-- every read returns the same bytes. Existing evidence is compacted here; the replay log does not record it
-- (the rows mean the same before and after), so its trigger is set aside for the update.
DROP TRIGGER replay_provenance_u;
UPDATE provenance SET text = '' WHERE text <> '' AND start IS NOT NULL AND chunk_id IS NOT NULL AND text = (
    SELECT substr(c.text, provenance.start - c.start + 1, provenance."end" - provenance.start) FROM chunks c
    WHERE c.chunk_id = provenance.chunk_id AND c.start <= provenance.start AND provenance."end" <= c."end");
-- A creation time that is the document version's is stored as '' and read from the document (the same way).
UPDATE provenance SET created_at = '' WHERE created_at <> '' AND created_at = (
    SELECT d.created_at FROM documents d WHERE d.doc_id = provenance.doc_id AND d.version = provenance.version);
{_provenance_update_trigger()}
"""

WRITE_PATH_MIGRATIONS: list[tuple[str, str]] = [
    ("0014_evidence_spans", _EVIDENCE_SPANS),
    (
        "0014_events_by_type_scan",
        """
-- The (type, id) index of the change log dirtied a leaf page per event type in every write transaction (4.5 of
-- the 7.4 pages a store-only ingest's events add to each commit; most of the event append overhead): the log is
-- written on every change and read by type by followers, which read its tail from their cursor. A type filter
-- now scans the log from after_id on (as a target filter does since 0012).
DROP INDEX IF EXISTS events_type;
""",
    ),
]
