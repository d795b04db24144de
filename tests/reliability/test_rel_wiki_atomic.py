"""Reliability of the wiki (issue 12): pages generated inside an ingest share the ingest's
fate. When the ingest's COMMIT fails, the wiki files (summary page, index.md, index shards)
and log.md are left exactly as they were, so no page is listed for a document that does not
exist."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.errors import BackendError

pytestmark = pytest.mark.reliability

TEXT = "Ada Lovelace worked with Charles Babbage on the Analytical Engine in London."


class _CommitFailsOnce:
    """Stands in for the store's connection: the first COMMIT fails as on a full disk."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.failed = False

    def execute(self, sql: str, *args: Any) -> Any:
        if not self.failed and sql.strip().upper() == "COMMIT":
            self.failed = True
            raise sqlite3.OperationalError("database or disk is full")
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def _wiki_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_failed_commit_of_an_ingest_leaves_no_wiki_file_or_log_line(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_EMBED_MODEL", "none")
    with graphmem.open(str(tmp_path / "kb"), config={"wiki": {"auto_pages": True}}) as kb:
        kb.ingest_with_content("doc_first", "First document", "s1", TEXT, [], [])
        wiki = kb.wiki.dir
        before = _wiki_files(wiki)
        assert any("first" in name for name in before), before  # its summary page exists
        pages_before = kb.wiki.list_pages()

        failing = _CommitFailsOnce(kb.store.conn)
        monkeypatch.setattr(kb.store, "conn", failing)
        with pytest.raises(BackendError, match="disk full"):
            kb.ingest_with_content("doc_second", "Second document", "s2", "Grace Hopper wrote COBOL.", [], [])
        assert failing.failed
        monkeypatch.setattr(kb.store, "conn", failing._conn)

        after = _wiki_files(wiki)
        assert after == before  # no summary page, no index or shard change, no log line, no temp file
        assert not any("second" in name.lower() for name in after)
        assert kb.store.get_document("doc_second") is None  # the store rolled back
        pages = kb.wiki.list_pages()
        assert pages == pages_before
        on_disk = {p for p in after if "/" in p and not p.startswith("_") and p.endswith(".md")}
        assert {str(Path(p["path"]).resolve().relative_to(wiki.resolve()).as_posix()) for p in pages} == on_disk

        # The knowledge base goes on: the same ingest succeeds now, with its page and log line.
        kb.ingest_with_content("doc_second", "Second document", "s2", "Grace Hopper wrote COBOL.", [], [])
        final = _wiki_files(wiki)
        assert any("second" in name for name in final if name.startswith("summary/"))
        assert b"doc_second" in final["log.md"]
        assert len(kb.wiki.list_pages()) == len(pages_before) + 1


def test_failed_commit_of_a_page_write_restores_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guard for the stand-alone path (apply owns the transaction): its undo now runs through
    the same commit hooks, before the ROLLBACK."""
    monkeypatch.setenv("GRAPHMEM_EMBED_MODEL", "none")
    with graphmem.open(str(tmp_path / "kb")) as kb:
        kb.wiki.write_page("notes", "Kept", "A page that stays.\n")
        wiki = kb.wiki.dir
        before = _wiki_files(wiki)
        failing = _CommitFailsOnce(kb.store.conn)
        monkeypatch.setattr(kb.store, "conn", failing)
        with pytest.raises(BackendError, match="disk full"):
            kb.wiki.write_page("notes", "Lost", "A page whose commit fails.\n")
        monkeypatch.setattr(kb.store, "conn", failing._conn)
        assert failing.failed
        assert _wiki_files(wiki) == before
        assert [p["title"] for p in kb.wiki.list_pages()] == ["Kept"]
