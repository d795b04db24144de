"""Full-text index segments merged after a run that wrote a good share of them (SQLite's FTS5).

A term is looked up in every segment; a knowledge base built by many small writes kept ~20 of them
(2Wiki: 21), and merging them made the default search's BM25 reads 15-20% cheaper with the same
rankings and scores (docs/benchmarks.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphmem
from graphmem.store.sqlite import fts
from graphmem.store.sqlite.fts import MIN_SEGMENTS, fts_due, fts_segments


def _kb(tmp_path: Path) -> graphmem.KnowledgeBase:
    return graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}})


def _segments(kb: graphmem.KnowledgeBase, table: str = "chunks_fts") -> int:
    return fts_segments(kb.store.conn, table)  # type: ignore[attr-defined]


def _records(path: Path, n: int, start: int = 0) -> Path:
    path.write_text("".join(json.dumps({"id": f"r{i}", "title": f"Record {i} of Harbour {i % 7}",
                                        "text": f"Ship {i} docked at Harbour {i % 7} with cargo {i % 11}."}) + "\n"
                            for i in range(start, start + n)), encoding="utf-8")
    return path


def _rankings(kb: graphmem.KnowledgeBase) -> list[list[tuple[str, float]]]:
    return [[(h.id, round(h.score, 9)) for h in kb.search(q, k=20, preset=p).hits]
            for q in ("Harbour 3 cargo", "Ship 12", "Record of Harbour") for p in ("bm25", "default")]


def _fragmented(kb: graphmem.KnowledgeBase, n: int) -> None:
    for i in range(n):  # small writes, one segment each: as many agents' single-document ingests leave them
        kb.ingest_with_content(f"d{i}", f"Note {i}", "", f"Ship {i} docked at Harbour {i % 7}. Crew {i}.")
    assert _segments(kb) >= MIN_SEGMENTS


def test_merging_changes_nothing_a_search_sees(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        _fragmented(kb, 40)
        before = _rankings(kb)
        # the names index holds nothing here (no entities): nothing to merge there
        assert kb.store.text_indexes_due({"chunks": 40, "names": 40}) == ["chunks"]
        with kb.store.transaction():
            kb.store.compact_text_indexes(["chunks"])
        assert _segments(kb) == 1
        assert _rankings(kb) == before


def test_a_bulk_ingest_merges_the_segments_it_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # FTS5's own merges move the count between ~2 and ~15 as writes come; with the bar at 2 the run's end
    # always finds segments to merge (the bar itself: test_the_bar_and_the_share)
    monkeypatch.setattr(fts, "MIN_SEGMENTS", 2)
    with _kb(tmp_path) as kb:
        _fragmented(kb, 30)
        summary = kb.ingest_paths([_records(tmp_path / "a.jsonl", 40)], extractor="offline")
        assert summary.added == 40
        assert _segments(kb) == 1 and _segments(kb, "node_names_fts") == 1


def test_a_small_run_into_a_big_index_leaves_it_as_it_is(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        _fragmented(kb, 40)
        fragmented = _segments(kb)
        kb.ingest_paths([_records(tmp_path / "one.jsonl", 1)], extractor="none")  # 1 chunk of 41: not worth it
        assert _segments(kb) >= fragmented


def test_a_read_only_knowledge_base_is_not_compacted_and_an_unchanged_run_writes_nothing(tmp_path: Path) -> None:
    path = _records(tmp_path / "a.jsonl", 20)
    with _kb(tmp_path) as kb:
        kb.ingest_paths([path], extractor="none")
        version = kb.store.conn.execute("PRAGMA data_version").fetchone()[0]  # type: ignore[attr-defined]
        changes = kb.store.conn.total_changes  # type: ignore[attr-defined]
        assert kb.ingest_paths([path], extractor="none").unchanged == 20
        assert kb.store.conn.total_changes == changes  # type: ignore[attr-defined]
        assert kb.store.conn.execute("PRAGMA data_version").fetchone()[0] == version  # type: ignore[attr-defined]
    ro = graphmem.open(tmp_path / "kb", read_only=True, config={"embeddings": {"model": "none"}})
    with ro:
        assert ro.ingest_paths([path], extractor="none").unchanged == 20


def test_the_bar_and_the_share(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        _fragmented(kb, 40)  # 40 chunk rows, at least MIN_SEGMENTS segments
        conn = kb.store.conn  # type: ignore[attr-defined]
        assert fts_due(conn, {"chunks": 2}) == []  # 2 of 40 rows written: under a sixteenth
        assert fts_due(conn, {"chunks": 0}) == []
        assert fts_due(conn, {"chunks": 3}) == ["chunks"]  # 3 of 40: at least a sixteenth
        with kb.store.transaction():
            kb.store.compact_text_indexes(["chunks"])
        assert fts_due(conn, {"chunks": 40}) == []  # one segment now: under the bar
        with pytest.raises(ValueError, match="no full-text index 'passages'; known: chunks, names"):
            fts_due(conn, {"passages": 1})



def test_a_run_that_merges_says_so_and_one_that_does_not_takes_no_write_lock(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fts, "MIN_SEGMENTS", 2)
    with _kb(tmp_path) as kb:
        _fragmented(kb, 30)
        stages: list[str] = []
        kb.ingest_paths([_records(tmp_path / "a.jsonl", 40)], extractor="none", on_stage=stages.append)
        assert "merging the full-text index segments" in stages and _segments(kb) == 1
        taken: list[str] = []
        real = kb.store.try_write
        monkeypatch.setattr(kb.store, "try_write", lambda fn, what="": taken.append(what) or real(fn, what))
        stages.clear()
        kb.ingest_paths([_records(tmp_path / "b.jsonl", 1, start=100)], extractor="none", on_stage=stages.append)
        assert taken == [] and "merging the full-text index segments" not in stages  # 1 of 41: not due
