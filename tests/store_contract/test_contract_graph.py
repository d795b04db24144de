"""Contract of :class:`graphmem.store.protocols.GraphStore`: nodes, names, edges, ontology types."""

from __future__ import annotations

import pytest

from graphmem.errors import BackendError
from graphmem.models import Edge, Node
from graphmem.store.protocols import GraphStore

from .seed import T0, T1, document, edge, evidence, mention, node

PROTOCOL = GraphStore
contract = pytest.mark.contract


@contract("insert_node", "get_nodes", "find_nodes", "node_names", "node_labels")
def test_nodes_with_names_and_aliases(store) -> None:
    ada = node(store, "ada", "Ada Lovelace", type="person", aliases=("Ada", "Countess"))
    node(store, "ada2", "Ada", kind="memory")  # names are per kind
    node(store, "bob", "Bob", aliases=("Ada",))  # a name another entity owns is skipped
    got = store.get_nodes(["ada", "bob", "zzz", "ada"])
    assert set(got) == {"ada", "bob"}
    assert (got["ada"].name, got["ada"].type, got["ada"].kind, got["ada"].aliases) == (
        "Ada Lovelace", "person", "entity", ["Ada", "Countess"])
    assert got["ada"].created_at == ada.created_at and got["ada"].manual is False
    assert got["bob"].aliases == []
    assert store.find_nodes("entity", ["ada", "countess", "bob", "nobody"]) == {
        "ada": "ada", "countess": "ada", "bob": "bob"}
    assert store.find_nodes("memory", ["ada"]) == {"ada": "ada2"}
    assert store.node_names(["ada", "bob", "zzz"]) == {"ada": "Ada Lovelace", "bob": "Bob"}
    assert store.get_nodes([]) == {} and store.find_nodes("entity", []) == {} and store.node_names([]) == {}
    assert store.node_labels(["ada", "bob", "zzz", "ada", "ada2"]) == {
        "ada": ("Ada Lovelace", "person"), "bob": ("Bob", "thing"), "ada2": ("Ada", "thing")}
    assert store.node_labels([]) == {}


@contract("insert_node")
def test_insert_node_rejects_an_id_in_use(store) -> None:
    node(store, "ada", "Ada")
    with pytest.raises(BackendError), store.transaction():
        store.insert_node(Node("other", "entity", "Other", "thing", created_at=T0, updated_at=T0),
                          [("Other", "other")])
        store.insert_node(Node("ada", "entity", "Twice", "thing", created_at=T0, updated_at=T0), [("Twice", "twice")])
    assert store.get_nodes(["other"]) == {} and store.find_nodes("entity", ["twice", "other"]) == {}


@contract("insert_nodes")
def test_insert_nodes_equals_insert_node_one_by_one(store) -> None:
    node(store, "bob", "Bob")
    items = [(Node("ada", "entity", "Ada Lovelace", "person", properties={"born": 1815}, created_at=T0,
                   updated_at=T1), [("Ada Lovelace", "ada lovelace"), ("Ada", "ada"), ("Bob", "bob")]),
             (Node("cy", "entity", "Cy", "thing", created_at=T0, updated_at=T0),
              [("Cy", "cy"), ("Countess", "countess")])]
    with store.transaction():
        store.insert_nodes(items)
        store.insert_nodes([])
    got = store.get_nodes(["ada", "cy"])
    assert got["ada"].aliases == ["Ada"] and got["cy"].aliases == ["Countess"]  # a name Bob owns is skipped
    assert (got["ada"].properties, got["ada"].updated_at, got["ada"].type) == ({"born": 1815}, T1, "person")
    assert store.find_nodes("entity", ["ada", "bob", "countess", "ada lovelace"]) == {
        "ada": "ada", "bob": "bob", "countess": "cy", "ada lovelace": "ada"}
    assert [h.id for h in store.search_node_names("countess", "entity", 5)] == ["cy"]
    # An id in use fails the call and its transaction: nothing of it is written.
    with pytest.raises(BackendError), store.transaction():
        store.insert_nodes([(Node("dee", "entity", "Dee", "thing", created_at=T0, updated_at=T0), [("Dee", "dee")]),
                            (Node("bob", "entity", "Bob", "thing", created_at=T0, updated_at=T0), [("B", "b")])])
    assert store.get_nodes(["dee"]) == {} and store.find_nodes("entity", ["dee", "b"]) == {}


