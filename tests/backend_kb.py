"""Knowledge bases on each backend, for the tests that must hold on SQLite and on PostgreSQL alike.

``backend_url`` is None (the folder's graph.db) or the url of a fresh, empty PostgreSQL database on the
session's server (tests/pg_server.py; dropped afterwards). ``kb`` here replaces tests/conftest.py's ``kb`` in a
module that imports it::

    from backend_kb import backend_url, kb  # noqa: F401 - this module runs on SQLite and PostgreSQL

The PostgreSQL params skip, with the reason, where no server starts; under ``CI=true`` they fail instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.config import set_config_value
from pg_server import drop_database, fresh_database

__all__ = ["BACKENDS", "backend_url", "backend_config", "make_home", "kb", "kb_backend"]

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def backend_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None (SQLite) or the url of a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield None
        return
    name, url = fresh_database("gm_kb")
    try:
        yield url
    finally:
        drop_database(name)


def backend_config(url: str | None, **sections: Any) -> dict[str, Any]:
    """``graphmem.open`` config for the backend (``store.url`` set only for PostgreSQL)."""
    return {**sections, **({"store": {"url": url}} if url else {})}


def make_home(home: Path, url: str | None) -> Path:
    """A knowledge base folder on the backend, as ``graphmem init [--store URL]`` leaves it: the url is in its
    config.toml, so that a test reopening the folder with ``graphmem.open(home)`` gets the same store."""
    graphmem.open(home, config=backend_config(url)).close()
    if url:
        set_config_value(home, "store", "url", url)
    return home


@pytest.fixture
def kb(tmp_path: Path, backend_url: str | None) -> Iterator[graphmem.KnowledgeBase]:
    """A fresh knowledge base on each backend (same folder as tests/conftest.py's ``kb``)."""
    with graphmem.open(make_home(tmp_path / "kb", backend_url)) as k:
        yield k


kb_backend = kb
