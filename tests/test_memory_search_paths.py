"""Memory search's read paths: the scope read once versus per memory reached, the rerank's inputs
versus full rows, and the use counts one search writes for the next."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.memory import dense

CLOCK = datetime(2026, 12, 2, tzinfo=timezone.utc)
TOPICS = ["boats", "cars", "trains", "planes", "bikes", "kayaks", "tea", "coffee"]


def _fill(kb: graphmem.KnowledgeBase) -> None:
    for user in ("u1", "u2"):
        for run in range(4):
            kb.memory.add([f"{user} turn {i} of run {run} about {TOPICS[(i + run) % len(TOPICS)]} and"
                           f" {TOPICS[(i * 3 + run) % len(TOPICS)]}" for i in range(6)],
                          user_id=user, run_id=f"r{run}", metadata={"n": run})


def _searches(kb: graphmem.KnowledgeBase) -> list[Any]:
    out = []
    for strategy in ("bfs", "ppr"):
        for q in ("trains and boats", "coffee", "kayaks run 2", "tea turn 3"):
            for scope in ({"user_id": "u1"}, {"user_id": "u2", "run_id": "r1"}):
                out.append(kb.memory.search(q, limit=10, strategy=strategy, **scope).to_dict())
    return out


@pytest.fixture
def model(model_dir: Path) -> dict[str, Any]:
    # few seeds, so that the walk (and its scope checks) decides part of every result list
    return {"embeddings": {"model": f"model2vec:{model_dir}"},
            "memory": {"context_graph": {"retrieval": {"seed_top_k": 2}}}}


@pytest.fixture
def home(tmp_path: Path, model: dict[str, Any]) -> Path:
    with graphmem.open(tmp_path / "kb", clock=lambda: CLOCK, config=model) as kb:
        _fill(kb)
    return tmp_path / "kb"


def test_walk_scope_from_the_read_scope_equals_asking_per_memory(home: Path, tmp_path: Path, model: dict[str, Any],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    other = tmp_path / "copy"
    shutil.copytree(home, other)
    with graphmem.open(home, clock=lambda: CLOCK, config=model) as kb:
        small = _searches(kb)
    monkeypatch.setattr(dense, "EXACT_SCOPE_LIMIT", 1)  # every scope "too big": the store is asked per memory
    with graphmem.open(other, clock=lambda: CLOCK, config=model) as kb:
        asked = _searches(kb)
    assert small == asked
    assert any(len(s["results"]) >= 3 for s in small)
    assert any(not r["context_graph"]["was_seed"] for s in small for r in s["results"])  # the walk added some
    assert any(r["context_graph"]["dense"] > 0 for s in small for r in s["results"])  # dense seeding ran
    assert all(r["user_id"] == "u1" for s in small[::2] for r in s["results"])
    assert all(r["user_id"] == "u2" and r["run_id"] == "r1" for s in small[1::2] for r in s["results"])


def test_results_carry_their_full_rows(home: Path, model: dict[str, Any]) -> None:
    with graphmem.open(home, clock=lambda: CLOCK, config=model) as kb:
        out = kb.memory.search("trains", user_id="u1", limit=4)
        ids = [r.id for r in out.results]
        rows = kb.store.get_memories(ids)
        assert len(ids) == 4
        for r in out.results:
            assert (r.memory, r.user_id, r.run_id, r.timestamp, r.metadata) == (
                rows[r.id]["text"], "u1", rows[r.id]["run_id"], rows[r.id]["said_at"], rows[r.id]["metadata"])
            assert r.metadata == {"n": int(r.run_id[1:])}
            assert "trains" in r.memory or not r.context_graph.was_seed


def test_use_counts_are_durable_and_seen_by_the_next_search(home: Path, model: dict[str, Any]) -> None:
    with graphmem.open(home, clock=lambda: CLOCK, config=model) as kb:
        before = {m["id"]: m["uses"] for m in kb.store.list_memories({"user_id": "u1"}, limit=1000)}
        first = [r.id for r in kb.memory.search("coffee", user_id="u1", limit=3).results]
        second = kb.memory.search("coffee", user_id="u1", limit=3).results
    assert len(first) == 3
    with graphmem.open(home, clock=lambda: CLOCK) as kb:  # a new process's view: committed
        after = {m["id"]: m["uses"] for m in kb.store.list_memories({"user_id": "u1"}, limit=1000)}
    for mid, n in after.items():
        assert n == before[mid] + first.count(mid) + [r.id for r in second].count(mid)
    # the second search ranked with the first one's counts: frequency is on for the used memories
    assert all(r.context_graph.frequency > 0 for r in second if r.id in first)
