"""Store failures (issue 12, defects 8 and 12): a full disk and other SQLite failures at any
point of a transaction are one clear BackendError with nothing written; reads work on a
read-only knowledge base and never fail because another process is writing."""

from __future__ import annotations

import json
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
        with pytest.raises(BackendError, match=r"^disk full:.*nothing was written"), store.transaction():
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
        with pytest.raises(kind) as info, store.transaction():
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


# -- defect 12: reads never write, never wait for a writer, and work read-only -----------------

QUICK_ENTITIES = [{"name": "memory leak", "type": "issue", "supporting_text": "memory leaks"}]


def _populate(home: Path) -> None:
    with graphmem.open(home, config=NO_PAGES) as kb:
        kb.ingest_with_content("doc_1", "Crash", "crash.txt", "System crashes due to memory leaks.", QUICK_ENTITIES)
        kb.memory.add("I like green tea", user_id="u")
        kb.wiki.write_page("topic", "Tea", "About green tea.")


def _reads(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    return {
        "search": [h.to_dict()["doc_id"] for h in kb.search("memory leaks").hits],
        "pages": [p["slug"] for p in kb.wiki.list_pages()],
        "page": kb.wiki.read_page("topic", "Tea")["content"].strip(),
        "wiki_search": [h["slug"] for h in kb.wiki.search_wiki("tea")],
        "memory": [m["memory"] for m in kb.memory.search("green tea", user_id="u")["results"]],
        "entity": kb.graph.get_entity("memory leak")["name"],
        "doc": kb.documents.get("doc_1").title,
    }


EXPECTED_READS = {"search": ["doc_1"], "pages": ["tea"], "page": "About green tea.", "wiki_search": ["tea"],
                  "memory": ["I like green tea"], "entity": "memory leak", "doc": "Crash"}


def _forced_read_only_case(home: Path, opener: Any) -> None:
    _populate(home)
    db_before = (home / "graph.db").read_bytes()
    files_before = sorted(p.relative_to(home).as_posix() for p in home.rglob("*")
                          if not p.name.startswith("graph.db"))
    with opener(home) as kb:
        assert kb.read_only
        for _ in range(2):
            assert _reads(kb) == EXPECTED_READS
        notes = [n for n in kb.notes if "read-only" in n]
        assert len(notes) == 1 and str(home) in notes[0]
        with pytest.raises(BackendError, match="is open read-only") as info:
            kb.memory.add("new fact", user_id="u")
        assert str(home) in str(info.value)
        with pytest.raises(BackendError, match="is open read-only"):
            kb.wiki.write_page("topic", "Coffee", "About coffee.")
        with pytest.raises(BackendError, match="is open read-only"):
            kb.ingest_with_content("doc_2", "Other", "o.txt", "Other text.")
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")
                  if not p.name.startswith("graph.db")) == files_before
    with graphmem.open(home) as kb:
        stats = kb.stats()
        assert stats["documents"] == 1 and kb.memory.get_all(user_id="u")["results"][0]["memory"] == \
            "I like green tea"
        # Nothing was recorded by the read-only reads: no use count, no decay event.
        assert [e.type for e in kb.events.list(limit=1000)].count("memory.decayed") == 0
    assert db_before  # the file was there to compare with (its bytes change with WAL checkpoints)


def test_read_only_open_serves_reads_and_refuses_writes(tmp_path: Path) -> None:
    _forced_read_only_case(tmp_path / "kb", lambda home: graphmem.open(home, read_only=True))


def test_read_only_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_READ_ONLY", "1")
    home = tmp_path / "kb"
    with pytest.raises(graphmem.InvalidInput, match="read-only"):
        graphmem.open(home)  # a read-only open never creates a knowledge base
    assert not home.exists()
    monkeypatch.delenv("GRAPHMEM_READ_ONLY")
    _populate(home)
    monkeypatch.setenv("GRAPHMEM_READ_ONLY", "yes")
    with graphmem.open(home) as kb:
        assert kb.read_only and _reads(kb) == EXPECTED_READS
    monkeypatch.setenv("GRAPHMEM_READ_ONLY", " Off ")
    with graphmem.open(home) as kb:
        assert not kb.read_only


