"""The read stamp of the SQLite store (store/sqlite/read_stamp.py) and what a memory search keeps by it: the
rank inputs (store/sqlite/memory_held.py), the vector index, the stored model's name, the memory graph. Every
held answer equals what SQL answers at that moment, whoever wrote since: this connection (a search's use
counts, any other write, a rolled-back one), another connection, another process."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import graphmem
from graphmem.retrieval.vector_index import VectorIndex
from spies import traced_sql

CONFIG: dict[str, Any] = {"embeddings": {"model": "none"}}
TOPICS = ["boats", "cars", "trains", "planes", "tea"]


def _fill(kb: graphmem.KnowledgeBase, user: str = "u1", runs: int = 3) -> None:
    for run in range(runs):
        kb.memory.add([f"{user} said {i} in run {run} about {TOPICS[(i + run) % len(TOPICS)]}" for i in range(5)],
                      user_id=user, run_id=f"r{run}")


def _sql_rank_inputs(home: Path) -> dict[str, tuple[Any, ...]]:
    with sqlite3.connect(home / "graph.db") as conn:
        return {r[0]: tuple(r[1:]) for r in conn.execute(
            "SELECT m.id, coalesce(u.uses, m.uses), m.helpful, m.unhelpful, m.quality, m.floor,"
            " coalesce(u.used_at, m.used_at) FROM memories m LEFT JOIN memory_uses u ON u.rid = m.rowid_")}


def _sql_full_rows(home: Path) -> dict[str, dict[str, Any]]:
    """Every memory's full row as get_memories gives it, read by a connection of its own."""
    with sqlite3.connect(home / "graph.db") as conn:
        cur = conn.execute("SELECT m.*, coalesce(u.uses, m.uses) AS uses_now, coalesce(u.used_at, m.used_at)"
                           " AS used_at_now FROM memories m LEFT JOIN memory_uses u ON u.rid = m.rowid_")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur]
    out = {}
    for row in rows:
        row.update(uses=row.pop("uses_now"), used_at=row.pop("used_at_now"), metadata=json.loads(row["metadata"]),
                   archived=bool(row["archived"]))
        out[row["id"]] = row
    return out


def _held_equals_sql(kb: graphmem.KnowledgeBase, home: Path) -> dict[str, tuple[Any, ...]]:
    """The held rank inputs and full rows (get_memories) equal what SQL reads now; returns the rank inputs."""
    truth = _sql_rank_inputs(home)
    held = kb.store.memory_rank_inputs(list(truth))
    assert {k: tuple(v) for k, v in held.items()} == truth
    assert {k: dict(v) for k, v in kb.store.get_memories(list(truth)).items()} == _sql_full_rows(home)
    return truth


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "kb"
    with graphmem.open(path, config=CONFIG) as kb:
        _fill(kb)
        _fill(kb, "u2", runs=2)
    return path


def _statements(kb: graphmem.KnowledgeBase, fn: Any) -> list[str]:
    with traced_sql(kb.store.conn) as seen:  # type: ignore[attr-defined]
        fn()
    return [s for s in seen if not s.startswith("--")]


def test_use_counts_of_a_search_reach_the_held_copy_and_the_file(home: Path) -> None:
    with graphmem.open(home, config=CONFIG) as kb:
        before = _held_equals_sql(kb, home)
        found = kb.memory.search("boats trains", user_id="u1", limit=5)
        ids = [h.id for h in found.results]
        assert ids
        after = _held_equals_sql(kb, home)  # the held copy was kept (harmless write) and counted the uses
        assert all(after[i][0] == before[i][0] + 1 for i in ids)
        assert all(after[i][5] > before[i][5] for i in ids)  # used_at restarted
        # the next search read no rank inputs and checked no freshness by SQL: the stamp held
        again = _statements(kb, lambda: kb.memory.search("boats trains", user_id="u1", limit=5))
        assert not [s for s in again if s.startswith("SELECT m.id, coalesce(u.uses") or "vectors" in s
                    or "generation" in s]
        assert [s for s in again if s.startswith("PRAGMA data_version")] == ["PRAGMA data_version"]
        _held_equals_sql(kb, home)
    with graphmem.open(home, config=CONFIG) as fresh:  # durable: another store sees the counts
        assert {k: tuple(v) for k, v in fresh.store.memory_rank_inputs(ids).items()} == \
            {i: _sql_rank_inputs(home)[i] for i in ids}


