"""Migration 0034: an older graphmem that opened a knowledge base before migration 0031 and keeps running goes on
counting a search's uses in ``memories`` (``UPDATE memories SET uses = uses + ?, used_at = ? ...``, the statement of
graphmem before 0031). Where a memory already has a ``memory_uses`` row, reads take that row, so those counts used to
vanish (the reviewer's probe: old process 3 searches, new reader saw 1). The trigger adds them to the row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import graphmem
from clocks import ticking_clock

CONFIG: dict[str, Any] = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}


def _old_writer_counts(kb: graphmem.KnowledgeBase, ids: list[str], used_at: str) -> None:
    """What a pre-0031 graphmem's search writes for the memories it returns (its one statement)."""
    with kb.store.transaction():  # type: ignore[attr-defined]
        kb.store.conn.execute(f"UPDATE memories SET uses = uses + ?, used_at = ? WHERE id IN "  # type: ignore[attr-defined]
                              f"({','.join('?' * len(ids))})", [1, used_at, *ids])


def _uses(kb: graphmem.KnowledgeBase, ids: list[str]) -> dict[str, tuple[int, str]]:
    rows = kb.store.get_memories(ids)
    return {i: (rows[i]["uses"], rows[i]["used_at"]) for i in ids}


def test_an_old_writers_counts_reach_a_memory_counted_by_this_code(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config=CONFIG, clock=ticking_clock()) as kb:
        kb.memory.add(["the boat leaves at noon", "the train is late", "tea at five"], user_id="u1")
        counted = [h.id for h in kb.memory.search("boat train", user_id="u1", limit=2).results]
        others = [r[0] for r in kb.store.conn.execute("SELECT id FROM memories")  # type: ignore[attr-defined]
                  if r[0] not in counted]
        assert counted and others
        before = _uses(kb, counted + others)
        assert all(before[i][0] == 1 for i in counted) and all(before[i][0] == 0 for i in others)
        for _ in range(3):
            _old_writer_counts(kb, counted + others, "2999-01-01T00:00:00+00:00")
        after = _uses(kb, counted + others)
        assert {i: after[i] for i in counted} == {i: (4, "2999-01-01T00:00:00+00:00") for i in counted}
        # a memory this code never counted has no memory_uses row: its own columns were the values all along
        assert {i: after[i] for i in others} == {i: (3, "2999-01-01T00:00:00+00:00") for i in others}
        # this code's next search adds to what the old writer counted
        again = kb.memory.search("boat train", user_id="u1", limit=2).results
        assert {h.id for h in again} == set(counted)
        assert {i: _uses(kb, counted)[i][0] for i in counted} == {i: 5 for i in counted}


def test_this_codes_own_writes_never_fire_the_forwarding(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config=CONFIG, clock=ticking_clock()) as kb:
        kb.memory.add(["the boat leaves at noon", "the train is late"], user_id="u1")
        ids = [h.id for h in kb.memory.search("boat", user_id="u1", limit=2).results]
        kb.memory.update(ids[0], "the boat leaves at one")
        kb.memory.search("boat", user_id="u1", limit=2)
        kb.memory.mark_relevant(ids[1])
        kb.memory.feedback(ids[1], "boat", helpful=True)
        kb.memory.tick_decay()
        wide = kb.store.conn.execute("SELECT id, uses FROM memories").fetchall()  # type: ignore[attr-defined]
        assert all(uses == 0 for _, uses in wide)  # this code counts in memory_uses only
