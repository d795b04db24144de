"""The memory graph a store keeps in RAM (store/sqlite/memory_graph.py) and the scope ids and word statistics
it keeps beside it: every answer equals what SQL answers at that moment, whichever connection or process
wrote since (migration 0022's generations), including rowids reused after a delete."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.store.sqlite import memory_graph

CONFIG: dict[str, Any] = {"embeddings": {"model": "none"}}
TOPICS = ["boats", "cars", "trains", "planes", "tea"]


def _open(home: Path) -> graphmem.KnowledgeBase:
    return graphmem.open(home, config=CONFIG)


def _fill(kb: graphmem.KnowledgeBase, user: str = "u1", runs: int = 3) -> None:
    for run in range(runs):
        kb.memory.add([f"{user} said {i} in run {run} about {TOPICS[(i + run) % len(TOPICS)]}" for i in range(5)],
                      user_id=user, run_id=f"r{run}")


def _ids(kb: graphmem.KnowledgeBase) -> list[str]:
    return [m.id for u in ("u1", "u2") for m in kb.memory.get_all(limit=1000, user_id=u).results]


def _sql_answers(home: Path, ids: list[str]) -> tuple[Any, Any]:
    """What the SQL statements answer now (a fresh store with its RAM copy switched off)."""
    with _open(home) as ref:
        ref.store._memory_graph().disabled = True  # type: ignore[attr-defined]
        return (ref.store.memory_neighbours(ids, 0.0), ref.store.memory_edges_among(ids))


def _held_answers(kb: graphmem.KnowledgeBase, ids: list[str]) -> tuple[Any, Any]:
    return (kb.store.memory_neighbours(ids, 0.0), kb.store.memory_edges_among(ids))


@pytest.fixture(autouse=True)
def _load_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph is loaded at the first read here (a store loads it after LOAD_AFTER_READS reads by SQL)."""
    monkeypatch.setattr(memory_graph, "LOAD_AFTER_READS", 0)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with _open(tmp_path / "kb") as kb:
        _fill(kb)
    return tmp_path / "kb"


def _assert_same_as_sql(kb: graphmem.KnowledgeBase, home: Path, ids: list[str]) -> None:
    held = _held_answers(kb, ids)
    assert kb.store._memory_graph()._state is not None  # type: ignore[attr-defined]  # answered from RAM
    assert held == _sql_answers(home, ids)


def test_neighbours_from_ram_equal_sql_with_floor_and_per_node_limit(home: Path) -> None:
    with _open(home) as kb:
        ids = _ids(kb)
        with _open(home) as ref:
            ref.store._memory_graph().disabled = True  # type: ignore[attr-defined]
            for floor in (0.0, 0.5, 0.75, 0.95):
                for per_node in (1, 2, 32):
                    got = kb.store.memory_neighbours(ids, floor, per_node)
                    assert got == ref.store.memory_neighbours(ids, floor, per_node)
            assert sum(len(v) for v in ref.store.memory_neighbours(ids, 0.0, 1).values()) < \
                sum(len(v) for v in ref.store.memory_neighbours(ids, 0.0, 32).values())


def test_another_connections_writes_are_seen(home: Path) -> None:
    with _open(home) as kb, _open(home) as other:
        ids = _ids(kb)
        _assert_same_as_sql(kb, home, ids)  # loaded
        _fill(other, "u1", runs=1)  # new memories and edges: fresh rowids, read incrementally
        ids = _ids(kb)
        _assert_same_as_sql(kb, home, ids)
        victim = ids[3]
        other.memory.delete(victim)  # its edges go by cascade
        ids = [i for i in ids if i != victim]
        _assert_same_as_sql(kb, home, ids)
        assert all(n.other != victim for lst in kb.store.memory_neighbours(ids, 0.0).values() for n in lst)
        other.memory.update(ids[0], "u1 now talks about planes only")
        ids = _ids(kb)
        _assert_same_as_sql(kb, home, ids)
        edge = other.graph.add_edge(ids[1], ids[5], "supports", 0.9)
        _assert_same_as_sql(kb, home, ids)
        assert any(n.other == ids[5] for n in kb.store.memory_neighbours([ids[1]], 0.0)[ids[1]])
        other.graph.delete_edge(edge)
        _assert_same_as_sql(kb, home, ids)


def test_another_process_delete_is_seen_and_never_returned(home: Path) -> None:
    with _open(home) as kb:
        ids = _ids(kb)
        found = kb.memory.search("trains boats cars", user_id="u1", limit=20)
        hit_ids = [h.id for h in found.results]
        assert hit_ids
        victim = next(i for i in hit_ids if any(i in (e.src, e.dst) for e in found.subgraph or []))
        script = ("import sys, graphmem\nwith graphmem.open(sys.argv[1], config={'embeddings': {'model': 'none'}})"
                  " as kb:\n    kb.memory.delete(sys.argv[2])\n")
        subprocess.run([sys.executable, "-c", script, str(home), victim], check=True)
        ids = [i for i in ids if i != victim]
        _assert_same_as_sql(kb, home, ids)
        again = kb.memory.search("trains boats cars", user_id="u1", limit=20)
        assert victim not in [h.id for h in again.results]
        assert all(victim not in (e.src, e.dst) for e in again.subgraph or [])


