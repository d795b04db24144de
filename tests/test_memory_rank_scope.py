"""A held miss of the rank inputs (store/sqlite/memory.py) reads the missing memories' whole scope keys, so that the
scope's next searches find every candidate held; the values are SQL's; a store that meets a scope key bigger than
the bound reads by id only from then on."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import graphmem
from graphmem.store.sqlite import memory as sqlite_memory
from spies import traced_sql

CONFIG: dict[str, Any] = {"embeddings": {"model": "none"}}


def _fill(kb: graphmem.KnowledgeBase) -> None:
    for user, n in (("u1", 8), ("u2", 30)):
        kb.memory.add([f"{user} said {i} about {'boats' if i % 2 else 'tea'}" for i in range(n)], user_id=user)


def _truth(home: Path) -> dict[str, tuple[Any, ...]]:
    with sqlite3.connect(home / "graph.db") as conn:
        return {r[0]: tuple(r[1:]) for r in conn.execute(
            "SELECT m.id, coalesce(u.uses, m.uses), m.helpful, m.unhelpful, m.quality, m.floor,"
            " coalesce(u.used_at, m.used_at) FROM memories m LEFT JOIN memory_uses u ON u.rid = m.rowid_")}


def _reads(kb: graphmem.KnowledgeBase, fn: Any) -> list[str]:
    with traced_sql(kb.store.conn) as seen:  # type: ignore[attr-defined]
        fn()
    return [s for s in seen if s.startswith("SELECT m.id, coalesce(u.uses, m.uses), m.helpful")]


def test_a_miss_holds_the_whole_scope_and_the_next_searches_read_none(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    with graphmem.open(home, config=CONFIG) as kb:
        _fill(kb)
        u1 = [r.id for r in kb.memory.get_all(user_id="u1").results]
        with kb.store.read_scope():
            first = _reads(kb, lambda: kb.store.memory_rank_inputs(u1[:2]))
            assert len(first) == 1 and "scope_key IN" in first[0]
            held = kb.store._held_rank_inputs().rows  # type: ignore[attr-defined]
            assert set(u1) <= set(held) and not {i for i in held if i not in u1}  # u1's scope, not u2's
            got = kb.store.memory_rank_inputs(u1)
        truth = _truth(home)
        assert {k: tuple(v) for k, v in got.items()} == {i: truth[i] for i in u1}
        kb.memory.search("boats", user_id="u1")  # its own counts reach the held copy
        again = _reads(kb, lambda: [kb.memory.search(q, user_id="u1") for q in ("tea", "boats tea", "said")])
        assert again == []
        truth = _truth(home)
        assert {k: tuple(v) for k, v in kb.store.memory_rank_inputs(u1).items()} == {i: truth[i] for i in u1}


def test_a_scope_key_above_the_bound_turns_scope_reads_off(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sqlite_memory, "_SCOPE_READ", 10)
    home = tmp_path / "kb"
    with graphmem.open(home, config=CONFIG) as kb:
        _fill(kb)
        u1 = [r.id for r in kb.memory.get_all(user_id="u1").results]
        u2 = [r.id for r in kb.memory.get_all(user_id="u2", limit=100).results]
        with kb.store.read_scope():
            got = kb.store.memory_rank_inputs(u2[:3])  # u2 has 30 memories: more than the bound
            assert set(got) == set(u2[:3])
            later = _reads(kb, lambda: kb.store.memory_rank_inputs(u1[:2]))
            assert len(later) == 1 and "m.id IN" in later[0] and "scope_key" not in later[0]
        truth = _truth(home)
        assert {k: tuple(v) for k, v in kb.store.memory_rank_inputs(u1 + u2).items()} == {i: truth[i] for i in u1 + u2}
