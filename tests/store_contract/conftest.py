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
        if (place / "graph.db").exists():
            # A PostgreSQL backup or replay is a SQLite knowledge base file: "opening" the place it was
            # written to as PostgreSQL restores it into the place's database first.
            source = open_store(place, read_only="restoring a backup")
            target = open_store(place, busy_timeout=5.0, url=_PG_DATABASES[place][1])
            try:
                with target.transaction():
                    target.load_rows(source.dump_rows())
            finally:
                source.close()
                target.close()
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


def _pg_missing_methods() -> set[str]:
    """Protocol methods the PostgreSQL store does not have yet (empty once the graph, evidence, wiki,
    skills and memory mixins of issue 20's second part are merged)."""
    from graphmem.store.postgres import PostgresStore
    from graphmem.store.protocols import PROTOCOLS

    wanted = {n for p in PROTOCOLS for n, v in vars(p).items() if callable(v) and not n.startswith("_")}
    return {n for n in wanted if not hasattr(PostgresStore, n)}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    # While the PostgreSQL backend is being built in parts, a postgres test that fails ONLY because it
    # calls a protocol method that is not written yet is reported as xfail naming the method; any other
    # failure stays a failure. Inert (and to be deleted) once _pg_missing_methods() is empty.
    outcome = yield
    report = outcome.get_result()
    if not (report.failed and call.excinfo is not None and "[postgres" in item.nodeid):
        return
    missing = _pg_missing_methods()
    exc = call.excinfo.value
    name = getattr(exc, "name", None)
    pending = (isinstance(exc, AttributeError) and name in missing) or (
        bool(missing) and isinstance(exc, AssertionError) and item.name.startswith(
            ("test_every_protocol_is_runtime_checkable", "test_a_store_is_every_protocol")))
    if pending:
        report.outcome = "skipped"
        report.wasxfail = f"PostgresStore.{name or 'protocols'} not written yet (the graph mixins' part of issue 20)"