def test_a_reused_rowid_is_not_missed(home: Path) -> None:
    with _open(home) as kb, _open(home) as other:
        a, b = other.graph.add_node("Alpha", "person"), other.graph.add_node("Beta", "person")
        top = other.graph.add_edge(a, b, "knows", 0.9)  # the highest edge rowid, between two entities
        ids = _ids(kb)
        _assert_same_as_sql(kb, home, ids)  # loaded with that rowid as the highest read
        other.graph.delete_edge(top)  # not at a memory, but the top rowid: the next insert takes it again
        _fill(other, "u1", runs=1)
        ids = _ids(kb)
        _assert_same_as_sql(kb, home, ids)


def test_inside_a_write_transaction_sql_answers(home: Path) -> None:
    with _open(home) as kb:
        ids = _ids(kb)
        _assert_same_as_sql(kb, home, ids)
        before = kb.store.memory_neighbours(ids, 0.0)
        with pytest.raises(RuntimeError), kb.store.transaction():
            kb.store.delete_memory(ids[2])  # seen inside the transaction...
            inside = kb.store.memory_neighbours(ids, 0.0)
            assert inside[ids[2]] == [] and inside != before
            raise RuntimeError("roll back")
        assert kb.store.memory_neighbours(ids, 0.0) == before  # ...and gone with its rollback
        _assert_same_as_sql(kb, home, ids)


def test_scope_ids_follow_adds_archiving_and_deletes_elsewhere(home: Path) -> None:
    with _open(home) as kb, _open(home) as other:
        kb.memory.search("tea", user_id="u1")
        before = set(kb.store.memory_scope_ids({"user_id": "u1"}, False, 1000) or [])
        added = other.memory.add("u1 keeps a zeppelin in the garage", user_id="u1").results[0].id
        hits = [h.id for h in kb.memory.search("zeppelin garage", user_id="u1").results]
        assert added in hits
        assert set(kb.store.memory_scope_ids({"user_id": "u1"}, False, 1000) or []) == before | {added}
        other.store.set_memories_archived([added], True, "2026-12-02T00:00:00Z")
        assert added not in [h.id for h in kb.memory.search("zeppelin garage", user_id="u1").results]
        assert kb.store.memory_scope_ids({"user_id": "u1"}, True, 1000) == \
            _open_ids(home, {"user_id": "u1"}, True)
        other.memory.delete(added)
        assert set(kb.store.memory_scope_ids({"user_id": "u1"}, True, 1000) or []) == before


def _open_ids(home: Path, filters: dict[str, Any], archived: bool) -> list[str] | None:
    with _open(home) as ref:
        return ref.store.memory_scope_ids(filters, archived, 1000)


def test_common_word_memo_follows_a_delete_by_another_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo of words too common to search for (kept per memory.generation and highest rowid_) is
    dropped when a memory goes by the graph's node delete in another connection (migration 0022's trigger):
    the word that was common is searched for again, as a fresh store does."""
    import functools

    from graphmem.store.sqlite import memory as sqlite_memory

    # A small table's thresholds: a word in more than half of the rows (and at least 2) is common.
    monkeypatch.setattr(sqlite_memory, "pruned_fts_query",
                        functools.partial(sqlite_memory.pruned_fts_query, max_share=0.5, floor=2))
    home = tmp_path / "kb"
    with _open(home) as kb:
        kb.memory.add(["boats on the lake", "boats in the harbour", "boats and a zebra", "a quiet garden"],
                      user_id="u1")
    with _open(home) as kb, _open(home) as other:
        assert kb.store._memory_fts_expr("boats zebra") == '"zebra"'  # type: ignore[attr-defined]
        for m in other.memory.get_all(user_id="u1").results:
            if m.memory in ("boats on the lake", "boats in the harbour"):
                other.graph.delete_node(m.id)
        assert kb.store._memory_fts_expr("boats zebra") == '"boats" OR "zebra"'  # type: ignore[attr-defined]
        with _open(home) as fresh:
            assert fresh.store._memory_fts_expr("boats zebra") == '"boats" OR "zebra"'  # type: ignore[attr-defined]
        assert kb.memory.search("boats zebra", user_id="u1").results[0].memory == "boats and a zebra"


def test_the_graph_is_loaded_only_after_some_reads_by_sql(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_graph, "LOAD_AFTER_READS", 3)
    with _open(home) as kb:
        ids = _ids(kb)
        cache = kb.store._memory_graph()  # type: ignore[attr-defined]
        answers = [kb.store.memory_neighbours(ids, 0.0) for _ in range(4)]
        assert cache._state is not None and len(cache._known) == len(ids)  # loaded at the fourth read
        assert all(a == answers[0] for a in answers)
        assert answers[0] == _sql_answers(home, ids)[0]
    with _open(home) as kb:
        kb.store.memory_neighbours(ids, 0.0)
        assert kb.store._memory_graph()._state is None  # type: ignore[attr-defined]  # one read: SQL only
