"""backup and restore as a stranger uses them: an interrupted backup leaves nothing (and restore refuses a cut
one), a backup inside the knowledge base is not restored over it, --read-only refuses, a backup of a PostgreSQL
knowledge base restores into graph.db; migrate refuses a target inside the source."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmem
from graphmem.errors import InvalidInput
from graphmem.portability import backup, migrate, restore
from graphmem.portability.backup import MARKER


def _kb(home: Path) -> graphmem.KnowledgeBase:
    kb = graphmem.open(home)
    kb.ingest_with_content("doc_1", "Crash notes", "notes.txt", "System crashes due to memory leaks.")
    kb.memory.add("I keep the crash notes", user_id="u")
    return kb


def test_an_interrupted_backup_leaves_no_folder_and_a_retry_works(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    mod = sys.modules["graphmem.portability.backup"]  # the package exports the function under that name
    with _kb(tmp_path / "kb") as kb:
        def cut(src: Path, dst: Path) -> int:
            raise KeyboardInterrupt

        with monkeypatch.context() as m:
            m.setattr(mod, "_copy_wiki", cut)
            with pytest.raises(KeyboardInterrupt):
                backup(kb.ctx, tmp_path / "bk")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["kb"]  # before: bk/ with graph.db and half a wiki
        done = backup(kb.ctx, tmp_path / "bk")
        assert (tmp_path / "bk" / MARKER).is_file() and done["last_event_id"] == kb.store.last_event_id()


def test_restore_refuses_a_folder_that_is_not_a_whole_backup(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb") as kb:
        backup(kb.ctx, tmp_path / "bk")
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "graph.db").write_bytes((tmp_path / "bk" / "graph.db").read_bytes())  # what an old Ctrl-C left
    with pytest.raises(InvalidInput, match="is not a whole backup"):
        restore(cut, tmp_path / "new")
    assert not (tmp_path / "new").exists()
    restore(tmp_path / "bk", tmp_path / "new")
    with graphmem.open(tmp_path / "new") as again:
        assert [d.doc_id for d in again.documents.list()] == ["doc_1"]


def test_a_backup_inside_the_home_is_refused_before_anything_moves(tmp_path: Path) -> None:
    """restore --force moved the home aside first, then failed with FileNotFoundError: the backup was gone."""
    with _kb(tmp_path / "kb") as kb:
        backup(kb.ctx, tmp_path / "bk")
    (tmp_path / "bk").rename(tmp_path / "kb" / "bk")
    with pytest.raises(InvalidInput, match="inside it"):
        restore(tmp_path / "kb" / "bk", tmp_path / "kb", force=True)
    assert (tmp_path / "kb" / "graph.db").is_file() and not (tmp_path / "kb.before-restore").exists()


def test_read_only_refuses_a_restore(tmp_path: Path) -> None:
    from tests.cli_inproc import graphmem_env, run_cli

    with _kb(tmp_path / "kb") as kb:
        backup(kb.ctx, tmp_path / "bk")
    got = run_cli(["--home", tmp_path / "kb", "--read-only", "restore", tmp_path / "bk", "--force"],
                  env=graphmem_env())
    assert got.returncode == 1 and "read-only" in got.stderr
    assert not (tmp_path / "kb.before-restore").exists()


def test_a_backup_from_postgresql_restores_into_graph_db(tmp_path: Path) -> None:
    """The backup's config.toml kept [store] url: the restored folder used the live server, restoring nothing."""
    with _kb(tmp_path / "kb") as kb:
        backup(kb.ctx, tmp_path / "bk")
    from graphmem.config import set_config_value

    set_config_value(tmp_path / "bk", "store", "url", "postgresql://u@db.invalid/kb")  # as a PG folder's is
    assert "db.invalid" in (tmp_path / "bk" / "config.toml").read_text(encoding="utf-8")
    done = restore(tmp_path / "bk", tmp_path / "new")
    assert done["notes"] and "graph.db" in done["notes"][0]
    with graphmem.open(tmp_path / "new") as again:
        assert again.config.store.url == "" and [d.doc_id for d in again.documents.list()] == ["doc_1"]


