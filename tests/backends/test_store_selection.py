"""Choosing the store: ``[store] url``, ``GRAPHMEM_STORE``, ``graphmem init --store``, ``graphmem status``;
bad values name the key, and a password never appears in an error or in status."""

from __future__ import annotations

import json

import pytest

import graphmem
from cli_inproc import graphmem_env, run_cli
from graphmem.config import load_config
from graphmem.config_sections import check_store_url, redact_url
from graphmem.errors import InvalidInput
from graphmem.store.postgres.urls import safe_url

SECRET = "s3cr3t-pw"


@pytest.mark.parametrize("url", ["postgresql://ann@db.example/kb", "postgres://ann@db.example:6543/kb",
                                 "postgresql:///kb?host=/tmp/pgsock", "  postgresql://ann@h/kb  "])
def test_postgres_urls_are_accepted(url):
    assert load_config(None, {"store": {"url": url}}).store.url == url.strip()


@pytest.mark.parametrize("url", [f"mysql://ann:{SECRET}@h/kb", "sqlite:///tmp/x.db", "db.example/kb",
                                 f"postgresql://ann:{SECRET}@/", "postgresql://", f"postgresql://a:{SECRET}@h:99999/kb"])
def test_bad_urls_name_the_key_and_hide_the_password(url):
    with pytest.raises(InvalidInput) as err:
        load_config(None, {"store": {"url": url}})
    message = str(err.value)
    assert "[store] url" in message and "postgresql://" in message
    assert SECRET not in message


def test_env_store_wins_over_the_file_and_a_bad_one_names_the_variable(tmp_path):
    (tmp_path / "config.toml").write_text('[store]\nurl = "postgresql://file@h/kb"\n', encoding="utf-8")
    cfg = load_config(tmp_path, environ={"GRAPHMEM_STORE": "postgresql://env@h/kb"})
    assert cfg.store.url == "postgresql://env@h/kb" and cfg.origin("store", "url") == "env"
    assert load_config(tmp_path, environ={}).store.url == "postgresql://file@h/kb"
    assert load_config(tmp_path, environ={"GRAPHMEM_STORE": "  "}).store.url == "postgresql://file@h/kb"
    # an argument wins over both
    assert load_config(tmp_path, {"store": {"url": ""}}, environ={"GRAPHMEM_STORE": "postgresql://e@h/kb"}
                       ).store.url == ""
    with pytest.raises(InvalidInput, match="GRAPHMEM_STORE") as err:
        load_config(tmp_path, environ={"GRAPHMEM_STORE": f"http://u:{SECRET}@h/kb"})
    assert SECRET not in str(err.value)


def test_redact_url_keeps_everything_but_the_password():
    assert redact_url(f"postgresql://ann:{SECRET}@db.example:5432/kb?sslmode=require") == \
        "postgresql://ann:***@db.example:5432/kb?sslmode=require"
    assert redact_url("postgresql://ann@db.example/kb") == "postgresql://ann@db.example/kb"
    assert redact_url(f"postgresql://ann:{SECRET}@[::1]:5432/kb") == "postgresql://ann:***@[::1]:5432/kb"
    assert check_store_url("", "x") == ""


@pytest.mark.parametrize("url, shown", [
    (f"postgresql://db/kb?password={SECRET}", "postgresql://db/kb?password=***"),
    (f"postgresql://ann@db/kb?user=ann&PASSWORD={SECRET}&sslmode=require",
     "postgresql://ann@db/kb?user=ann&PASSWORD=***&sslmode=require"),
    (f"postgresql://ann:pa/{SECRET}@db/kb", "postgresql://ann:***@db/kb"),
    (f"postgresql://ann:se#{SECRET}@db/kb", "postgresql://ann:***@db/kb"),
    (f"postgresql://ann:se?{SECRET}@db/kb", "postgresql://ann:***@db/kb"),
    (f"postgresql://ann:a@{SECRET}@db:5432/kb", "postgresql://ann:***@db:5432/kb"),
])
def test_every_spelling_of_a_password_is_masked_by_both_redactions(url, shown):
    assert redact_url(url) == shown and safe_url(url) == shown


