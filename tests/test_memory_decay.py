"""Decay with an injected clock: half-lives, use, archive, CONTRADICTS, marks, hourly ticks."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.memory.edges import edge_id

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: Any) -> None:
        self.now += timedelta(**kw)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def dkb(tmp_path: Path, clock: Clock) -> Any:
    with graphmem.open(tmp_path / "kb", clock=clock) as kb:
        yield kb


def one(kb: graphmem.KnowledgeBase, text: str, run: str, **kw: Any) -> str:
    return kb.memory.add(text, user_id="u1", run_id=run, **kw)["results"][0]["id"]


def test_unused_archives_used_survives_contradicts_stays(dkb: graphmem.KnowledgeBase, clock: Clock) -> None:
    unused = one(dkb, "the garage code is 4412", "r1")
    used = one(dkb, "my dentist is doctor Moreau", "r2")
    c1 = one(dkb, "I am vegetarian", "r3")
    c2 = one(dkb, "I eat steak every week", "r4")
    with dkb.store.transaction():  # as the LLM labeller would write it (see test_memory_llm)
        dkb.store.insert_memory_edges([(edge_id(c2, "CONTRADICTS", c1), c2, c1, "CONTRADICTS", 0.9, dkb.now())])
    for _ in range(10):  # 200 days = 6.7 half-lives; the dentist memory is used every 20 days
        clock.advance(days=20)
        assert [r["id"] for r in dkb.memory.search("dentist", user_id="u1")["results"]] == [used]
    out = dkb.memory.tick_decay()
    assert out["archived"] == 0  # the automatic hourly ticks during search already archived it
    assert dkb.memory.get(unused)["archived"] and not dkb.memory.get(used)["archived"]
    assert dkb.memory.get(unused)["relevance"] < 0.02 < dkb.memory.get(used)["relevance"]
    assert not dkb.memory.get(c1)["archived"] and not dkb.memory.get(c2)["archived"]  # a live edge keeps them
    (edge,) = dkb.store.memory_edges_among([c1, c2])
    assert edge[2] == "CONTRADICTS" and edge[3] == 0.9  # never decays
    assert dkb.memory.search("garage code", user_id="u1")["results"] == []
    found = dkb.memory.search("garage code", user_id="u1", include_archived=True)["results"]
    assert [r["id"] for r in found] == [unused]


def test_half_life_and_edge_pruning(dkb: graphmem.KnowledgeBase, clock: Clock) -> None:
    a = one(dkb, "first", "r1")
    b = one(dkb, "second", "r1")
    clock.advance(days=30)
    out = dkb.memory.tick_decay()
    assert dkb.memory.get(a)["relevance"] == pytest.approx(0.5, abs=1e-6)
    weights = {t: w for _, _, t, w in dkb.store.memory_edges_among([a, b])}
    assert weights == {"REPLY_TO": pytest.approx(0.5), "TEMPORAL_NEXT": pytest.approx(0.3)}
    assert out == {"decayed": 4, "pruned": 0, "archived": 0}
    assert dkb.memory.tick_decay() == {"decayed": 0, "pruned": 0, "archived": 0}  # recomputed, not compounded
    clock.advance(days=70)  # 100 days: REPLY_TO 0.099, TEMPORAL_NEXT 0.06; 0.05 is the pruning floor
    clock.advance(days=10)  # 110 days: TEMPORAL_NEXT 0.047 goes
    out = dkb.memory.tick_decay()
    assert out["pruned"] == 1 and {t for _, _, t, _ in dkb.store.memory_edges_among([a, b])} == {"REPLY_TO"}
    clock.advance(days=90)  # 200 days: all edges gone, both memories below 0.02 -> archived
    out = dkb.memory.tick_decay()
    assert out["pruned"] == 1 and out["archived"] == 2
    assert [e.type for e in dkb.events.list(types=["memory.decayed"])][-1] == "memory.decayed"


def test_old_timestamps_do_not_decay_on_arrival(dkb: graphmem.KnowledgeBase, clock: Clock) -> None:
    old = one(dkb, "said two years ago", "r1", timestamp=T0 - timedelta(days=730))
    dkb.memory.tick_decay()
    m = dkb.memory.get(old)
    assert m["relevance"] == 1.0 and not m["archived"] and m["timestamp"].startswith("2023-01-02")


def test_mark_relevant_sets_a_floor_and_restores(dkb: graphmem.KnowledgeBase, clock: Clock) -> None:
    keep = one(dkb, "keep me", "r1")
    drop = one(dkb, "let me fade", "r2")
    clock.advance(days=400)
    dkb.memory.tick_decay()
    assert dkb.memory.get(keep)["archived"]
    out = dkb.memory.mark_relevant(keep)
    assert out["relevance"] == pytest.approx(0.25, abs=1e-3) and not dkb.memory.get(keep)["archived"]
    clock.advance(days=400)
    dkb.memory.tick_decay()
    assert not dkb.memory.get(keep)["archived"] and dkb.memory.get(keep)["relevance"] == pytest.approx(0.25, abs=1e-3)
    assert dkb.memory.get(drop)["archived"]
    low = dkb.memory.mark_irrelevant(keep, delta=0.2)
    assert low["relevance"] == pytest.approx(0.05, abs=1e-3)


def test_search_ticks_at_most_hourly(dkb: graphmem.KnowledgeBase, clock: Clock) -> None:
    one(dkb, "tick tock", "r1")
    dkb.memory.search("tick", user_id="u1")
    first = dkb.memory.stats()["last_decay"]
    clock.advance(minutes=30)
    dkb.memory.search("tick", user_id="u1")
    assert dkb.memory.stats()["last_decay"] == first
    clock.advance(minutes=31)
    dkb.memory.search("tick", user_id="u1")
    assert dkb.memory.stats()["last_decay"] > first


def test_decay_switches(tmp_path: Path, clock: Clock) -> None:
    with graphmem.open(tmp_path / "kb", clock=clock,
                       config={"memory": {"context_graph": {"decay": {"tick_on_read": False}}}}) as kb:
        one(kb, "quiet", "r1")
        kb.memory.search("quiet", user_id="u1")
        assert kb.memory.stats()["last_decay"] is None


def test_an_updated_memory_fades_and_archives_like_any_other(dkb: graphmem.KnowledgeBase, clock: Clock) -> None:
    """Its UPDATED_FROM link to its own old version never decays, and it counted as a live link: after 400
    days an updated memory had relevance 0.0001 and was still not archived."""
    kept = one(dkb, "the boat is blue", "r1")
    dkb.memory.update(kept, "the boat is green")
    plain = one(dkb, "the car is red", "r2")
    clock.advance(days=400)
    dkb.memory.tick_decay()
    assert dkb.memory.get(plain)["archived"]
    assert dkb.memory.get(kept)["archived"] and dkb.memory.get(kept)["relevance"] < 0.02
    (edge,) = [e for e in dkb.store.memory_edges_among([kept, f"{kept}~v1"]) if e[2] == "UPDATED_FROM"]
    assert edge[3] == 1.0  # the link itself stays, for history