def test_held_full_rows_are_new_each_read_and_follow_the_use_counts(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config=CONFIG) as kb:
        kb.memory.add(["boats with a note"], user_id="u1", metadata={"tags": ["sea"], "n": 1})
        _fill(kb)
        mid = kb.memory.search("boats note", user_id="u1", limit=1).results[0].id
        first = kb.store.get_memories([mid])[mid]
        first["metadata"]["tags"].append("changed by the caller")  # a caller's change reaches nothing held
        first["text"] = "changed"
        reads = _statements(kb, lambda: kb.store.get_memories([mid]))
        again = kb.store.get_memories([mid])[mid]
        assert again["metadata"] == {"tags": ["sea"], "n": 1} and again["text"] == "boats with a note"
        assert not [s for s in reads if s.startswith("SELECT")]  # held: no statement
        kb.memory.search("boats note", user_id="u1", limit=1)  # its use count reaches the held row
        assert kb.store.get_memories([mid])[mid]["uses"] == again["uses"] + 1
        _held_equals_sql(kb, tmp_path / "kb")
        kb.memory.update(mid, "boats, updated")  # a write moves the stamp: read again
        assert kb.store.get_memories([mid])[mid]["text"] == "boats, updated"
        _held_equals_sql(kb, tmp_path / "kb")


def test_a_write_beside_the_use_counts_is_not_taken_for_harmless(home: Path) -> None:
    with graphmem.open(home, config=CONFIG) as kb:
        truth = _held_equals_sql(kb, home)
        mid = next(iter(truth))
        store = kb.store
        with store.transaction():
            store.add_memory_feedback(mid, "boats?", True, "2026-01-01T00:00:00.000Z")  # before: counts
            store.record_memory_use([mid], "2026-01-02T00:00:00.000Z")
        assert _held_equals_sql(kb, home)[mid][1] == truth[mid][1] + 1
        with store.transaction():
            store.record_memory_use([mid], "2026-01-03T00:00:00.000Z")
            store.add_memory_feedback(mid, "cars?", False, "2026-01-03T00:00:00.000Z")  # after: counts too
        got = _held_equals_sql(kb, home)[mid]
        assert got[0] == truth[mid][0] + 2 and got[2] == truth[mid][2] + 1


def test_rolled_back_use_counts_leave_the_held_copy_as_the_file(home: Path) -> None:
    with graphmem.open(home, config=CONFIG) as kb:
        truth = _held_equals_sql(kb, home)
        mid = next(iter(truth))
        with pytest.raises(RuntimeError), kb.store.transaction():
            kb.store.record_memory_use([mid, mid], "2026-01-02T00:00:00.000Z")
            raise RuntimeError("boom")
        assert _held_equals_sql(kb, home) == truth
        kb.store.record_memory_use([mid], "2026-01-04T00:00:00.000Z")  # autocommitted, outside a transaction
        assert _held_equals_sql(kb, home)[mid][0] == truth[mid][0] + 1


def test_another_process_feedback_and_mark_are_seen(home: Path) -> None:
    with graphmem.open(home, config=CONFIG) as kb:
        found = kb.memory.search("planes tea", user_id="u2", limit=3)
        target = found.results[0].id
        _held_equals_sql(kb, home)
        script = ("import sys, graphmem\nwith graphmem.open(sys.argv[1], config={'embeddings': {'model': 'none'}})"
                  " as kb:\n    kb.memory.feedback(sys.argv[2], 'planes tea', True)\n"
                  "    kb.memory.mark_irrelevant(sys.argv[2], 0.5)\n")
        subprocess.run([sys.executable, "-c", script, str(home), target], check=True)
        truth = _held_equals_sql(kb, home)
        assert truth[target][1] == 1
        again = kb.memory.search("planes tea", user_id="u2", limit=3)
        hit = {h.id: h for h in again.results}.get(target)
        assert hit is None or hit.context_graph.success == 0.5  # (1 - 0) / (1 + 1)


def _vector_config(model_dir: Path) -> dict[str, Any]:
    return {"embeddings": {"model": f"model2vec:{model_dir}"}}


