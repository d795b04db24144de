"""Store failures (issue 12, defects 8 and 12): a full disk and other SQLite failures at any
point of a transaction are one clear BackendError with nothing written; reads work on a
read-only knowledge base and never fail because another process is writing."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import graphmem
from graphmem.cli import cli
from graphmem.errors import BackendError, StoreBusy
from graphmem.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.reliability

NO_PAGES = {"wiki": {"auto_pages": False}}


def _fill_up(kb: graphmem.KnowledgeBase, spare_pages: int = 2) -> None:
    """Make the database "full" (SQLITE_FULL) a few pages past its current size."""
    pages = kb.store.conn.execute("PRAGMA page_count").fetchone()[0]
    kb.store.conn.execute(f"PRAGMA max_page_count = {pages + spare_pages}")


def _counts(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    s = kb.stats()
    return {k: s[k] for k in ("documents", "document_versions", "chunks", "events", "nodes")}


# -- defect 8: disk full ----------------------------------------------------------------------


def test_disk_full_is_a_backend_error_and_writes_nothing(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config=NO_PAGES) as kb:
        kb.ingest_with_content("a", "A", "a.txt", "A small first document.")
        before = _counts(kb)
        _fill_up(kb)
        with pytest.raises(BackendError) as info:
            kb.ingest_with_content("big", "Big", "big.txt", "many words here " * 100_000)
        message = str(info.value)
        assert message.startswith("disk full:") and "nothing was written" in message
        assert str(tmp_path / "kb") in message
        assert "cannot rollback" not in message
        assert _counts(kb) == before
        assert kb.store.conn.in_transaction is False
        # The store is still usable: a small write fits in the pages that are left.
        kb.ingest_with_content("c", "C", "c.txt", "tiny")
        assert kb.documents.get("c").version == 1
        assert kb.stats()["documents"] == 2


def test_disk_full_inside_a_savepoint_is_a_backend_error(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config=NO_PAGES) as kb:
        store = kb.store
        before = _counts(kb)
        _fill_up(kb, spare_pages=1)
        with pytest.raises(BackendError, match=r"^disk full:.*nothing was written"):
            with store.transaction():
                store.append_event("test", "t", kb.now(), {"x": 1})
                with store.savepoint():
                    store.append_event("test", "t", kb.now(), {"big": "x" * 2_000_000})
        assert store.conn.in_transaction is False
        assert _counts(kb) == before


class _FailingCommit:
    """A connection proxy whose COMMIT fails the way SQLite reports a failure there."""

    def __init__(self, conn: sqlite3.Connection, error: sqlite3.Error) -> None:
        self._conn = conn
        self._error = error

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT":
            raise self._error
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def _sqlite_error(message: str, code: int) -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError(message)
    exc.sqlite_errorcode = code  # type: ignore[attr-defined]
    return exc


@pytest.mark.parametrize("message, code, expected, kind", [
    ("database or disk is full", 13, "disk full:", BackendError),
    ("disk I/O error", 10 | (3 << 8), "disk I/O error:", BackendError),
    ("attempt to write a readonly database", 8, "read-only:", BackendError),
    ("database is locked", 5, "is busy", StoreBusy),
])
def test_commit_failures_are_named_and_write_nothing(tmp_path: Path, message: str, code: int,
                                                     expected: str, kind: type) -> None:
    store = SqliteStore(tmp_path / "graph.db")
    real = store.conn
    try:
        store.conn = _FailingCommit(real, _sqlite_error(message, code))  # type: ignore[assignment]
        with pytest.raises(kind) as info:
            with store.transaction():
                store.append_event("test", "t", "2024-01-01T00:00:00Z", {})
        assert expected in str(info.value) and "nothing was written" in str(info.value)
        assert real.in_transaction is False
        assert real.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    finally:
        store.conn = real
        store.close()


def test_cli_disk_full_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "kb"
    graphmem.open(home, config=NO_PAGES).close()
    (tmp_path / "big.txt").write_text("many words here " * 100_000, encoding="utf-8")
    original = SqliteStore._configure

    def tiny_disk(self: SqliteStore) -> None:
        original(self)
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count = {pages + 2}")

    monkeypatch.setattr(SqliteStore, "_configure", tiny_disk)
    result = CliRunner().invoke(cli, ["--home", str(home), "ingest", str(tmp_path / "big.txt")], obj={})
    assert result.exit_code == 1, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert lines[-1].startswith("error: disk full:") and "nothing was written" in lines[-1]
    assert "Traceback" not in result.output