@contract("add_names")
def test_add_names_reports_names_owned_by_another_node(store) -> None:
    node(store, "ada", "Ada")
    node(store, "bob", "Bob")
    with store.transaction():
        taken = store.add_names("ada", "entity", [("Countess", "countess"), ("Bob", "bob"), ("Ada", "ada")])
    assert taken == ["bob"]
    assert store.get_nodes(["ada"])["ada"].aliases == ["Countess"]
    assert store.find_nodes("entity", ["bob"]) == {"bob": "bob"}


@contract("update_node", "list_nodes", "has_entities")
def test_update_and_list_nodes(store) -> None:
    assert store.has_entities() is False
    node(store, "m", "a memory", kind="memory")
    assert store.has_entities() is False
    n = node(store, "b", "Beta", type="tool")
    node(store, "a", "Alpha", type="person")
    node(store, "c", "Gamma", type="tool")
    assert store.has_entities() is True
    n.name, n.type, n.properties, n.updated_at, n.relevance, n.archived, n.manual = (
        "Beta 2", "person", {"k": "v"}, T1, 0.5, True, True)
    n.kind, n.created_at = "memory", "changed"  # not written back
    with store.transaction():
        store.update_node(n)
        store.update_node(Node("zzz", "entity", "Ghost", "thing"))  # missing: nothing
    got = store.get_nodes(["b"])["b"]
    assert (got.name, got.type, got.properties, got.updated_at, got.relevance, got.archived, got.manual) == (
        "Beta 2", "person", {"k": "v"}, T1, 0.5, True, True)
    assert (got.kind, got.created_at) == ("entity", T0)
    assert store.get_nodes(["zzz"]) == {}
    assert [x.id for x in store.list_nodes("entity")] == ["a", "b", "c"]
    assert [x.id for x in store.list_nodes("entity", type="tool")] == ["c"]
    assert [x.id for x in store.list_nodes("entity", limit=1, offset=1)] == ["b"]
    assert store.list_nodes("skill") == []


@contract("search_node_names")
def test_search_node_names_matches_names_and_aliases_once_per_node(store) -> None:
    node(store, "ada", "Ada Lovelace", aliases=("Countess of Lovelace",))
    node(store, "bob", "Bob Lovelace")
    node(store, "m", "Lovelace notes", kind="memory")
    hits = store.search_node_names("Lovelace", "entity", 10)
    assert sorted(h.id for h in hits) == ["ada", "bob"] and all(h.score > 0 for h in hits)
    assert [h.id for h in store.search_node_names("countess", "entity", 10)] == ["ada"]
    assert len(store.search_node_names("lovelace", "entity", 1)) == 1
    assert store.search_node_names("lovelace", "entity", 0) == []
    assert store.search_node_names("?!", "entity", 5) == []
    assert [h.id for h in store.search_node_names('"Ada* NEAR(', "entity", 5)] == ["ada"]