@pytest.mark.parametrize("url", [f"postgresql://ann:pa/{SECRET}@db/kb", f"postgresql://ann:se#{SECRET}@db/kb",
                                 f"postgresql://ann:{SECRET}@db:badport/kb", f"postgresql://ann:{SECRET}@[::1/kb"])
def test_an_unparsable_url_error_shows_neither_the_password_nor_the_parser_message(url):
    with pytest.raises(InvalidInput) as err:
        check_store_url(url, "--to")
    message = str(err.value)
    assert message.startswith("--to: 'postgresql://ann:***@") and "PGPASSWORD" in message
    assert SECRET not in message and "Port could not be cast" not in message


def test_status_of_a_sqlite_knowledge_base(tmp_path):
    home = tmp_path / "kb"
    graphmem.open(home).close()
    p = run_cli(["--home", str(home), "status", "--json"], env=graphmem_env())
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert (data["backend"], data["store_url"], data["read_only"]) == ("sqlite", None, False)
    assert data["migrations"] >= 12


def test_init_store_refuses_a_bad_url_and_writes_nothing(tmp_path):
    home = tmp_path / "kb"
    p = run_cli(["--home", str(home), "init", "--store", f"mysql://u:{SECRET}@h/kb"], env=graphmem_env())
    assert p.returncode == 1 and "--store" in p.stderr and SECRET not in p.stderr + p.stdout
    assert "Traceback" not in p.stderr and not home.exists()


@pytest.mark.parametrize("url", [f"postgresql://ann:{SECRET}@127.0.0.1:1/kb",
                                 f"postgresql://ann@127.0.0.1:1/kb?password={SECRET}"])
def test_init_store_refuses_a_password_in_the_url_and_writes_nothing(tmp_path, url):
    home = tmp_path / "kb"
    p = run_cli(["--home", str(home), "init", "--store", url], env=graphmem_env())
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "--store" in p.stderr and "PGPASSWORD" in p.stderr and "~/.pgpass" in p.stderr
    assert SECRET not in p.stderr + p.stdout and not home.exists()


def test_an_empty_password_is_no_password():
    url = "postgresql://postgres:@/postgres?host=/tmp/sock&password="
    assert redact_url(url) == url and safe_url(url) == url


def test_init_store_on_a_sqlite_folder_points_at_migrate(tmp_path):
    home = tmp_path / "kb"
    graphmem.open(home).close()
    before = (home / "config.toml").read_text(encoding="utf-8")
    p = run_cli(["--home", str(home), "init", "--store", "postgresql://u@h/kb"], env=graphmem_env())
    assert p.returncode == 1 and "migrate --to" in p.stderr
    assert (home / "config.toml").read_text(encoding="utf-8") == before


def test_a_bad_url_in_config_toml_stops_open_with_the_key(tmp_path):
    home = tmp_path / "kb"
    graphmem.open(home).close()
    (home / "config.toml").write_text(f'[store]\nurl = "ftp://u:{SECRET}@h/kb"\n', encoding="utf-8")
    p = run_cli(["--home", str(home), "status"], env=graphmem_env())
    assert p.returncode == 1 and "[store] url" in p.stderr and SECRET not in p.stderr


def test_a_server_that_cannot_be_reached_leaves_no_folder_and_no_password(tmp_path):
    pytest.importorskip("psycopg")
    home = tmp_path / "kb"
    env = {**graphmem_env(), "GRAPHMEM_STORE": f"postgresql://u:{SECRET}@127.0.0.1:1/db",
           "GRAPHMEM_STORE__BUSY_TIMEOUT": "1"}
    p = run_cli(["--home", str(home), "init"], env=env)
    assert p.returncode == 1 and "PostgreSQL" in p.stderr and "Traceback" not in p.stderr
    assert SECRET not in p.stderr + p.stdout
    assert not home.exists()
