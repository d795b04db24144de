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

StoreFactory = Callable[[Path, "str | None"], Store]


def _sqlite(place: Path, read_only: str | None = None) -> Store:
    return open_store(place, busy_timeout=5.0, read_only=read_only)


BACKENDS: dict[str, StoreFactory] = {
    "sqlite": _sqlite,
    # "postgres": _postgres,  (its issue: a database per test, dropped afterwards)
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "contract(*methods): the store protocol methods whose contract this test specifies")


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> StoreFactory:
    """The factory of the backend under test."""
    return BACKENDS[request.param]


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
