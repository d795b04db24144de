"""The replay log of memory updates (migration 0022): an update that changes only the relevance (decay) logs
just that column, any other the whole row, and a search's use counts (in memory_uses since migration 0031) log
only their two columns; replay to any earlier event still gives the memories exactly as they were, and as the
whole-row log of 0012 gives them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.store.sqlite.schema_memory import _EV, _REPLAYED

CONFIG: dict[str, Any] = {"embeddings": {"model": "none"}}
START = datetime(2026, 12, 2, tzinfo=timezone.utc)


def _ticking() -> Any:
    """A clock one second further on each call: every use-count update moves used_at. (No decayed quality
    in the history: the replay log's JSON keeps 15 significant digits of a REAL, as 0012 logged every row,
    so a decayed 1.2499999997325821 would come back as 1.24999999973258 from either log.)"""
    calls = iter(range(10**9))
    return lambda: START + timedelta(seconds=next(calls))
WHOLE_ROW_0012 = ("CREATE TRIGGER replay_memories_u AFTER UPDATE ON memories BEGIN INSERT INTO replay_log (ev, tbl, op,"
                  f" rid, old) VALUES ({_EV}, 'memories', 'U', old.rowid, json_object("
                  + ", ".join(f"'{c}', old.\"{c}\"" for c in ("rowid", *_REPLAYED["memories"])) + ")); END;")


# every column of memories, with the use counts as reads see them (memory_uses once a search counted a memory)
_MERGED = ", ".join({"uses": "coalesce(u.uses, m.uses)", "used_at": "coalesce(u.used_at, m.used_at)"}.get(c, f"m.{c}")
                    for c in _REPLAYED["memories"])


def _memories(kb: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in kb.store.conn.execute(
        f"SELECT {_MERGED} FROM memories m LEFT JOIN memory_uses u ON u.rid = m.rowid_ ORDER BY m.rowid_")]


def _last_event(kb: Any) -> int:
    return int(kb.store.conn.execute("SELECT max(id) FROM events").fetchone()[0])


def _history(kb: graphmem.KnowledgeBase) -> list[tuple[int, list[tuple[Any, ...]]]]:
    """A history of memory writes and searches; (event id, memories as they were) after each step."""
    points = []
    kb.memory.add([f"turn {i} about boats and trains" for i in range(6)], user_id="u1")
    points.append((_last_event(kb), _memories(kb)))
    for q in ("boats", "trains", "boats trains turn"):
        assert kb.memory.search(q, user_id="u1").results  # use counts: the narrow log
        points.append((_last_event(kb), _memories(kb)))
    first = kb.memory.get_all(user_id="u1").results[0].id
    kb.memory.update(first, "turn 0 is about planes now")
    points.append((_last_event(kb), _memories(kb)))
    kb.memory.search("planes", user_id="u1")
    points.append((_last_event(kb), _memories(kb)))
    return points


def _replayed(kb: graphmem.KnowledgeBase, event_id: int) -> list[tuple[Any, ...]]:
    with kb.events.replay(event_id) as view:
        return _memories(view)


@pytest.mark.parametrize("log", ["narrow", "whole row"])
def test_replay_gives_each_earlier_state_of_the_memories(tmp_path: Path, log: str) -> None:
    with graphmem.open(tmp_path / "kb", config=CONFIG, clock=_ticking()) as kb:
        if log == "whole row":
            kb.store.conn.execute("DROP TRIGGER replay_memories_u")
            kb.store.conn.execute(WHOLE_ROW_0012)
        points = _history(kb)
        for event_id, state in points[:-1]:
            assert _replayed(kb, event_id) == state


def test_use_count_and_relevance_updates_log_only_their_columns(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config=CONFIG, clock=_ticking()) as kb:
        _history(kb)
        mid = kb.memory.get_all(user_id="u1").results[1].id
        kb.store.set_memory_relevance([(0.5, mid)])
        logged = [set(json.loads(r[0])) for r in kb.store.conn.execute(
            "SELECT old FROM replay_log WHERE tbl = 'memories' AND op = 'U' ORDER BY seq")]
        uses = [(r[0], r[1] and set(json.loads(r[1]))) for r in kb.store.conn.execute(
            "SELECT op, old FROM replay_log WHERE tbl = 'memory_uses' ORDER BY seq")]
    whole = {"rowid", *_REPLAYED["memories"]}
    assert ("U", {"rowid", "uses", "used_at"}) in uses  # the searches: a memory counted again
    assert ("I", None) in uses  # a memory counted for the first time
    assert all(u in (("U", {"rowid", "uses", "used_at"}), ("I", None)) for u in uses)
    assert logged[-1] == {"rowid", "relevance"}
    assert whole in logged  # the text update
    assert all(k in ({"rowid", "relevance"}, whole) for k in logged)  # no search rewrote a memories row


def test_relevance_only_update_is_undone_by_replay(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config=CONFIG, clock=_ticking()) as kb:
        kb.memory.add(["a memory about tea", "another about coffee"], user_id="u1")
        point, state = _last_event(kb), _memories(kb)
        mid = kb.memory.get_all(user_id="u1").results[0].id
        kb.store.set_memory_relevance([(0.25, mid)])
        kb.memory.delete(mid)  # an event after the update, so that replay undoes the update
        assert _replayed(kb, point) == state
