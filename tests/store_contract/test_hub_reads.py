"""Bounded per-entity reads of a hub, on every backend: a read that stops after the newest few mentions
or edges must give what reading all of them would (the PostgreSQL backend reads a few times the limit
first and falls back to a full read when those mentions repeat too few passages)."""

from __future__ import annotations

from graphmem.models import Mention

from .seed import document, edge, node


def test_recent_mentions_repeating_one_passage_do_not_hide_older_passages(store) -> None:
    _, c = document(store, "d", [f"Hub in passage {i}" for i in range(5)])
    node(store, "hub", "Hub")
    with store.transaction():  # the oldest mentions: one in each of passages 1..4, in order
        store.insert_mentions([Mention("hub", ch.chunk_id, "d", 1, ch.start, ch.start + 3) for ch in c[1:]])
    with store.transaction():  # then 60 mentions of passage 0, the newest of all
        store.insert_mentions([Mention("hub", c[0].chunk_id, "d", 1, c[0].start + (i % 3), c[0].start + 3)
                               for i in range(60)])
    got = store.entities_chunks(["hub"], 3)
    assert got == {"hub": [(c[0].chunk_id, c[0].start), (c[4].chunk_id, c[4].start), (c[3].chunk_id, c[3].start)]}
    assert [x.chunk_id for x in store.entities_chunks(["hub"], 10)["hub"]] == [
        c[0].chunk_id, c[4].chunk_id, c[3].chunk_id, c[2].chunk_id, c[1].chunk_id]
    assert store.entity_chunk_counts(["hub"]) == {"hub": 5}


def test_bounded_adjacency_of_a_hub_keeps_its_strongest_edges(store) -> None:
    node(store, "hub", "Hub")
    for i in range(40):
        node(store, f"n{i:02d}", f"N{i}")
        # weights repeat: ties are broken by edge id
        edge(store, "hub" if i % 2 else f"n{i:02d}", "r", f"n{i:02d}" if i % 2 else "hub", (0.6, 0.7, 0.8, 0.9)[i % 4])
    rows = store.adjacency(["hub"], limit=5)
    everything = sorted(store.adjacency(["hub"]), key=lambda r: (-r.confidence, r.edge_id))
    assert rows == everything[:5] and len(everything) == 40
    assert [r.confidence for r in rows] == [0.9] * 5
