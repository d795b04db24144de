"""A batch is written in one transaction without a savepoint per document; a document failing half-way (after
some of its rows are written) rolls the batch back and the batch is written again with a savepoint per
document: the failing one is skipped alone and the others are stored as if it had never been there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.context import AFTER_INGEST
from graphmem.errors import InvalidInput

CONFIG = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}, "ingest": {"batch_size": 10, "workers": 1}}
TEXTS = {"a.txt": "Alpha Service uses Beta Store. Alpha Service runs nightly.",
         "b.txt": "Beta Store uses Gamma Disk. Gamma Disk is large.",
         "c.txt": "Gamma Disk feeds Delta Cache. Delta Cache is warm."}


def _docs(root: Path, names: list[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / name).write_text(TEXTS[name], encoding="utf-8")
    return root


def _state(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    q = kb.store.conn.execute  # type: ignore[attr-defined]
    return {
        "documents": sorted(r[0] for r in q("SELECT doc_id FROM documents")),
        "chunks": sorted(r[0] for r in q("SELECT chunk_id FROM chunks")),
        "nodes": sorted(r[0] for r in q("SELECT name FROM nodes")),
        "names": sorted(r[0] for r in q("SELECT norm FROM node_names")),
        "edges": sorted(r[0] for r in q("SELECT id FROM edges")),
        "evidence": sorted((r[0], r[1], r[2]) for r in q("SELECT item_id, doc_id, text FROM provenance")),
        "mentions": sorted((r[0], r[1]) for r in q("SELECT node_id, chunk_id FROM mentions")),
        "events": [(r[0], r[1]) for r in q("SELECT type, target FROM events ORDER BY id")],
        "fts": sorted(r[0] for r in q("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'gamma OR alpha'")),
    }


def test_a_document_failing_half_way_is_skipped_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    calls: list[str] = []

    def fail_b(doc_id: str, node_ids: list[str], warnings: list[str]) -> None:
        calls.append(doc_id)
        assert node_ids  # called after the document's entities were written
        if doc_id.endswith("b.txt"):
            raise InvalidInput("b.txt: refused by a hook")

    with graphmem.open(tmp_path / "kb", config=CONFIG) as kb:
        kb.ctx.hooks.register(AFTER_INGEST, fail_b)
        s = kb.ingest_paths([_docs(tmp_path / "docs", ["a.txt", "b.txt", "c.txt"])], extractor="offline")
        assert (s.added, s.documents, s.interrupted) == (2, 2, False)
        assert [(x.path, x.reason) for x in s.skipped] == [("docs/b.txt", "b.txt: refused by a hook")]
        # The unguarded try stopped at b; the second, guarded pass wrote all three (b undone alone).
        assert [c.rsplit("/", 1)[-1] for c in calls] == ["a.txt", "b.txt", "a.txt", "b.txt", "c.txt"]
        got = _state(kb)
    (tmp_path / "docs" / "b.txt").rename(tmp_path / "b.txt")
    with graphmem.open(tmp_path / "kb2", config=CONFIG) as kb:  # a and c alone, under the same ids
        kb.ingest_paths([tmp_path / "docs"], extractor="offline")
        want = _state(kb)
    assert got == want
    assert all("b.txt" not in d for d in got["documents"]) and "beta store uses gamma disk" not in str(got["evidence"])


def test_ctrl_c_while_a_document_is_written_leaves_the_batch_out(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    def stop_at_b(doc_id: str, node_ids: list[str], warnings: list[str]) -> None:
        if doc_id.endswith("b.txt"):
            raise KeyboardInterrupt

    docs = _docs(tmp_path / "docs", ["a.txt", "b.txt", "c.txt"])
    with graphmem.open(tmp_path / "kb", config=CONFIG) as kb:
        kb.ctx.hooks.register(AFTER_INGEST, stop_at_b)
        s = kb.ingest_paths([docs], extractor="offline")
        assert s.interrupted and (s.added, s.documents) == (0, 0)
        assert _state(kb)["documents"] == [] and _state(kb)["events"] == [] and _state(kb)["nodes"] == []
    with graphmem.open(tmp_path / "kb", config=CONFIG) as kb:  # the next run writes them all
        s = kb.ingest_paths([docs], extractor="offline")
        assert (s.added, s.unchanged, s.interrupted) == (3, 0, False)
        assert len(_state(kb)["documents"]) == 3