@contract("search_node_spellings", "search_node_names", "get_nodes", "update_node")
def test_search_node_spellings_is_the_name_search_with_each_nodes_spellings(store) -> None:
    node(store, "ada", "Ada Lovelace", aliases=("Countess of Lovelace", "Ada King"))
    node(store, "bob", "Bob Lovelace")
    node(store, "cy", "Cy", aliases=("Lovelace Jr",))
    node(store, "m", "Lovelace notes", kind="memory")
    renamed = store.get_nodes(["bob"])["bob"]
    renamed.name = "Robert Lovelace"  # the old name stays a spelling (an alias row), the new one leads
    with store.transaction():
        store.update_node(renamed)
    for text, k in (("Lovelace", 10), ("countess lovelace", 10), ("lovelace", 2), ("lovelace", 0), ("?!", 5)):
        plain = store.search_node_names(text, "entity", k)
        got = store.search_node_spellings(text, "entity", k)
        assert [(g.id, g.score) for g in got] == [(h.id, h.score) for h in plain]
        nodes = store.get_nodes(g.id for g in got)
        assert [g.spellings for g in got] == [[nodes[g.id].name, *nodes[g.id].aliases] for g in got]
    got = {g.id: g.spellings for g in store.search_node_spellings("Lovelace", "entity", 10)}
    assert got == {"ada": ["Ada Lovelace", "Countess of Lovelace", "Ada King"],
                   "bob": ["Robert Lovelace", "Bob Lovelace"], "cy": ["Cy", "Lovelace Jr"]}
    assert store.search_node_spellings("notes", "entity", 5) == []


@contract("merge_nodes")
def test_merge_nodes_moves_folds_and_drops(store) -> None:
    _, c = document(store, "d", ["Ada and Lovelace wrote notes"])
    node(store, "keep", "Ada")
    node(store, "other", "Lovelace", aliases=("Countess",), manual=True)
    node(store, "notes", "Notes")
    node(store, "x", "X")
    dup_keep = edge(store, "keep", "wrote", "notes", confidence=0.6)
    dup_other = edge(store, "other", "wrote", "notes", confidence=0.9)
    moved = edge(store, "x", "knows", "other")
    edge(store, "keep", "same as", "other")
    evidence(store, "edge", dup_other.id, c[0], "Lovelace wrote")
    evidence(store, "node", "other", c[0], "Lovelace")
    mention(store, "other", c[0], "Lovelace")
    with store.transaction():
        counts = store.merge_nodes("keep", "other", T1)
    assert counts == {"edges_moved": 1, "edges_folded": 1, "self_loops_dropped": 1}
    assert set(store.get_nodes(["keep", "other"])) == {"keep"}
    kept = store.get_nodes(["keep"])["keep"]
    assert kept.manual is True and set(kept.aliases) == {"Lovelace", "Countess"}
    assert store.find_edge("keep", "wrote", "notes").confidence == 0.9
    assert [p.text for p in store.provenance_for("edge", [dup_keep.id])[dup_keep.id]] == ["Lovelace wrote"]
    assert store.get_edges([moved.id])[moved.id].target == "keep"
    assert store.find_edge("keep", "same as", "keep") is None
    assert [p.item_id for p in store.provenance_for("node", ["keep"])["keep"]] == ["keep"]
    assert [m.node_id for m in store.mentions_of(["keep"])["keep"]] == ["keep"]
    # Either node missing: BackendError, nothing written (callers check both exist first).
    for keep, other in (("keep", "zzz"), ("zzz", "x")):
        with pytest.raises(BackendError), store.transaction():
            store.append_event("merge", other, T1, {})
            store.merge_nodes(keep, other, T1)
    assert set(store.get_nodes(["keep", "x"])) == {"keep", "x"} and store.list_events() == []


@contract("delete_node")
def test_delete_node_takes_names_edges_mentions_and_evidence(store) -> None:
    _, c = document(store, "d", ["Ada wrote notes"])
    node(store, "ada", "Ada", aliases=("Countess",))
    node(store, "notes", "Notes")
    e = edge(store, "ada", "wrote", "notes")
    evidence(store, "edge", e.id, c[0])
    evidence(store, "node", "ada", c[0], "Ada")
    mention(store, "ada", c[0], "Ada")
    with store.transaction():
        store.delete_node("ada")
        store.delete_node("zzz")
    assert store.get_nodes(["ada"]) == {} and store.find_nodes("entity", ["ada", "countess"]) == {}
    assert store.get_edges([e.id]) == {}
    assert store.provenance_for("edge", [e.id]) == {} and store.provenance_for("node", ["ada"]) == {}
    assert store.mentions_of(["ada"]) == {} and set(store.get_nodes(["notes"])) == {"notes"}