def test_another_process_adds_vectors_and_the_index_sees_them(tmp_path: Path, model_dir: Path) -> None:
    home = tmp_path / "kb"
    cfg = _vector_config(model_dir)
    with graphmem.open(home, config=cfg) as kb:
        kb.memory.add(["the ferry leaves at noon", "my sister likes green tea"], user_id="u1")
        for _ in range(20):  # past the partial reads: the whole matrix is loaded and then kept
            kb.memory.search("ferry", user_id="u1")
        idx = kb.embeddings.vector_index("memory")
        assert idx is not None and len(idx) == 2
        script = ("import sys, json, graphmem\nwith graphmem.open(sys.argv[1], config=json.loads(sys.argv[2])) as kb:\n"
                  "    print(kb.memory.add('the volcano erupted in 1883', user_id='u1').results[0].id)\n")
        env = {k: v for k, v in os.environ.items() if k != "GRAPHMEM_EMBED_MODEL"}
        new_id = subprocess.run([sys.executable, "-c", script, str(home), json.dumps(cfg)], check=True, env=env,
                                capture_output=True, text=True).stdout.strip()
        found = kb.memory.search("volcano eruption", user_id="u1")
        assert found.results[0].id == new_id and found.results[0].context_graph.dense > 0.3
        assert len(idx) == 3
        assert kb.embeddings.stored_model() == kb.store.get_meta("embeddings.model")


def test_stored_model_follows_another_connection(home: Path) -> None:
    with graphmem.open(home, config=CONFIG) as kb, graphmem.open(home, config=CONFIG) as other:
        assert kb.embeddings.stored_model() is None
        other.store.set_meta("embeddings.model", "m-1")
        assert kb.embeddings.stored_model() == "m-1"
        with kb.store.transaction():
            kb.store.set_meta("embeddings.model", "m-2")
            assert kb.embeddings.stored_model() == "m-2"  # inside a transaction: read, never held
        assert kb.embeddings.stored_model() == "m-2"


class _FakeVectors:
    """The four store methods a VectorIndex reads, over fixed vectors (ties on purpose)."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def read_stamp(self) -> None:
        return None

    def vector_state(self) -> tuple[int, int]:
        return (len(self.vectors), 0)

    def load_vectors(self, kind: str, model: str, after: int) -> tuple[list[int], list[str], list[bytes]]:
        items = list(self.vectors.items())[after:]
        return ([after + j + 1 for j in range(len(items))], [i for i, _ in items],
                [v.astype(np.float16).tobytes() for _, v in items])

    def vectors_for(self, kind: str, ids: list[str], model: str) -> dict[str, bytes]:
        return {i: self.vectors[i].astype(np.float16).tobytes() for i in ids if i in self.vectors}


@pytest.mark.parametrize("loaded", [False, True])
def test_top_of_is_the_sorted_similarities_cut_at_k(loaded: bool) -> None:
    rng = np.random.default_rng(7)
    base = rng.normal(size=(6, 16)).astype(np.float32)
    # ids in a shuffled order, five copies of each vector: ties everywhere, broken by id
    vectors = {f"m{(j * 7) % 30:02d}": base[j % 6] / np.linalg.norm(base[j % 6]) for j in range(30)}
    idx = VectorIndex(_FakeVectors(vectors), "memory", "fake")  # type: ignore[arg-type]
    if loaded:
        idx.refresh()
    q = rng.normal(size=16).astype(np.float32)
    ids = [*vectors, "absent"]
    for k in (1, 3, 5, 7, 29, 30, 40):
        want = sorted(idx.similarity(q, ids).items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        assert idx.top_of(q, ids, k) == want
    assert idx.top_of(q, ["absent"], 3) == [] and idx.top_of(q, ids, 0) == []


def test_a_read_scope_pins_only_its_own_thread(home: Path) -> None:
    with graphmem.open(home, config=CONFIG) as kb, graphmem.open(home, config=CONFIG) as other:
        store = kb.store
        seen: dict[str, Any] = {}
        with store.read_scope():
            pinned = store.read_stamp()
            other.store.set_meta("mem2.test", "1")  # another connection commits mid-scope

            def elsewhere() -> None:
                seen["stamp"] = store.read_stamp()

            t = threading.Thread(target=elsewhere)
            t.start()
            t.join()
            assert store.read_stamp() == pinned
        assert seen["stamp"] != pinned and seen["stamp"] == store.read_stamp()


def test_use_counts_beside_another_commit_hook_are_not_harmless(home: Path) -> None:
    with graphmem.open(home, config=CONFIG) as kb:
        truth = _held_equals_sql(kb, home)
        mid = next(iter(truth))
        stamp = kb.store.read_stamp()
        with kb.store.transaction():
            kb.store.on_commit(after=lambda: None)  # type: ignore[attr-defined]  # may write after COMMIT
            kb.store.record_memory_use([mid], "2026-01-05T00:00:00.000Z")
        assert kb.store.read_stamp() != stamp  # counted as a write: every copy re-checks
        assert _held_equals_sql(kb, home)[mid][0] == truth[mid][0] + 1