@pytest.mark.parametrize("value", ["2", "garbage", "y"])
def test_a_read_only_switch_neither_on_nor_off_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          value: str) -> None:
    """GRAPHMEM_READ_ONLY=2 (or a typo) opened the knowledge base writable without a word."""
    home = tmp_path / "kb"
    _populate(home)
    monkeypatch.setenv("GRAPHMEM_READ_ONLY", value)
    with pytest.raises(graphmem.InvalidInput, match="GRAPHMEM_READ_ONLY=.* is neither on nor off"):
        graphmem.open(home)
    bad = CliRunner().invoke(cli, ["--home", str(home), "stats"], obj={})
    assert bad.exit_code != 0 and "GRAPHMEM_READ_ONLY" in bad.output and "Traceback" not in bad.output


def test_cli_read_only_reads_and_one_line_write_error(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    _populate(home)
    runner = CliRunner()
    ok = runner.invoke(cli, ["--home", str(home), "--read-only", "wiki", "list", "--json"], obj={})
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(cli, ["--home", str(home), "--read-only", "memory", "add", "x", "--user", "u"], obj={})
    assert bad.exit_code == 1
    lines = [ln for ln in bad.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "is open read-only" in lines[0] and str(home) in lines[0]


CHMOD_CHILD = r"""
import json, os, sys, warnings
# Everything the reads need is imported before privileges are dropped: the interpreter's own
# files may not be readable by 'nobody'.
import graphmem, graphmem.store.sqlite, graphmem.retrieval.search, graphmem.faces.wiki
import graphmem.ingest.extractors.offline, graphmem.memory.search, encodings.idna, unicodedata
import graphmem.portability, graphmem.portability.export, graphmem.portability.graphs
from pathlib import Path
home, out_dir = sys.argv[1], Path(sys.argv[2])
if os.geteuid() == 0:
    os.setgid(65534)
    os.setuid(65534)  # nobody: the permission bits now apply
warnings.simplefilter("ignore")
out = {}
with graphmem.open(home) as kb:
    out["read_only"] = kb.read_only
    out["notes"] = [n for n in kb.notes if "read-only" in n]
    out["search"] = [h.to_dict()["doc_id"] for h in kb.search("memory leaks").hits]
    out["pages"] = [p["slug"] for p in kb.wiki.list_pages()]
    out["page"] = kb.wiki.read_page("topic", "Tea")["content"].strip()
    out["memory"] = [m["memory"] for m in kb.memory.search("green tea", user_id="u")["results"]]
    try:
        kb.memory.add("new", user_id="u")
        out["write"] = "written"
    except graphmem.BackendError as exc:
        out["write"] = str(exc)
    # reads of the whole file: check and export open their own read-only connection (no -shm either)
    out["check"] = graphmem.portability.check(kb.ctx)["ok"]
    out["export"] = graphmem.portability.export(kb.ctx, "jsonl", out_dir / "kb.jsonl")["counts"]["documents"]
    try:
        graphmem.portability.export(kb.ctx, "jsonl", Path(home) / "kb.jsonl")
    except graphmem.InvalidInput as exc:
        out["export_here"] = str(exc)
    out["left"] = sorted(p.name for p in [*Path(home).iterdir(), *out_dir.iterdir()])
print(json.dumps(out))
"""


def test_a_folder_nobody_may_write_is_read_read_only(tmp_path: Path) -> None:
    """chmod a-w on the folder; as root (which ignores permission bits) the reader drops to
    'nobody' first, so the real permission check runs either way."""
    import os
    import shutil
    import stat
    import subprocess
    import sys
    import tempfile

    if os.geteuid() == 0:
        try:
            import pwd
            pwd.getpwuid(65534)
        except (ImportError, KeyError):
            pytest.skip("running as root without a 'nobody' user to drop to")
    base = Path(tempfile.mkdtemp(prefix="gm-ro-"))  # not under pytest's root-only tmp folder
    try:
        base.chmod(0o755)
        home = base / "kb"
        _populate(home)
        for p in [home, *home.rglob("*")]:
            p.chmod(0o555 if p.is_dir() else 0o444)
        out_dir = base / "out"
        out_dir.mkdir()
        out_dir.chmod(0o777)
        result = subprocess.run([sys.executable, "-c", CHMOD_CHILD, str(home), str(out_dir)], capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout)
        assert out["read_only"] is True
        assert len(out["notes"]) == 1 and "may not write" in out["notes"][0]
        assert (out["search"], out["pages"], out["page"], out["memory"]) == (
            ["doc_1"], ["tea"], "About green tea.", ["I like green tea"])
        assert "is open read-only" in out["write"] and str(home) in out["write"]
        # both used to end in "attempt to write a readonly database" (a traceback in the CLI)
        assert (out["check"], out["export"]) == (True, 1)
        assert out["export_here"].startswith(f"out: cannot write {home / 'kb.jsonl'} (Permission denied)")
        assert out["left"] == sorted([*(p.name for p in home.iterdir()), "kb.jsonl"])  # no partial files
    finally:
        for p in [base, *base.rglob("*")]:
            p.chmod(stat.S_IRWXU)
        shutil.rmtree(base)


WRITER = r"""
import sys, time, warnings
import graphmem
warnings.simplefilter("ignore")
home, rounds, PER_ROUND = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with graphmem.open(home, config={"wiki": {"auto_pages": False}}) as kb:
    for r in range(rounds):
        with kb.store.transaction():  # one big transaction (~0.3 s): many documents and memories
            for j in range(PER_ROUND):
                text = " ".join(f"Component{r}x{j}x{i} uses Library{i % 7} for parsing." for i in range(400))
                kb.ingest_with_content(f"w{r}_{j}", f"Writer {r} {j}", "w.txt", text)
                kb.memory.add(f"green tea fact {r} {j}", user_id="u")
        kb.wiki.write_page("topic", f"Round {r}", f"Round {r} about green tea.")
print("done")
"""

READER = r"""
import json, os, sys, warnings
import graphmem
warnings.simplefilter("ignore")
home, stop = sys.argv[1], sys.argv[2]
failures, rounds = [], 0
# A short busy timeout: a read that waited for the writer's lock would fail quickly.
with graphmem.open(home, config={"store": {"busy_timeout": 0.05}, "wiki": {"autosync_interval": 0.0}}) as kb:
    while not os.path.exists(stop) or rounds == 0:
        for name, call in (("memory.search", lambda: kb.memory.search("green tea", user_id="u")),
                           ("wiki.list_pages", lambda: kb.wiki.list_pages()),
                           ("wiki.read_page", lambda: kb.wiki.read_page("topic", "Tea")),
                           ("wiki.search_wiki", lambda: kb.wiki.search_wiki("tea")),
                           ("search", lambda: kb.search("Library3 parsing", kinds=["chunk", "page"]))):
            try:
                call()
            except Exception as exc:  # counted, not raised: the test reports every failure
                failures.append(f"{name}: {type(exc).__name__}: {exc}"[:200])
        rounds += 1
print(json.dumps({"rounds": rounds, "failures": failures}))
"""


ROUNDS, PER_ROUND = 5, 100


def test_reads_never_fail_while_another_process_writes(tmp_path: Path) -> None:
    import subprocess
    import sys

    home = tmp_path / "kb"
    _populate(home)
    stop = tmp_path / "writer-done"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(home), str(stop)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        writer = subprocess.run([sys.executable, "-c", WRITER, str(home), str(ROUNDS), str(PER_ROUND)],
                                capture_output=True, text=True, timeout=300)
        assert writer.returncode == 0, writer.stderr
    finally:
        stop.touch()
    out, err = reader.communicate(timeout=300)
    assert reader.returncode == 0, err
    result = json.loads(out)
    assert result["rounds"] > 0
    assert result["failures"] == [], result["failures"][:5]
    with graphmem.open(home) as kb:
        assert kb.stats()["documents"] == 1 + ROUNDS * PER_ROUND
        assert kb.store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_cli_init_does_not_rewrite_the_config_of_a_read_only_kb(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    _populate(home)
    before = (home / "config.toml").read_text(encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(home), "--read-only", "init", "--embedder", "none"], obj={})
    assert result.exit_code == 1 and "is open read-only" in result.output
    assert (home / "config.toml").read_text(encoding="utf-8") == before
