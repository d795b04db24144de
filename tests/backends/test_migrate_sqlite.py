"""``graphmem migrate --to FOLDER`` between two SQLite knowledge bases: every row, every wiki file, the same
searches; a non-empty or bad target is refused and nothing is written."""

from __future__ import annotations

import importlib
import json

import pytest
import tomllib

import graphmem
from cli_inproc import graphmem_env, run_cli
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT, snapshot
from graphmem.errors import BackendError, Conflict, GraphmemError, InvalidInput
from graphmem.portability import migrate
from graphmem.portability.migrate import render as migrate_render


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


def test_a_page_path_that_leaves_the_wiki_is_refused_and_nothing_is_written(source, tmp_path):
    with source.store.transaction():  # a row no writer of graphmem makes: as an edited or restored store could
        source.store.conn.execute("UPDATE pages SET path = '../../escaped.md' WHERE slug = 'runbook'")
    with pytest.raises(InvalidInput) as err:
        migrate(source.ctx, str(tmp_path / "out" / "copy"))
    assert "'runbook'" in str(err.value) and "leaves the wiki folder" in str(err.value)
    assert not (tmp_path / "out" / "copy").exists() and not (tmp_path / "escaped.md").exists()
    assert not (tmp_path / "out" / "escaped.md").exists()


def test_a_linked_folder_in_the_new_wiki_is_not_followed(source, tmp_path, monkeypatch):
    module = importlib.import_module("graphmem.portability.migrate")
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "copy"
    real_files = module._page_files

    def plant_link(ctx):  # a link appears in the new folder between its creation and the writes
        (target / "wiki" / "topic").symlink_to(outside, target_is_directory=True)
        return real_files(ctx)

    monkeypatch.setattr(module, "_page_files", plant_link)
    with pytest.raises(GraphmemError, match="symbolic link"):
        migrate(source.ctx, str(target))
    assert list(outside.iterdir()) == [] and not target.exists()


def test_wiki_files_are_copied_as_bytes(source, tmp_path):
    raw = b"caf\xe9 in latin-1\n"
    (source.home / "wiki" / "notes.txt").write_bytes(raw)
    report = migrate(source.ctx, str(tmp_path / "copy"))
    assert report["ok"] and (tmp_path / "copy" / "wiki" / "notes.txt").read_bytes() == raw


def test_a_failed_copy_is_a_graphmem_error_and_removes_the_new_folder(source, tmp_path, monkeypatch):
    module = importlib.import_module("graphmem.portability.migrate")
    source.close()

    def broken(*args):
        raise RuntimeError("verification broke")

    monkeypatch.setattr(module, "_verify", broken)
    target = tmp_path / "out" / "copy"
    p = run_cli(["--home", str(tmp_path / "src"), "migrate", "--to", str(target)], env=graphmem_env())
    assert p.returncode != 0 and "verification broke" in p.stderr and "Traceback" not in p.stderr
    assert not target.exists() and (tmp_path / "out").is_dir()


def test_an_unexpected_failure_is_a_graphmem_error_and_empties_a_folder_it_did_not_create(source, tmp_path,
                                                                                          monkeypatch):
    module = importlib.import_module("graphmem.portability.migrate")
    target = tmp_path / "empty"
    target.mkdir()

    def broken(ctx, tstore, thome, copied, meta_keys, queries):
        raise RuntimeError("verification broke")

    monkeypatch.setattr(module, "_verify", broken)
    with pytest.raises(BackendError, match="verification broke"):
        migrate(source.ctx, str(target))
    assert target.is_dir() and list(target.iterdir()) == []


@pytest.mark.parametrize("config", [
    '[store] # shared\nurl = "postgresql://ann@db/kb"\n[chunking]\nsize = 400\n',
    'store.url = "postgresql://ann@db/kb"\n[chunking]\nsize = 400\n',
    '[ store ]\n"url" = "postgresql://ann@db/kb"\nbusy_timeout = 7.0\n[chunking]\nsize = 400\n',
    'store = { url = "postgresql://ann@db/kb" }\n[chunking]\nsize = 400\n',
    '[store]\nurl = """\npostgresql://ann@db/kb"""\n[chunking]\nsize = 400\n',
])
def test_the_copy_config_drops_every_spelling_of_the_store_url_and_keeps_the_rest(tmp_path, config):
    from graphmem.portability.migrate import _target_config_text
    (tmp_path / "config.toml").write_text(config, encoding="utf-8")
    warned: list[str] = []
    copy = tomllib.loads(_target_config_text(tmp_path, warned) or "")
    assert "url" not in copy.get("store", {}) and copy["chunking"] == {"size": 400}
    assert copy.get("store", {}).get("busy_timeout", 7.0) == 7.0 and "store url" in warned[0]


def test_a_copy_keeps_the_settings_and_warns_about_graphmem_store(tmp_path, monkeypatch):
    home = tmp_path / "src"
    with graphmem.open(home) as kb:
        kb.ingest_with_content("d", "D", "d.txt", "Redis stores sessions.")
    with (home / "config.toml").open("a", encoding="utf-8") as out:
        out.write('\n[ontology.type_synonyms]\n"micro service" = "software"\n')
    with graphmem.open(home) as kb:
        monkeypatch.setenv("GRAPHMEM_STORE", "postgresql://ann@db.example/kb")
        with pytest.warns(UserWarning, match="GRAPHMEM_STORE"):
            report = migrate(kb.ctx, str(tmp_path / "copy"))
    assert any("GRAPHMEM_STORE" in w for w in report["warnings"])
    assert "GRAPHMEM_STORE" in json.dumps(report) and "warning: GRAPHMEM_STORE" in migrate_render(report)
    copied = tomllib.loads((tmp_path / "copy" / "config.toml").read_text(encoding="utf-8"))
    assert copied["ontology"]["type_synonyms"] == {"micro service": "software"}
