"""PostgreSQL at the knowledge-base level: ``init --store`` and ``status``, two folders ("hosts") on one
database sharing their wiki, and ``migrate`` from SQLite to PostgreSQL and back."""

from __future__ import annotations

import importlib
import json
import threading
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

import graphmem
from cli_inproc import graphmem_env, run_cli
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT, snapshot
from graphmem.portability import migrate
from pg_server import drop_database, fresh_database

NO_MODEL = {"embeddings": {"model": "none"}}


@pytest.fixture
def pg_url():
    name, url = fresh_database("gm_ops")
    try:
        yield url
    finally:
        drop_database(name)


def _fill(kb: graphmem.KnowledgeBase) -> None:
    kb.ingest_with_content("doc_1", "System Crash Analysis", "notes/crash.txt", QUICKSTART_TEXT,
                           QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    kb.ingest_with_content("doc_2", "Cache Design", "notes/cache.txt",
                           "The cache service uses Redis. Redis stores sessions for the login service.")
    kb.memory.add("Ann prefers tea in the morning", user_id="ann")
    kb.wiki.write_page("topic", "Runbook", "Restart the [[memory-leak]] service when it crashes.")


def _wiki(home: Path) -> dict[str, str]:
    root = home / "wiki"
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))
            if p.name != "log.md"}


def test_init_store_and_status_without_the_password(tmp_path, pg_url):
    home = tmp_path / "kb"
    env = {**graphmem_env(), "GRAPHMEM_EMBED_MODEL": "none"}
    p = run_cli(["--home", str(home), "init", "--store", pg_url, "--json"], env=env)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["created"] is True and data["backend"] == "postgres"
    assert 'url = "postgresql' in (home / "config.toml").read_text(encoding="utf-8")
    assert not (home / "graph.db").exists() and (home / "wiki").is_dir()
    p = run_cli(["--home", str(home), "status", "--json"], env=env)
    status = json.loads(p.stdout)
    assert (status["backend"], status["store_origin"]) == ("postgres", "file")
    assert status["store_url"].startswith("postgresql://") and status["migrations"] > 0
    # a url with a password: status shows it masked
    parts = urlsplit(pg_url)
    host = parts.netloc.rpartition("@")[2]
    secret = urlunsplit(parts._replace(netloc=f"{parts.username or 'postgres'}:pw-not-shown@{host}"))
    p = run_cli(["--home", str(home), "status", "--json"], env={**env, "GRAPHMEM_STORE": secret})
    assert "pw-not-shown" not in p.stdout + p.stderr


def test_two_hosts_on_one_database_share_the_wiki(tmp_path, pg_url):
    cfg = {"store": {"url": pg_url}, **NO_MODEL}
    with graphmem.open(tmp_path / "host_a", config=cfg) as a:
        _fill(a)
        pages_a = _wiki(a.home)
    with graphmem.open(tmp_path / "host_b", config=cfg) as b:
        assert b.stats()["documents"] == 2
        res = b.wiki.sync()
        assert res.removed == [] and _wiki(b.home) == pages_a
        b.wiki.write_page("topic", "Runbook", "Restart it, then page the on-call.")
    with graphmem.open(tmp_path / "host_a", config=cfg) as a:
        a.wiki.sync()
        assert "page the on-call" in _wiki(a.home)["topic/runbook.md"]
        assert _wiki(a.home) == _wiki(tmp_path / "host_b")


def test_migrate_sqlite_to_postgres_and_back(tmp_path, pg_url):
    with graphmem.open(tmp_path / "src", config=NO_MODEL) as src:
        _fill(src)
        want = snapshot(src)
        report = migrate(src.ctx, pg_url)
        assert report["ok"], report["counts"]
        assert report["backend"] == "postgres" and report["search"]["mean_overlap_at_10"] == 1.0
        with pytest.raises(graphmem.Conflict, match="already holds"):
            migrate(src.ctx, pg_url)  # a second copy is refused: nothing is mixed
    with graphmem.open(tmp_path / "pg_home", config={"store": {"url": pg_url}, **NO_MODEL}) as pg:
        assert pg.wiki.read_page("topic", "Runbook").content.strip().endswith("when it crashes.")
        back = migrate(pg.ctx, str(tmp_path / "back"))
        assert back["ok"] and back["backend"] == "sqlite"
    with graphmem.open(tmp_path / "back", config=NO_MODEL) as again:
        got = snapshot(again)
        assert got.pop("event_ids")[:-2] == want.pop("event_ids")  # + kb.migrated twice
        assert {k: v for k, v in got.items() if k not in ("home", "events")} == \
            {k: v for k, v in want.items() if k not in ("home", "events")}
        assert _wiki(again.home)["topic/runbook.md"] == _wiki(tmp_path / "src")["topic/runbook.md"]
        assert again.wiki.sync().removed == []


