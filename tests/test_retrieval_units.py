"""Pure retrieval functions: fusion, personalised PageRank (push vs a dense reference)."""

from __future__ import annotations

import numpy as np
import pytest

from graphmem.retrieval.fusion import max_normalise, minmax, rrf, weighted_sum
from graphmem.retrieval.ppr import personalized_pagerank


def test_rrf_hand_computed():
    scores = rrf([["a", "b", "c"], ["b", "d"]], k=60)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["d"] == pytest.approx(1 / 62)
    assert max(scores, key=scores.get) == "b"


def test_rrf_weights_and_errors():
    s = rrf([["a"], ["b"]], k=0, weights=[2.0, 1.0])
    assert s == {"a": 2.0, "b": 1.0}
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[1.0, 2.0])


def test_minmax_and_max_normalise():
    assert minmax({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    assert minmax({"a": 5.0, "b": 5.0}) == {"a": 1.0, "b": 1.0}
    assert minmax({}) == {}
    assert max_normalise({"a": 2.0, "b": 4.0}) == {"a": 0.5, "b": 1.0}
    assert max_normalise({"a": -1.0, "b": 0.0}) == {"a": 0.0, "b": 0.0}


def test_weighted_sum():
    s = weighted_sum([{"a": 1.0, "b": 3.0}, {"b": 10.0, "c": 20.0}], [1.0, 0.5])
    assert s == {"a": 0.0, "b": 1.0, "c": 0.5}


def _adj(edges):
    adj = {}
    for u, v, w in edges:
        adj.setdefault(u, []).append((v, w))
        adj.setdefault(v, []).append((u, w))
    return adj


def _dense_ppr(adj, nodes, pers, alpha, iters=2000):
    """Power iteration with the same conventions: restart alpha, weighted moves, dangling
    nodes send their walking mass back to the personalisation vector."""
    idx = {n: i for i, n in enumerate(nodes)}
    n = len(nodes)
    s = np.zeros(n)
    for k, v in pers.items():
        s[idx[k]] = v
    s /= s.sum()
    P = np.zeros((n, n))
    dangling = np.zeros(n, dtype=bool)
    for u in nodes:
        nbrs = adj.get(u, [])
        tot = sum(w for _, w in nbrs)
        if not nbrs:
            dangling[idx[u]] = True
        for v, w in nbrs:
            P[idx[u], idx[v]] += w / tot
    x = s.copy()
    for _ in range(iters):
        walk = (1 - alpha) * (x @ P + x[dangling].sum() * s)
        x = alpha * s + walk
    return {u: x[idx[u]] for u in nodes}


def test_ppr_hand_computed_two_nodes():
    # a - b, start at a, restart 0.5: x_a = 0.5 + 0.5 x_b, x_b = 0.5 x_a -> x_a = 2/3, x_b = 1/3
    adj = _adj([("a", "b", 1.0)])
    res = personalized_pagerank({"a": 1.0}, lambda ns: {n: adj.get(n, []) for n in ns}, alpha=0.5, eps=1e-9,
                                max_rounds=500)
    assert res.scores["a"] == pytest.approx(2 / 3, abs=1e-6)
    assert res.scores["b"] == pytest.approx(1 / 3, abs=1e-6)
    assert res.parent["b"] == "a"


@pytest.mark.parametrize("alpha", [0.15, 0.5])
def test_ppr_matches_dense_reference(alpha):
    rng = np.random.default_rng(7)
    nodes = [f"n{i}" for i in range(40)]
    edges = []
    for i in range(40):
        for j in rng.choice(40, size=3, replace=False):
            if i != j:
                edges.append((nodes[i], nodes[int(j)], float(rng.uniform(0.6, 1.0))))
    nodes.append("lonely")  # dangling node reachable from nothing, personalised
    adj = _adj(edges)
    pers = {"n0": 1.0, "n5": 0.5, "lonely": 0.25}
    ref = _dense_ppr(adj, nodes, pers, alpha)
    res = personalized_pagerank(pers, lambda ns: {n: adj.get(n, []) for n in ns}, alpha=alpha, eps=1e-8,
                                max_rounds=10000)
    for n in nodes:
        assert res.scores.get(n, 0.0) == pytest.approx(ref[n], abs=1e-5)
    top_ref = sorted(ref, key=lambda n: -ref[n])[:10]
    top_push = sorted(res.scores, key=lambda n: -res.scores[n])[:10]
    assert top_ref == top_push


def test_ppr_is_local():
    """On a long path, a coarse eps touches only the seed's neighbourhood."""
    n = 100_000
    fetched = []

    def neighbours(ns):
        fetched.extend(ns)
        out = {}
        for x in ns:
            i = int(x[1:])
            out[x] = [(f"v{j}", 1.0) for j in (i - 1, i + 1) if 0 <= j < n]
        return out

    res = personalized_pagerank({"v50000": 1.0}, neighbours, alpha=0.5, eps=1e-4)
    assert res.touched < 40 and len(fetched) < 40
    assert res.scores["v50000"] > res.scores.get("v50003", 0) > 0


def test_ppr_empty_and_bad_alpha():
    assert personalized_pagerank({}, lambda ns: {}).scores == {}
    with pytest.raises(ValueError):
        personalized_pagerank({"a": 1.0}, lambda ns: {}, alpha=0.0)


def test_vector_index_stays_in_step_with_interleaved_writes(tmp_path):
    """Appends (amortised in a growing buffer), re-embeddings and deletions, each followed by a
    refresh and an exact search, agree with a plain reference."""
    import numpy as np

    import graphmem
    from graphmem.retrieval.vector_index import VectorIndex

    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        st = kb.store
        idx = VectorIndex(st, "chunk", "m")
        rng = np.random.default_rng(0)
        ref: dict[str, np.ndarray] = {}
        for step in range(120):
            items = {f"c{rng.integers(0, 60)}": rng.standard_normal(8).astype(np.float16)
                     for _ in range(rng.integers(1, 5))}
            with st.transaction():
                st.upsert_vectors("chunk", "m", 8, [(i, "h", v.tobytes()) for i, v in items.items()])
            ref.update(items)
            if step % 40 == 39:
                gone = sorted(ref)[:5]
                with st.transaction():
                    st.conn.execute(f"DELETE FROM vectors WHERE item_id IN ({','.join('?' * len(gone))})", gone)
                for g in gone:
                    ref.pop(g)
            q = rng.standard_normal(8).astype(np.float32)
            got = idx.search(q, 3)
            assert sorted(idx._ids) == sorted(ref) and len(idx._mat) == len(ref)
            want = sorted(ref, key=lambda i: -float(ref[i].astype(np.float32) @ q))[:3]
            assert [i for i, _ in got] == want
            assert idx.similarity(q, want[:1]) == pytest.approx({want[0]: got[0][1]})