@contract("insert_edge", "get_edges", "find_edge", "find_edges", "update_edge")
def test_edges_by_id_by_triple_and_updates(store) -> None:
    for n in "abc":
        node(store, n, n.upper())
    e = Edge("e1", "a", "b", "knows", 0.7, T0, T0, valid_from="2020", properties={"w": 1})
    with store.transaction():
        store.insert_edge(e)
    edge(store, "b", "knows", "c")
    assert store.get_edges(["e1", "zzz", "e1"]) == {"e1": e}
    assert store.find_edge("a", "knows", "b") == e
    assert store.find_edge("b", "knows", "a") is None and store.find_edge("a", "likes", "b") is None
    found = store.find_edges([("a", "knows", "b"), ("b", "knows", "c"), ("c", "knows", "a")])
    assert sorted(found) == [("a", "knows", "b"), ("b", "knows", "c")] and found[("a", "knows", "b")] == e
    assert store.find_edges([]) == {}
    changed = Edge("e1", "c", "c", "hates", 0.95, "x", T1, "2021", "2022", True, {"w": 2})
    with store.transaction():
        store.update_edge(changed)
        store.update_edge(Edge("zzz", "a", "b", "t", 1.0))
    got = store.get_edges(["e1"])["e1"]
    assert (got.source, got.target, got.type, got.created_at) == ("a", "b", "knows", T0)  # ends and type stay
    assert (got.confidence, got.updated_at, got.valid_from, got.valid_to, got.manual, got.properties) == (
        0.95, T1, "2021", "2022", True, {"w": 2})
    assert store.get_edges(["zzz"]) == {}


@contract("insert_edge")
def test_insert_edge_rejects_taken_ids_triples_and_missing_ends(store) -> None:
    node(store, "a", "A")
    node(store, "b", "B")
    edge(store, "a", "knows", "b", edge_id="e1")
    for bad in (Edge("e1", "b", "a", "knows", 0.8), Edge("e2", "a", "b", "knows", 0.8),
                Edge("e3", "a", "nobody", "knows", 0.8)):
        with pytest.raises(BackendError), store.transaction():
            store.insert_edge(Edge("fine", "b", "a", "likes", 0.8))
            store.insert_edge(bad)
        assert store.get_edges(["fine", bad.id]) == ({} if bad.id != "e1" else {"e1": store.get_edges(["e1"])["e1"]})


@contract("insert_edges")
def test_insert_edges_equals_insert_edge_one_by_one(store) -> None:
    for n in "abc":
        node(store, n, n.upper())
    es = [Edge("e1", "a", "b", "knows", 0.7, T0, T0, valid_from="2020", properties={"w": 1}),
          Edge("e2", "b", "c", "knows", 0.9, T0, T1, manual=True)]
    with store.transaction():
        store.insert_edges(es)
        store.insert_edges([])
    assert store.get_edges(["e1", "e2"]) == {"e1": es[0], "e2": es[1]}
    assert store.edges_of(["b"]) == [es[1], es[0]]
    for bad in (Edge("e1", "c", "a", "x", 0.8), Edge("e9", "a", "b", "knows", 0.8), Edge("e9", "a", "zz", "x", 0.8)):
        with pytest.raises(BackendError), store.transaction():
            store.insert_edges([Edge("fine", "c", "a", "likes", 0.8), bad])
        assert store.get_edges(["fine", "e9"]) == {}


