"""Helpers for the tests that pin a knowledge base's history: the point-in-time copies of a store, and
turning a knowledge base back into one an older graphmem wrote (its migrations forgotten)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graphmem.store import Store, open_store


def point_copies(store: Store, home: Path, points: list[int]) -> Iterator[tuple[int, dict[str, Any], Store]]:
    """For each event id of ``points``: the id, what ``replay_to`` said, and the copy at that point opened
    (in ``<home>-at-<i>`` beside ``home``; closed when the next one is made)."""
    for i, ev in enumerate(points):
        folder = home.parent / f"{home.name}-at-{i}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        replayed = store.replay_to(folder / "graph.db", ev)
        then = open_store(folder)
        try:
            yield ev, replayed, then
        finally:
            then.close()


def forget_migrations(conn: sqlite3.Connection, *names: str) -> None:
    """The migrations ``names`` unapplied (the caller undid what they did), and the transaction committed."""
    conn.execute(f"DELETE FROM schema_migrations WHERE name IN ({','.join('?' * len(names))})", names)
    conn.execute("COMMIT")