def test_migrate_refuses_a_target_inside_the_source(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb") as kb:
        with pytest.raises(InvalidInput, match="inside this knowledge base's folder"):
            migrate(kb.ctx, str(tmp_path / "kb" / "wiki" / "newsub"))
        assert not (tmp_path / "kb" / "wiki" / "newsub").exists()


def test_replay_before_a_migration_says_why_it_cannot(tmp_path: Path) -> None:
    """The copy's refusal blamed 'an older graphmem' for a log that a migrate started."""
    with _kb(tmp_path / "kb") as kb:
        migrate(kb.ctx, str(tmp_path / "copy"))
    with graphmem.open(tmp_path / "copy") as copy:
        with pytest.raises(InvalidInput, match=r"came with an import or a migrate"):
            copy.events.replay(1)


def test_a_backup_into_an_existing_empty_folder_is_written_in_place(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: a mount point or a folder made for the user (parent not writable) cannot take a rename; such a
    folder is written in place, and an interruption empties it again."""
    import sys

    mod = sys.modules["graphmem.portability.backup"]
    (tmp_path / "mnt").mkdir()
    with _kb(tmp_path / "kb") as kb:
        with monkeypatch.context() as m:
            m.setattr(mod, "_copy_wiki", lambda src, dst: (_ for _ in ()).throw(KeyboardInterrupt))
            with pytest.raises(KeyboardInterrupt):
                backup(kb.ctx, tmp_path / "mnt")
        assert list((tmp_path / "mnt").iterdir()) == []
        backup(kb.ctx, tmp_path / "mnt")
    assert (tmp_path / "mnt" / MARKER).is_file() and sorted(p.name for p in tmp_path.iterdir()) == ["kb", "mnt"]


def test_restore_under_graphmem_read_only_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.cli_inproc import graphmem_env, run_cli

    with _kb(tmp_path / "kb") as kb:
        backup(kb.ctx, tmp_path / "bk")
    got = run_cli(["--home", tmp_path / "kb", "restore", tmp_path / "bk", "--force"],
                  env=graphmem_env(GRAPHMEM_READ_ONLY="1"))
    assert got.returncode == 1 and "read-only" in got.stderr and not (tmp_path / "kb.before-restore").exists()


def test_setting_a_value_under_a_commented_table_header_keeps_one_table(tmp_path: Path) -> None:
    from graphmem.config import load_config, set_config_value

    (tmp_path / "config.toml").write_text('[store]  # the database\nurl = "postgresql://u@h/db"\n', encoding="utf-8")
    set_config_value(tmp_path, "store", "url", "")
    assert load_config(tmp_path, environ={}).store.url == ""  # before: a second [store], invalid TOML


def test_a_killed_backups_hidden_folder_is_removed_by_the_next(tmp_path: Path) -> None:
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()  # a pid that no longer runs
    left = tmp_path / f".bk.partial-{dead}"
    (left / "wiki").mkdir(parents=True)
    (left / "graph.db").write_bytes(b"half a copy")
    with _kb(tmp_path / "kb") as kb:
        backup(kb.ctx, tmp_path / "bk")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bk", "kb"]


def test_check_while_another_process_holds_the_write_lock_reports_no_fts_damage(tmp_path: Path) -> None:
    """The FTS integrity check is an INSERT: check waited the whole busy timeout (30 s), then reported every
    index 'out of step ... (database is locked)' and exited 1. It now compares row counts without waiting."""
    import sqlite3

    from graphmem.portability import check

    with _kb(tmp_path / "kb") as kb:
        other = sqlite3.connect(tmp_path / "kb" / "graph.db", isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # another process's writer, mid-transaction
            report = check(kb.ctx)
            assert report["fts"] == [] and report["ok"] is True, report
        finally:
            other.execute("ROLLBACK")
            other.close()