@contract("edges_of", "edges_among", "adjacency")
def test_edges_around_nodes_strongest_first(store) -> None:
    for n in "abcd":
        node(store, n, n.upper())
    ab = edge(store, "a", "r", "b", 0.9)
    ca = edge(store, "c", "r", "a", 0.5)
    bc = edge(store, "b", "r", "c", 0.7)
    cd = edge(store, "c", "r", "d", 0.9)
    assert store.edges_of(["a"]) == [ab, ca]
    assert store.edges_of(["a", "b", "a"]) == [ab, bc, ca]
    assert store.edges_of(["a"], min_confidence=0.6) == [ab]
    assert store.edges_of(["c"], limit=2) == [cd, bc]
    assert store.edges_of(["zzz"]) == [] and store.edges_of([]) == []
    assert store.edges_among(["a", "b", "c"]) == [ab, bc, ca]
    assert store.edges_among(["a", "b", "c"], min_confidence=0.6, limit=1) == [ab]
    assert store.edges_among(["a", "d"]) == [] and store.edges_among([]) == []
    rows = store.adjacency(["c"], limit=10)
    assert rows == [("c", "r", "d", 0.9, cd.id), ("b", "r", "c", 0.7, bc.id), ("c", "r", "a", 0.5, ca.id)]
    assert (rows[0].source, rows[0].type, rows[0].target, rows[0].confidence, rows[0].edge_id) == (
        "c", "r", "d", 0.9, cd.id)
    assert store.adjacency(["c"], limit=1) == [("c", "r", "d", 0.9, cd.id)]
    assert sorted(store.adjacency(["a", "c"], min_confidence=0.6)) == sorted(
        [("a", "r", "b", 0.9, ab.id), ("b", "r", "c", 0.7, bc.id),
         ("c", "r", "d", 0.9, cd.id)])
    assert store.adjacency(["zzz"]) == [] and store.adjacency([], limit=5) == []


@contract("strongest_edges", "edges_of_types")
def test_bounded_edge_reads_of_one_node(store) -> None:
    for n in "abcd":
        node(store, n, n.upper())
    first = edge(store, "a", "r", "b", 0.8)
    second = edge(store, "a", "s", "c", 0.8)
    strong = edge(store, "a", "r", "d", 0.95)
    into = edge(store, "b", "r", "a", 0.7)
    out, inc = store.strongest_edges("a", 2)
    assert (out, inc) == ([strong, first], [into])  # ties: oldest first
    assert store.strongest_edges("a", 5).outgoing == [strong, first, second]
    assert store.strongest_edges("zzz", 5) == ([], [])
    assert sorted(e.id for e in store.edges_of_types("a", ["r"], 10)) == sorted([first.id, strong.id])
    assert len(store.edges_of_types("a", ["r", "s"], 2)) == 2
    assert store.edges_of_types("a", [], 10) == [] and store.edges_of_types("b", ["s"], 10) == []


@contract("set_edge_weights", "delete_edges_by_id")
def test_edge_weights_and_deletion_by_id(store) -> None:
    _, c = document(store, "d", ["a b c"])
    for n in "abc":
        node(store, n, n.upper())
    ab = edge(store, "a", "r", "b", 0.5)
    bc = edge(store, "b", "r", "c", 0.5)
    evidence(store, "edge", ab.id, c[0])
    with store.transaction():
        store.set_edge_weights([(0.9, ab.id), (0.1, "zzz")], T1)
    got = store.get_edges([ab.id])[ab.id]
    assert (got.confidence, got.updated_at) == (0.9, T1)
    with store.transaction():
        assert store.delete_edges_by_id([ab.id, "zzz", bc.id]) == 2
        assert store.delete_edges_by_id([]) == 0
    assert store.get_edges([ab.id, bc.id]) == {}
    assert store.count_provenance("edge", [ab.id]) == {ab.id: 1}  # evidence stays until pruned


@contract("ontology_types", "add_ontology_type")
def test_ontology_types_registered_once_per_kind(store) -> None:
    with store.transaction():
        assert store.add_ontology_type("entity", "person", T0) is True
        assert store.add_ontology_type("entity", "person", T1) is False
        assert store.add_ontology_type("entity", "city", T0) is True
        assert store.add_ontology_type("relation", "person", T0) is True
    assert store.ontology_types("entity") == ["city", "person"]
    assert store.ontology_types("relation") == ["person"]
    assert store.ontology_types("nothing") == []
