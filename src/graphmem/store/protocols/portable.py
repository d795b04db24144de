"""Moving a knowledge base's rows in and out whole: dump and load (export/import), a consistent copy
while others write (backup), and the store's own consistency checks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["PortableStore"]


@runtime_checkable
class PortableStore(Protocol):
    """Dump, load, back up and check the stored rows."""

    def dump_tables(self) -> list[str]:
        """The tables :meth:`dump_rows` writes, in an order that loads without dangling references
        (derived data such as full-text indexes and counters is left out: it is rebuilt on load)."""
        ...

    def dump_rows(self, tables: Sequence[str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(table, row)`` for every row of ``tables`` (default :meth:`dump_tables`), JSON-ready: bytes
        become ``{"$b64": ...}``. One read snapshot: rows committed meanwhile are all in or all out."""
        ...

    def load_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Insert rows as :meth:`dump_rows` gives them (call inside a transaction; a row with the key of a
        stored one replaces it); derived indexes follow. Returns rows loaded per table. An unknown table
        or column: InvalidInput, nothing loaded."""
        ...

    def backup_to(self, path: Path) -> None:
        """Write a consistent copy of the database to ``path`` (a new file), while other connections may
        be writing."""
        ...

    def check_store(self, repair: bool = False) -> dict[str, list[str]]:
        """Problems found, by check: ``integrity`` (the file), ``fts`` (full-text indexes out of step with
        their tables), ``vectors`` (vectors of items that are gone), ``evidence`` (evidence, mentions or
        pages pointing at missing chunks or documents). With ``repair``, what can be rebuilt or dropped is,
        and the answer lists what was found before. ``{}``-like (every list empty): consistent."""
        ...

    def replay_to(self, path: Path, event_id: int) -> dict[str, int]:
        """Write to ``path`` (a new file) a copy of the database as it was at ``event_id``: every change made
        after that event (and before the next) is undone, events after it are dropped, rows that pointed at
        undone ones go too. Returns ``{"undone": changes undone, "orphans": rows removed with them,
        "events": events kept}``. A point before the replay log began: InvalidInput."""
        ...
