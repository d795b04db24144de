"""The dense seeding's held scope vectors (memory/dense.py): a scope searched again while the store's read stamp
holds scores its memories from a matrix of its own. Every answer is the index's own ``top_of`` of that moment, to
the float, ties included: on the first search (the matrix kept), later ones, after an
add, a text update and a delete (the stamp moved: read again), in another scope, and inside a write transaction."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import graphmem
from graphmem.memory import dense
from graphmem.memory.dense import ScopeIds, dense_top

TOPICS = ["boats", "trains", "planes", "tea", "coffee", "rain"]
QUERIES = ["boats and trains", "a cup of tea", "rain on planes", "coffee", "trains"]


def _clock() -> Callable[[], datetime]:
    """A clock that ticks a second per reading: two knowledge bases built alike get the same timestamps (with the
    wall clock, how long each add took under load decided which memories shared a moment, and results differed)."""
    ticks = iter(range(1, 10**9))
    return lambda: datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc) + timedelta(seconds=next(ticks))


def _kb(tmp_path: Path, model_dir: Path) -> graphmem.KnowledgeBase:
    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": f"model2vec:{model_dir}"}}, clock=_clock())
    for user in ("u1", "u2"):
        for run in range(3):
            kb.memory.add([f"{user} talked in run {run} about {TOPICS[(i + run) % 6]} number {i}" for i in range(6)],
                          user_id=user, run_id=f"r{run}")
    kb.memory.add(["same words", "same words"], user_id="u1")  # a tie: equal vectors, ordered by id
    return kb


def _both(kb: graphmem.KnowledgeBase, query: str, user: str, k: int = 5) -> tuple[Any, Any]:
    qvec = kb.embeddings.embed_query(query)
    idx = kb.embeddings.vector_index("memory")
    assert idx is not None and qvec is not None
    with kb.store.read_scope():
        scope = ScopeIds(kb.ctx, {"user_id": user}, False)
        got = dense_top(kb.ctx, qvec, {"user_id": user}, False, k, scope_ids=scope)
        ids = scope.ids()
        assert ids is not None
        return got, idx.top_of(qvec, ids, k)


def _held_rows(kb: graphmem.KnowledgeBase) -> int:
    return sum(len(h.found) for h in dense._HELD.get(kb.store, {}).values() if h.mat is not None)


def test_held_scope_vectors_answer_as_the_index_does(tmp_path: Path, model_dir: Path) -> None:
    with _kb(tmp_path, model_dir) as kb:
        for round_ in range(3):
            for n, q in enumerate(QUERIES):
                got, expected = _both(kb, q, "u1")
                assert got == expected and len(got) == 5
                if round_ == n == 0:
                    assert _held_rows(kb) == 20  # kept from the scope's first search at this stamp
        got, expected = _both(kb, "same words", "u1", k=2)
        assert got == expected and got[0][1] == got[1][1] and got[0][0] < got[1][0]
        got, expected = _both(kb, "tea", "u2")
        assert got == expected
        kb.memory.add(["u1 now talks about tea and more tea"], user_id="u1")  # the stamp moves
        for q in QUERIES * 2:
            got, expected = _both(kb, q, "u1")
            assert got == expected
        assert any(i == kb.memory.get_all(user_id="u1", limit=100).results[-1].id
                   for i, _ in _both(kb, "tea and more tea", "u1")[0])
        victim = _both(kb, "boats", "u1")[0][0][0]
        kb.memory.update(victim, "nothing about that any more")
        for q in QUERIES:
            assert _both(kb, q, "u1")[0] == _both(kb, q, "u1")[1]
        kb.memory.delete(victim)
        for q in QUERIES * 2:
            got, expected = _both(kb, q, "u1")
            assert got == expected and victim not in {i for i, _ in got}
        with kb.store.transaction():  # no stamp inside a write transaction: the index answers
            qvec = kb.embeddings.embed_query("boats")
            scope = ScopeIds(kb.ctx, {"user_id": "u1"}, False)
            ids = scope.ids()
            assert ids is not None
            assert dense_top(kb.ctx, qvec, {"user_id": "u1"}, False, 5, scope_ids=scope) == \
                kb.embeddings.vector_index("memory").top_of(qvec, ids, 5)  # type: ignore[union-attr]


def _counted_ids(monkeypatch: Any) -> None:
    """Memory ids from a counter (two knowledge bases built alike name their memories alike: ties break alike)."""
    counter = iter(range(1, 10**6))
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter) << 64))


def test_search_results_are_the_same_with_and_without_held_vectors(tmp_path: Path, model_dir: Path,
                                                                    monkeypatch: Any) -> None:
    _counted_ids(monkeypatch)
    with _kb(tmp_path, model_dir) as kb:
        held = [kb.memory.search(q, user_id="u1", limit=6).to_dict() for q in QUERIES * 2]
    monkeypatch.setattr(dense, "_HELD_ROWS", -1)  # never held: every search asks the index
    (tmp_path / "kb").rename(tmp_path / "kb-held")
    _counted_ids(monkeypatch)
    with _kb(tmp_path, model_dir) as kb:
        plain = [kb.memory.search(q, user_id="u1", limit=6).to_dict() for q in QUERIES * 2]
        assert _held_rows(kb) == 0

    def strip(found: list[dict[str, Any]]) -> list[Any]:
        return [[(h["id"], h["score"], h["context_graph"]) for h in f["results"]] for f in found]
    assert strip(held) == strip(plain)
