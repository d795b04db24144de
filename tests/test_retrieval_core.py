"""The retrieval core: the one BFS against the four expansions it replaced, seeds, rerank, chains.

The reference functions below are the expansions as they were before the core (main at 1f816ec:
passages' ``_bfs_scores``, the seed query's ``bfs``, memories' ``_bfs``, skills' one hop), kept
here only as oracles. Each adapter must give the same scores, parents and order on random graphs
whose weights repeat (so that ties, and how they are broken, are exercised).
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from graphmem.memory.search import _bfs as memory_bfs
from graphmem.models import Edge
from graphmem.retrieval.config import SkillConfig
from graphmem.retrieval.core import UPDATES, chain, expand_bfs, ranked, seed_strengths, weighted_score
from graphmem.retrieval.graph_query import bfs
from graphmem.skills.retrieve import _expand as skills_expand

WEIGHTS = (0.25, 0.5, 0.7, 1.0, 1.0, 1.5)


def _graph(rng: random.Random, n: int, m: int) -> dict[int, list[tuple[int, float, str]]]:
    adj: dict[int, list[tuple[int, float, str]]] = {i: [] for i in range(n)}
    for _ in range(m):
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b:
            adj[a].append((b, rng.choice(WEIGHTS), rng.choice("rst")))
    return adj


def _seeds(rng: random.Random, n: int) -> dict[int, float]:
    return {i: rng.choice((0.2, 0.5, 1.0)) for i in rng.sample(range(n), rng.randint(1, min(6, n)))}


CASES = [random.Random(seed) for seed in range(150)]


# -- references (the code before the core) ---------------------------------------------------------

def ref_passage_bfs(seeds: dict[Any, float], graph: Callable[[list[Any]], dict[Any, list[tuple[Any, float]]]],
                    depth: int, max_nodes: int) -> tuple[dict[Any, float], dict[Any, Any]]:
    top = max(seeds.values())
    score = {n: v / top for n, v in seeds.items()}
    parent: dict[Any, Any] = {}
    frontier = sorted(score, key=lambda n: -score[n])[:max_nodes]
    score = {n: score[n] for n in frontier}
    for _ in range(depth):
        if not frontier or len(score) >= max_nodes:
            break
        adj = graph(frontier)
        cand: dict[Any, tuple[float, Any]] = {}
        for u in frontier:
            for v, w in adj.get(u, ()):
                s = score[u] * min(w, 1.0) * 0.5
                if v not in score and s > cand.get(v, (0.0, u))[0]:
                    cand[v] = (s, u)
        room = max_nodes - len(score)
        nxt = sorted(cand, key=lambda v: -cand[v][0])[:room]
        for v in nxt:
            score[v], parent[v] = cand[v][0], cand[v][1]
        frontier = nxt
    return score, parent


def ref_query_bfs(seeds: list[str], edges_of: Callable[[list[str]], Iterable[Edge]], max_depth: int,
                  max_nodes: int) -> tuple[list[str], dict[str, int], dict[str, tuple[str, Edge]]]:
    order: list[str] = []
    depth: dict[str, int] = {}
    parent: dict[str, tuple[str, Edge]] = {}
    for s in seeds:
        if s not in depth and len(order) < max_nodes:
            depth[s] = 0
            order.append(s)
    frontier = list(order)
    for level in range(1, max_depth + 1):
        if not frontier or len(order) >= max_nodes:
            break
        in_frontier = set(frontier)
        nxt: list[str] = []
        for e in edges_of(frontier):
            for here, there in ((e.source, e.target), (e.target, e.source)):
                if here in in_frontier and there not in depth:
                    if len(order) >= max_nodes:
                        break
                    depth[there] = level
                    parent[there] = (here, e)
                    order.append(there)
                    nxt.append(there)
        frontier = nxt
    return order, depth, parent


def ref_memory_bfs(seeds: dict[Any, float], lookup: Any, depth: int, cap: int
                   ) -> tuple[dict[Any, float], dict[Any, tuple[Any, str, float]]]:
    graph = dict(seeds)
    parent: dict[Any, tuple[Any, str, float]] = {}
    frontier = list(seeds)
    for _ in range(depth):
        if not frontier:
            break
        nbrs = lookup(frontier)
        changed: set[Any] = set()
        for u in frontier:
            for v, w, t in nbrs.get(u, ()):
                cand = graph[u] * w
                if cand > graph.get(v, 0.0) + 1e-12:
                    graph[v] = cand
                    if v not in seeds:
                        parent[v] = (u, t, w)
                    changed.add(v)
        frontier = sorted(changed, key=lambda n: -graph[n])[: max(cap, 1)]
    keep = set(seeds) | set(sorted((n for n in graph if n not in seeds), key=lambda n: (-graph[n], n))
                            [: max(0, cap - len(seeds))])
    return {n: s for n, s in graph.items() if n in keep}, {n: p for n, p in parent.items() if n in keep}


def ref_skills_hop(adjacency: dict[int, list[tuple[int, float, str]]], seeds: list[int],
                   pers: dict[int, float], tw: dict[str, float]) -> tuple[dict[int, float], dict[int, int]]:
    graph: dict[int, float] = {}
    parent: dict[int, int] = {}
    total = sum(pers.values()) or 1.0
    for s in seeds:
        graph[s] = max(graph.get(s, 0.0), pers[s] / total)
        for v, w, t in adjacency.get(s, ()):
            g = pers[s] / total * w * tw.get(t, 1.0)
            if g > graph.get(v, 0.0):
                graph[v] = g
                if v not in pers:
                    parent[v] = s
    return graph, parent


# -- the adapters give what the references gave -----------------------------------------------------

@pytest.mark.parametrize("case", range(len(CASES)))
def test_passage_bfs_equals_the_old_one(case: int) -> None:
    rng = CASES[case]
    n = rng.randint(2, 40)
    adj = _graph(rng, n, rng.randint(0, 120))
    seeds = _seeds(rng, n)
    depth, cap = rng.randint(0, 3), rng.randint(1, 30)

    def graph(nodes: list[int]) -> dict[int, list[tuple[int, float]]]:
        return {u: [(v, w) for v, w, _ in adj[u]] for u in nodes}

    def steps(frontier: list[int]) -> Iterable[tuple[int, int, float, None]]:  # as PassageGraph.bfs_steps
        got = graph(frontier)
        for u in frontier:
            for v, w in got.get(u, ()):
                yield u, v, min(w, 1.0) * 0.5, None

    want_score, want_parent = ref_passage_bfs(seeds, graph, depth, cap)
    top = max(seeds.values())
    walk = expand_bfs({k: v / top for k, v in seeds.items()}, steps, depth=depth, max_nodes=cap)
    assert list(walk.score.items()) == list(want_score.items())  # same order: ties break on it
    assert {v: u for v, (u, _) in walk.parent.items()} == want_parent


@pytest.mark.parametrize("case", range(len(CASES)))
def test_graph_query_bfs_equals_the_old_one(case: int) -> None:
    rng = CASES[case]
    n = rng.randint(2, 40)
    adj = _graph(rng, n, rng.randint(0, 120))
    edges = [Edge(f"e{a}-{b}-{i}", f"n{a}", f"n{b}", t, w) for a in adj for i, (b, w, t) in enumerate(adj[a])]
    edges.sort(key=lambda e: -e.confidence)  # strongest first, as the store returns them

    def edges_of(frontier: list[str]) -> list[Edge]:
        inside = set(frontier)
        return [e for e in edges if e.source in inside or e.target in inside]

    seeds = [f"n{rng.randrange(n)}" for _ in range(rng.randint(1, 5))]  # duplicates allowed
    depth, cap = rng.randint(0, 3), rng.randint(0, 25)
    got = bfs(seeds, edges_of, depth, cap)
    order, depths, parent = ref_query_bfs(seeds, edges_of, depth, cap)
    assert (got.order, got.depth, got.parent) == (order, depths, parent)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_memory_bfs_equals_the_old_one(case: int) -> None:
    rng = CASES[case]
    n = rng.randint(2, 40)
    adj = _graph(rng, n, rng.randint(0, 120))
    seeds = _seeds(rng, n)
    depth, cap = rng.randint(1, 3), rng.randint(1, 30)

    def lookup(nodes: list[int]) -> dict[int, list[tuple[int, float, str]]]:
        return {u: [(v, min(w, 1.0), t) for v, w, t in adj[u]] for u in nodes}

    got = memory_bfs(seeds, lookup, depth, cap)
    want = ref_memory_bfs(seeds, lookup, depth, cap)
    assert list(got[0].items()) == list(want[0].items()) and got[1] == want[1]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_skills_hop_equals_the_old_one(case: int) -> None:
    rng = CASES[case]
    n = rng.randint(2, 40)
    adj = _graph(rng, n, rng.randint(0, 120))
    seeds = list(_seeds(rng, n))
    fused = {i: rng.choice((0.01, 0.016, 0.03)) for i in seeds[: max(1, len(seeds) - 1)]}
    idx = SimpleNamespace(adjacency=adj)
    cfg = SkillConfig()
    got = skills_expand(idx, seeds, fused, cfg)  # type: ignore[arg-type]
    pers = {i: fused.get(i, max(fused.values(), default=1.0)) for i in seeds}
    want = ref_skills_hop(adj, seeds, pers, dict(cfg.edge_types))
    assert got[0] == want[0] and got[1] == want[1]
    # the order of graph-only candidates (ties of graph score) follows the reference too
    assert [k for k in got[0] if k not in seeds] == [k for k in want[0] if k not in seeds]


# -- the core on its own ----------------------------------------------------------------------------

LINE = {0: [(1, 0.5)], 1: [(2, 0.5)], 2: [(3, 0.5)], 3: []}


def _steps(adj: dict[int, list[tuple[int, float]]]) -> Callable[[list[int]], list[tuple[int, int, float, str]]]:
    return lambda frontier: [(u, v, w, f"{u}->{v}") for u in frontier for v, w in adj.get(u, ())]


def test_depth_and_node_caps_bound_the_walk() -> None:
    walk = expand_bfs({0: 1.0}, _steps(LINE), depth=2)
    assert walk.score == {0: 1.0, 1: 0.5, 2: 0.25} and walk.depth == {0: 0, 1: 1, 2: 2}
    assert walk.parent == {1: (0, "0->1"), 2: (1, "1->2")}
    assert list(expand_bfs({0: 1.0}, _steps(LINE), depth=5, max_nodes=2).score) == [0, 1]
    assert expand_bfs({0: 1.0}, _steps(LINE), depth=0).score == {0: 1.0}


def test_update_modes_differ_exactly_where_documented() -> None:
    # 0 reaches 2 directly (weak) and through 1 (strong, two hops); seed 1 is raised by seed 0.
    adj = {0: [(2, 0.1), (1, 1.0)], 1: [(2, 0.9)], 2: []}
    first = expand_bfs({0: 1.0}, _steps(adj), depth=2)
    assert first.score[2] == pytest.approx(0.1)  # a node keeps the level that first reached it
    improved = expand_bfs({0: 1.0}, _steps(adj), depth=2, update="current")
    assert improved.score[2] == pytest.approx(0.9) and improved.parent[2] == (1, "1->2")
    # two seeds in one level: "current" lets a seed raised earlier in the level spread its new score
    seeds = {0: 1.0, 1: 0.2}
    assert expand_bfs(seeds, _steps(adj), depth=1, update="current").score[2] == pytest.approx(0.9)
    assert expand_bfs(seeds, _steps(adj), depth=1, update="level").score[2] == pytest.approx(0.18)
    assert expand_bfs(seeds, _steps(adj), depth=1, update="level").score[1] == 1.0  # seeds rise too
    with pytest.raises(ValueError, match="update"):
        expand_bfs(seeds, _steps(adj), depth=1, update="sideways")
    assert set(UPDATES) == {"first", "level", "current"}


def test_min_gain_and_frontier_cap() -> None:
    adj = {0: [(1, 1.0), (2, 1.0)], 1: [(3, 1.0)], 2: [(4, 1.0)], 3: [], 4: []}
    capped = expand_bfs({0: 1.0}, _steps(adj), depth=2, update="current", frontier_cap=1)
    assert 3 in capped.score and 4 not in capped.score  # only the first of the tied level expands
    same = {0: [(1, 1.0)], 1: [], 2: [(1, 1.0)]}
    walk = expand_bfs({0: 0.5, 2: 0.5 + 1e-13}, _steps(same), depth=1, update="current", min_gain=1e-12)
    assert walk.parent[1] == (0, "0->1")  # float noise does not move the parent


def test_seed_strengths_weighted_score_ranked_and_chain() -> None:
    assert seed_strengths([["a", "b"], ["b", "c"]]) == pytest.approx({"b": 1.0, "a": (1 / 61) / (1 / 61 + 1 / 62),
                                                                       "c": (1 / 62) / (1 / 61 + 1 / 62)})
    assert seed_strengths([[], []]) == {}
    parts = {"dense": 0.5, "lexical": 1.0}
    assert weighted_score(parts, (("dense", 0.4), ("lexical", 0.3), ("graph", 0.3))) == pytest.approx(0.5)
    assert ranked({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "a", "b"]
    assert ranked({"b": 1.0, "a": 1.0}, key=lambda n: -ord(n)) == ["b", "a"]
    assert chain(3, {3: 2, 2: 1, 1: 0}) == [0, 1, 2, 3]
    assert chain(3, {3: 2, 2: 1, 1: 0}, limit=2) == [2, 3]
    assert chain(5, {}) == [5]


# -- the retrieval engine's imports point down --------------------------------------------------------

SRC = Path(__file__).resolve().parent.parent / "src" / "graphmem"
RETRIEVAL_ENGINE = [*sorted((SRC / "retrieval").glob("*.py")), SRC / "memory" / "search.py",
                    SRC / "memory" / "dense.py", SRC / "skills" / "retrieve.py", SRC / "skills" / "prompt.py"]
ABOVE_THE_ENGINE = ("graphmem.kb", "graphmem.faces", "graphmem.cli", "graphmem.compat", "graphmem.server",
                    "graphmem.mcp")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (TYPE_CHECKING blocks and functions too)."""
    package = "graphmem." + ".".join(path.relative_to(SRC).with_suffix("").parts[:-1])
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            mod = ".".join(p for p in (base, node.module or "") if p)
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)  # "from . import x" imports a module x
    return out


@pytest.mark.parametrize("path", RETRIEVAL_ENGINE, ids=lambda p: p.relative_to(SRC).as_posix())
def test_retrieval_engine_never_reaches_up(path: Path) -> None:
    up = sorted(m for m in _imports(path) if m.startswith(ABOVE_THE_ENGINE))
    assert up == [], f"{path.name} imports {up}"
    assert "KnowledgeBase" not in path.read_text(encoding="utf-8")


def test_retrieval_modules_import_no_cycle() -> None:
    mods = {f"graphmem.retrieval.{p.stem}": p for p in (SRC / "retrieval").glob("*.py") if p.stem != "__init__"}
    deps = {m: {d for d in _imports(p) if d in mods and d != m} for m, p in mods.items()}
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        if state.get(m) == 1:
            raise AssertionError(f"import cycle: {' -> '.join([*trail, m])}")
        if state.get(m) == 2:
            return
        state[m] = 1
        for d in sorted(deps[m]):
            visit(d, [*trail, m])
        state[m] = 2

    for m in sorted(mods):
        visit(m, [])
    assert "graphmem.retrieval.graph_query" not in deps["graphmem.retrieval.search"]
    assert "graphmem.retrieval.search" in deps["graphmem.retrieval.graph_query"]  # one way only
