"""``graphmem migrate --to FOLDER`` between two SQLite knowledge bases: every row, every wiki file, the same
searches; a non-empty or bad target is refused and nothing is written."""

from __future__ import annotations

import json

import pytest

import graphmem
from cli_inproc import graphmem_env, run_cli
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT, snapshot
from graphmem.errors import Conflict, InvalidInput
from graphmem.portability import migrate


def _fill(kb: graphmem.KnowledgeBase) -> None:
    kb.ingest_with_content("doc_1", "System Crash Analysis", "notes/crash.txt", QUICKSTART_TEXT,
                           QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    kb.ingest_with_content("doc_2", "Cache Design", "notes/cache.txt",
                           "The cache service uses Redis. Redis stores sessions for the login service.")
    kb.memory.add("Ann prefers tea in the morning", user_id="ann")
    kb.wiki.write_page("topic", "Runbook", "Restart the [[memory-leak]] service when it crashes.")


@pytest.fixture
def source(tmp_path):
    with graphmem.open(tmp_path / "src") as kb:
        _fill(kb)
        yield kb


def test_migrate_to_a_new_folder_copies_rows_files_and_searches(source, tmp_path):
    target = tmp_path / "copy"
    report = migrate(source.ctx, str(target))
    assert report["ok"] and report["counts_ok"] and report["backend"] == "sqlite"
    assert report["counts"]["documents"] == {"source": 2, "target": 2, "ok": True}
    assert report["counts"]["events"]["target"] == report["counts"]["events"]["source"] + 1
    assert report["search"]["queries"] >= 2 and report["search"]["mean_overlap_at_10"] == 1.0
    with graphmem.open(target) as copy:
        want, got = snapshot(source), snapshot(copy)
        assert got.pop("event_ids")[:-1] == want.pop("event_ids")
        assert {k: v for k, v in got.items() if k not in ("home", "events")} == \
            {k: v for k, v in want.items() if k not in ("home", "events")}
        assert copy.events.list(limit=100000)[-1].type == "kb.migrated"
        page = copy.wiki.read_page("topic", "Runbook")
        assert "Restart the [[memory-leak]]" in page.content
        assert [h.id for h in copy.search("memory leak crash").hits] == [h.id for h in source.search(
            "memory leak crash").hits]
        assert [m.memory for m in copy.memory.get_all(user_id="ann").results] == ["Ann prefers tea in the morning"]
        # the folder's wiki is the store's: a sync finds nothing to add or remove
        res = copy.wiki.sync()
        assert (res.indexed, res.removed) == ([], [])


def test_migrate_refuses_a_non_empty_target_and_leaves_it_alone(source, tmp_path):
    with graphmem.open(tmp_path / "other") as other:
        other.ingest_with_content("x", "X", "x.txt", "Something else entirely.")
        before = snapshot(other)
    with pytest.raises(Conflict, match="not empty"):
        migrate(source.ctx, str(tmp_path / "other"))
    with graphmem.open(tmp_path / "other") as other:
        assert snapshot(other) == before


def test_migrate_refuses_itself_and_bad_targets(source, tmp_path):
    with pytest.raises(InvalidInput, match="own folder"):
        migrate(source.ctx, str(source.home))
    with pytest.raises(InvalidInput, match="PostgreSQL URL"):
        migrate(source.ctx, "mysql://u:pw@h/db")
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(InvalidInput, match="not a folder"):
        migrate(source.ctx, str(tmp_path / "afile"))
    with pytest.raises(InvalidInput, match="--queries"):
        migrate(source.ctx, str(tmp_path / "new"), queries=-1)
    assert not (tmp_path / "new").exists()


def test_migrate_command_prints_the_verification(source, tmp_path):
    source.close()
    env = graphmem_env()
    p = run_cli(["--home", str(tmp_path / "src"), "migrate", "--to", str(tmp_path / "c1")], env=env)
    assert p.returncode == 0, p.stderr
    assert "documents" in p.stdout and "mean overlap@10 1.000" in p.stdout and "verified" in p.stdout
    p = run_cli(["--home", str(tmp_path / "src"), "migrate", "--to", str(tmp_path / "c2"), "--json"], env=env)
    data = json.loads(p.stdout)
    assert data["ok"] is True and data["counts"]["chunks"]["source"] == data["counts"]["chunks"]["target"] > 0
    p = run_cli(["--home", str(tmp_path / "src"), "migrate", "--to", str(tmp_path / "c1")], env=env)
    assert p.returncode == 1 and "not empty" in p.stderr and "Traceback" not in p.stderr
