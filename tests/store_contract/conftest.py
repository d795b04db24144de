"""The backends the store contract suite runs against.

To add a backend, append a factory to ``BACKENDS``: ``factory(place, read_only)`` opens the
knowledge base kept at ``place`` (a fresh temporary folder per test). Opening the same place twice
must give two handles onto one knowledge base (two connections), and ``read_only`` (a reason, or
None) opens it read-only. Every test in this folder then runs against it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from graphmem.store import Store, open_store
from pg_server import drop_database, fresh_database, pg_server_url

StoreFactory = Callable[[Path, "str | None"], Store]


def _sqlite(place: Path, read_only: str | None = None) -> Store:
    return open_store(place, busy_timeout=5.0, read_only=read_only)


# place -> (database name, url): every handle onto one place opens the same database.
_PG_DATABASES: dict[Path, tuple[str, str]] = {}


def _postgres(place: Path, read_only: str | None = None) -> Store:
    if place not in _PG_DATABASES:
        _PG_DATABASES[place] = fresh_database()
    return open_store(place, busy_timeout=5.0, read_only=read_only, url=_PG_DATABASES[place][1])


BACKENDS: dict[str, StoreFactory] = {
    "sqlite": _sqlite,
    "postgres": _postgres,  # a database per test (tests/pg_server.py), dropped afterwards
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "contract(*methods): the store protocol methods whose contract this test specifies")


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Iterator[StoreFactory]:
    """The factory of the backend under test (PostgreSQL: skipped with the reason when no server can be
    started, failed instead under CI=true; the test's databases are dropped after it)."""
    if request.param == "postgres":
        pg_server_url()
    yield BACKENDS[request.param]
    if request.param == "postgres":
        for place in list(_PG_DATABASES):
            drop_database(_PG_DATABASES.pop(place)[0])


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """Where the knowledge base of this test lives."""
    return tmp_path


@pytest.fixture
def store(backend: StoreFactory, place: Path) -> Iterator[Store]:
    """A fresh, empty, writable store of the backend under test."""
    s = backend(place, None)
    yield s
    s.close()


@pytest.fixture
def open_again(backend: StoreFactory, place: Path) -> Iterator[Callable[..., Store]]:
    """Open another handle onto the same knowledge base (``read_only=`` a reason to open it read-only)."""
    opened: list[Store] = []

    def _open(read_only: str | None = None) -> Store:
        s = backend(place, read_only)
        opened.append(s)
        return s

    yield _open
    for s in opened:
        s.close()
