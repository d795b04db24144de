"""A real PostgreSQL (with pgvector) for the tests: pgserver (a dev dependency that ships PostgreSQL 16 and
pgvector) started once per test session in a temporary folder, and a fresh database per test.

Where no server can be started the PostgreSQL tests skip, saying why; with ``CI=true`` they fail instead
(CI must run them). Set ``GRAPHMEM_TEST_PG_URL`` to a server's url (a user that may create databases) to
use that server instead of starting one.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

__all__ = ["pg_server_url", "fresh_database", "drop_database", "database_url"]

_state: dict[str, Any] = {}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL tests cannot run: {reason} (CI=true: they must run)", pytrace=False)
    pytest.skip(f"no PostgreSQL server: {reason}")


def _start() -> str:
    given = os.environ.get("GRAPHMEM_TEST_PG_URL")
    if given:
        return given
    try:
        with warnings.catch_warnings():  # platformdirs' note that XDG_RUNTIME_DIR is unset (CI has none)
            warnings.simplefilter("ignore")
            import pgserver
    except ImportError:
        raise RuntimeError("pgserver is not installed (pip install -e '.[dev]')") from None
    folder = tempfile.mkdtemp(prefix="graphmem-pg-")
    try:
        with warnings.catch_warnings():  # platformdirs' note that XDG_RUNTIME_DIR is unset (CI has none)
            warnings.simplefilter("ignore")
            server = pgserver.get_server(folder, cleanup_mode="stop")
    except Exception as exc:  # noqa: BLE001 - whatever stops the server from starting is the reason to skip
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"pgserver could not start PostgreSQL in {folder}: {exc}") from None
    _state["server"] = server

    def stop() -> None:
        try:
            server.cleanup()
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    return str(server.get_uri())


def pg_server_url() -> str:
    """The url of the session's PostgreSQL server (its ``postgres`` database); skips (fails under CI) when
    no server can be had."""
    if "error" in _state:
        _unavailable(_state["error"])
    if "url" not in _state:
        try:
            import psycopg
        except ImportError:
            _state["error"] = "psycopg is not installed (pip install -e '.[dev]')"
            _unavailable(_state["error"])
        try:
            url = _start()
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except Exception as exc:  # noqa: BLE001 - see above
            _state["error"] = str(exc)
            _unavailable(_state["error"])
        _state["url"] = url
    return str(_state["url"])


def database_url(name: str) -> str:
    """The url of database ``name`` on the session's server (the server's url with another path)."""
    parts = urlsplit(pg_server_url())
    return urlunsplit(parts._replace(path="/" + name))


def _template() -> str:
    """A database with pgvector and every migration applied, made once per session: a test's database is a
    copy of it (CREATE DATABASE ... TEMPLATE), cheaper than migrating each one."""
    if "template" not in _state:
        import psycopg

        from graphmem.store.postgres import PostgresStore

        name = f"gm_template_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(pg_server_url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        with psycopg.connect(database_url(name), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        PostgresStore(database_url(name), Path(tempfile.gettempdir()), pool_size=1).close()
        _state["template"] = name
        atexit.register(drop_database, name)
    return str(_state["template"])


def fresh_database(prefix: str = "gm_test", migrated: bool = True) -> tuple[str, str]:
    """A new database with pgvector (``migrated``: and graphmem's migrations applied): ``(name, url)``."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(pg_server_url(), autocommit=True) as conn:
        if not migrated:
            conn.execute(f'CREATE DATABASE "{name}"')
        else:
            template = _template()
            for attempt in range(5):
                # The template's last connection may still be closing: end it (waiting up to 5 s), try again.
                conn.execute("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = %s"
                             " AND pid <> pg_backend_pid()", (template,))
                try:
                    conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
                    break
                except psycopg.errors.ObjectInUse:
                    if attempt == 4:
                        raise
    if not migrated:
        with psycopg.connect(database_url(name), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return name, database_url(name)


def drop_database(name: str) -> None:
    """Drop database ``name`` (closing whatever connections are still open on it)."""
    import psycopg

    with psycopg.connect(pg_server_url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