def test_migrate_rechecks_the_target_under_its_write_lock(tmp_path, pg_url, monkeypatch):
    module = importlib.import_module("graphmem.portability.migrate")
    other = graphmem.open(tmp_path / "host_b", config={"store": {"url": pg_url}, **NO_MODEL})
    first_check = module._is_empty
    calls: list[bool] = []

    def another_host_writes_between_the_checks(store):
        empty = first_check(store)
        if not calls:  # after the early check, before the copy's transaction takes the lock
            other.wiki.write_page("topic", "Runbook", "Another host's runbook, written while migrate ran.")
        calls.append(empty)
        return empty

    monkeypatch.setattr(module, "_is_empty", another_host_writes_between_the_checks)
    try:
        with graphmem.open(tmp_path / "src", config=NO_MODEL) as src:
            _fill(src)
            with pytest.raises(graphmem.Conflict, match="already holds"):
                migrate(src.ctx, pg_url)
        assert calls == [True, False]
        page = other.store.get_page("runbook", with_content=True)
        assert page is not None and "Another host's runbook" in page.content
        assert [e.type for e in other.store.list_events()].count("kb.migrated") == 0
        assert other.store.list_documents() == []
    finally:
        other.close()


def test_a_password_parameter_stays_out_of_the_report_and_the_event(tmp_path, pg_url):
    secret_url = pg_url + ("&" if "?" in pg_url else "?") + "password=pw-not-shown"
    with graphmem.open(tmp_path / "src", config=NO_MODEL) as src:
        _fill(src)
        report = migrate(src.ctx, secret_url)
    assert report["ok"] and "pw-not-shown" not in json.dumps(report) and "password=***" in report["target"]
    with graphmem.open(tmp_path / "pg_home", config={"store": {"url": pg_url}, **NO_MODEL}) as pg:
        migrated = [e for e in pg.store.list_events() if e.type == "kb.migrated"]
        assert len(migrated) == 1 and "pw-not-shown" not in migrated[0].target


def test_a_sub_millisecond_busy_timeout_still_gives_up_on_a_held_lock(tmp_path, pg_url):
    psycopg = pytest.importorskip("psycopg")
    from graphmem.store.postgres.txn import WRITE_LOCK
    kb = graphmem.open(tmp_path / "h", config={"store": {"url": pg_url, "busy_timeout": 0.0004}, **NO_MODEL})
    holder = psycopg.connect(pg_url)
    outcome: list[BaseException | None] = []

    def write() -> None:
        try:
            with kb.store.transaction():
                kb.store.set_meta("probe", "1")
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 — the test reads what the writer got
            outcome.append(exc)

    try:
        holder.execute("BEGIN")
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        writer.join(20)  # lock_timeout 0 ("no timeout") would wait until the holder lets go below
        holder.rollback()
        writer.join(60)
        assert len(outcome) == 1 and isinstance(outcome[0], graphmem.StoreBusy), outcome
        assert kb.store.get_meta("probe") is None
    finally:
        holder.close()
        kb.close()


def test_an_unexpected_failure_quoting_the_url_is_shown_redacted(tmp_path, pg_url, monkeypatch):
    module = importlib.import_module("graphmem.portability.migrate")
    secret_url = pg_url + ("&" if "?" in pg_url else "?") + "password=pw-not-shown"

    def broken(*args):
        raise RuntimeError(f"lost the connection to {secret_url}")

    monkeypatch.setattr(module, "_verify", broken)
    with graphmem.open(tmp_path / "src", config=NO_MODEL) as src:
        _fill(src)
        with pytest.raises(graphmem.BackendError) as err:
            migrate(src.ctx, secret_url)
    assert "lost the connection" in str(err.value) and "pw-not-shown" not in str(err.value)
