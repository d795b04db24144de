"""The skills index reads edges lazily (SkillAdjacency): each skill's list must be what reading
every edge at once gives, in the same order, whatever the mix of edge types, directions,
self-loops and edges to other kinds of nodes."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

import graphmem
from graphmem.models import Edge, Node
from graphmem.skills.index import SkillAdjacency

T0 = "2024-01-01T00:00:00.000Z"
TYPES = ("related", "sibling", "similar", "mentions")


def _full_read(store, by_node):
    """The adjacency as the index built it before it became lazy: every skill edge at once."""
    lists = defaultdict(list)
    for src, typ, dst, w, _ in store.skill_edges():
        a, b = by_node.get(src), by_node.get(dst)
        if a is None or b is None:
            continue
        lists[a].append((b, w, typ))
        if typ != "related":
            lists[b].append((a, w, typ))
    return dict(lists)


@pytest.fixture
def store_with_edges(tmp_path):
    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}})
    store = kb.store
    rng = random.Random(5)
    n = 40
    ids = [f"skill:s{i:02d}" for i in range(n)]
    with store.transaction():
        for i, nid in enumerate(ids):
            store.insert_node(Node(nid, "skill", f"S{i}", "skill", created_at=T0, updated_at=T0), [(f"S{i}", f"s{i}")])
            store.upsert_skill({"skill_id": f"s{i:02d}", "node_id": nid, "root": "/r", "path": f"/r/s{i}/SKILL.md",
                                "name": f"S{i}", "name_key": f"s{i}", "description": "", "category": "c",
                                "tags": [], "triggers": [], "related": [], "body": "", "meta": {},
                                "sha256": f"h{i}", "size": 1, "mtime_ns": 1, "updated_at": T0})
        store.insert_node(Node("ent", "entity", "Ent", "thing", created_at=T0, updated_at=T0), [("Ent", "ent")])
        edges, seen = [], set()
        for k in range(300):
            a, b = rng.choice(ids), rng.choice(ids)
            t = rng.choice(TYPES)
            if (a, t, b) in seen:
                continue
            seen.add((a, t, b))
            edges.append((f"e{k}", a, t, b, round(rng.random(), 3)))
        edges.append(("loop", ids[3], "similar", ids[3], 0.5))  # a self-loop counts under both ends
        store.apply_skill_edges(edges, [], [], T0)
        store.insert_edge(Edge("x", ids[0], "ent", "mentions", 0.9))  # to an entity: ignored
    by_node = {nid: i for i, nid in enumerate(ids)}
    yield store, by_node
    kb.close()


def test_lazy_lists_equal_the_full_read_in_order(store_with_edges) -> None:
    store, by_node = store_with_edges
    want = _full_read(store, by_node)
    lazy = SkillAdjacency(store, by_node)
    assert bool(lazy) is True
    lazy.prefetch([3, 7, 7, 11])
    for row in range(len(by_node)):  # some read in one batch, the others one by one
        assert lazy.get(row, ()) == want.get(row, ()), row
    assert lazy.get(3) and sum(1 for v, _, _ in lazy[3] if v == 3) == 2  # the self-loop, under both ends
    assert dict(SkillAdjacency(store, by_node).items()) == want  # iterating reads everything
    assert len(SkillAdjacency(store, by_node)) == len(want)


def test_no_skill_edges_is_falsy_and_absent_rows_raise(tmp_path) -> None:
    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}})
    lazy = SkillAdjacency(kb.store, {"skill:a": 0})
    assert not lazy and lazy.get(0) is None and lazy.get(0, ()) == ()
    with pytest.raises(KeyError):
        lazy[0]
    kb.close()
