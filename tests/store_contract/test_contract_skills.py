"""Contract of :class:`graphmem.store.protocols.SkillStore`: skill rows, their full text and edges."""

from __future__ import annotations

import json

import pytest

from graphmem.errors import BackendError, InvalidInput
from graphmem.models import Edge
from graphmem.store.protocols import SkillStore

from .seed import T0, T1, node

PROTOCOL = SkillStore
contract = pytest.mark.contract

W5 = (10.0, 5.0, 3.0, 2.0, 1.0)


def skill(store, skill_id: str, name: str, root: str = "/skills", body: str = "", description: str = "",
          tags: list[str] | None = None, triggers: list[str] | None = None, size: int = 10) -> dict[str, object]:
    node_id = f"skill:{skill_id}"
    if not store.get_nodes([node_id]):
        node(store, node_id, name, kind="skill")
    row = {"skill_id": skill_id, "node_id": node_id, "root": root, "path": f"{root}/{skill_id}/SKILL.md",
           "name": name, "name_key": name.lower(), "description": description, "category": "cat",
           "tags": tags or [], "triggers": triggers or [], "related": [], "body": body,
           "meta": {"front_matter": {"name": name}}, "sha256": f"sha-{skill_id}", "size": size, "mtime_ns": 7,
           "updated_at": T0}
    with store.transaction():
        store.upsert_skill(row)
    return row


@contract("upsert_skill", "get_skill_row", "list_skill_rows", "skill_rows_after", "skill_bodies")
def test_skill_rows_round_trip_and_update_in_place(store) -> None:
    skill(store, "pdf", "PDF tools", body="Split a PDF.", tags=["docs"], triggers=["pdf"])
    skill(store, "git", "Git helper", body="Rebase safely.")
    row = store.get_skill_row("pdf")
    assert (row["name"], row["body"], json.loads(row["tags"]), json.loads(row["triggers"])) == (
        "PDF tools", "Split a PDF.", ["docs"], ["pdf"])
    assert json.loads(row["meta"]) == {"front_matter": {"name": "PDF tools"}} and row["updated_at"] == T0
    assert store.get_skill_row("zzz") is None
    listed = store.list_skill_rows()
    assert [r["skill_id"] for r in listed] == ["pdf", "git"] and "body" not in listed[0]
    first_rid = listed[0]["rid"]
    skill(store, "pdf", "PDF tools 2", body="Merge PDFs.")  # an update keeps the row
    assert [(r["skill_id"], r["rid"], r["name"]) for r in store.list_skill_rows()] == [
        ("pdf", first_rid, "PDF tools 2"), ("git", listed[1]["rid"], "Git helper")]
    assert [r["skill_id"] for r in store.skill_rows_after(first_rid, 10)] == ["git"]
    assert [r["skill_id"] for r in store.skill_rows_after(0, 1)] == ["pdf"]
    assert store.skill_bodies(["pdf", "zzz"]) == {"pdf": "Merge PDFs."} and store.skill_bodies([]) == {}


@contract("upsert_skill")
def test_upsert_skill_needs_every_key_and_an_existing_node(store) -> None:
    with pytest.raises(KeyError), store.transaction():
        store.upsert_skill({"skill_id": "x"})
    row = skill(store, "ok", "OK")
    with pytest.raises(BackendError), store.transaction():
        store.upsert_skill({**row, "skill_id": "orphan", "node_id": "no-such-node"})
    assert store.get_skill_row("orphan") is None


@contract("skill_files", "skill_roots_of", "set_skill_stat")
def test_what_the_files_looked_like(store) -> None:
    skill(store, "a", "A", root="/r1")
    skill(store, "b", "B", root="/r2")
    with store.transaction():
        store.set_skill_stat("a", 42, 99)
        store.set_skill_stat("zzz", 1, 1)
    assert store.skill_files("/r1") == {"a": {"skill_id": "a", "root": "/r1", "sha256": "sha-a", "size": 42,
                                              "mtime_ns": 99, "node_id": "skill:a"}}
    assert store.skill_files("/none") == {}
    assert store.skill_roots_of(["a", "b", "zzz"]) == {"a": "/r1", "b": "/r2"}


@contract("set_skill_name")
def test_set_skill_name_is_the_one_name_key(store) -> None:
    skill(store, "a", "Alpha")
    skill(store, "b", "Beta")
    with store.transaction():
        store.set_skill_name("skill:a", "Pdf Tool", "pdf tool")
        store.set_skill_name("skill:b", "PDF tool", "pdf tool")  # taken by a: b is left without a name
    assert store.find_nodes("skill", ["alpha", "pdf tool", "beta"]) == {"pdf tool": "skill:a"}


@contract("skill_bm25", "skills_with_phrase_in_body")
def test_fielded_full_text(store) -> None:
    skill(store, "pdf", "PDF tools", body="Split and merge documents.", description="Work with PDF files")
    skill(store, "doc", "Docs", body="Writing docs about pdf handling and merge documents")
    hits = store.skill_bm25("pdf", W5, 10)
    assert [h.id for h in hits] == ["pdf", "doc"] and all(h.score > 0 for h in hits)  # the name weighs most
    assert len(store.skill_bm25("pdf", W5, 1)) == 1
    assert store.skill_bm25("?!", W5, 10) == [] and store.skill_bm25("submarine", W5, 10) == []
    with pytest.raises(InvalidInput, match="weights"):
        store.skill_bm25("pdf", (1.0, 2.0), 10)
    assert sorted(store.skills_with_phrase_in_body(["merge", "documents"])) == ["doc", "pdf"]
    assert store.skills_with_phrase_in_body(["documents", "merge"]) == []
    assert store.skills_with_phrase_in_body([]) == []


@contract("skill_edges", "apply_skill_edges")
def test_skill_edges_are_added_reweighted_and_removed(store) -> None:
    for s in "abc":
        skill(store, s, s.upper())
    node(store, "ent", "Entity")
    with store.transaction():
        store.apply_skill_edges([("e1", "skill:a", "related", "skill:b", 0.5),
                                 ("e2", "skill:b", "similar", "skill:c", 0.4)], [], [], T0)
        store.insert_edge(Edge("x", "skill:a", "ent", "mentions", 0.9))
    assert sorted(store.skill_edges()) == [("skill:a", "related", "skill:b", 0.5, "e1"),
                                           ("skill:b", "similar", "skill:c", 0.4, "e2")]  # not to the entity
    assert store.get_edges(["e1"])["e1"].manual is True
    with store.transaction():
        store.apply_skill_edges([("e9", "skill:a", "related", "skill:b", 0.7)], ["e2", "zzz"], [("e1", 0.9)], T1)
    edges = store.skill_edges()
    assert edges == [("skill:a", "related", "skill:b", 0.9, "e1")] and edges[0].edge_id == "e1"
    assert store.get_edges(["e1"])["e1"].updated_at == T1


@contract("skill_edges_touching", "has_skill_edges")
def test_skill_edges_touching_some_skills_in_write_order(store) -> None:
    assert store.has_skill_edges() is False
    for s in "abcd":
        skill(store, s, s.upper())
    node(store, "ent", "Entity")
    with store.transaction():
        store.insert_edge(Edge("x", "skill:a", "ent", "mentions", 0.9))  # to an entity: not a skill edge
    assert store.has_skill_edges() is False
    with store.transaction():
        store.apply_skill_edges([("e3", "skill:c", "similar", "skill:a", 0.4),
                                 ("e1", "skill:a", "related", "skill:b", 0.5),
                                 ("e2", "skill:b", "sibling", "skill:d", 0.6),
                                 ("e4", "skill:d", "related", "skill:c", 0.7)], [], [], T0)
    assert store.has_skill_edges() is True
    everything = store.skill_edges()
    assert [e.edge_id for e in everything] == ["e3", "e1", "e2", "e4"]  # the order they were written
    assert store.skill_edges_touching(["skill:a"]) == [everything[0], everything[1]]
    assert store.skill_edges_touching(["skill:d", "skill:b", "skill:d"]) == everything[1:]
    assert store.skill_edges_touching([f"skill:{s}" for s in "abcd"]) == everything
    assert store.skill_edges_touching(["ent", "zzz"]) == [] and store.skill_edges_touching([]) == []


@contract("skill_root_list", "add_skill_root")
def test_skill_roots(store) -> None:
    with store.transaction():
        store.add_skill_root("/b", T0)
        store.add_skill_root("/a", T0)
        store.add_skill_root("/b", T1)
    assert store.skill_root_list() == ["/a", "/b"]


@contract("delete_skill_nodes", "clear_skills")
def test_deleting_skills_takes_rows_edges_and_vectors(store) -> None:
    for s in "abc":
        skill(store, s, s.upper())
    node(store, "ent", "Entity")
    with store.transaction():
        store.apply_skill_edges([("e1", "skill:a", "related", "skill:b", 0.5)], [], [], T0)
        store.upsert_vectors("skill", "m", 1, [("skill:a", "h", b"\x00\x3c")])
        store.delete_skill_nodes(["skill:a", "ent", "zzz"])  # other kinds are left alone
    assert [r["skill_id"] for r in store.list_skill_rows()] == ["b", "c"]
    assert store.get_edges(["e1"]) == {} and store.vectors_for("skill", ["skill:a"], "m") == {}
    assert set(store.get_nodes(["ent", "skill:a"])) == {"ent"}
    with store.transaction():
        assert store.clear_skills() == 2
        assert store.clear_skills() == 0
    assert store.list_skill_rows() == [] and store.list_nodes("skill") == []


@contract("apply_skill_edges")
def test_a_skill_edge_to_a_missing_node_writes_nothing(store) -> None:
    skill(store, "a", "A")
    with pytest.raises(BackendError), store.transaction():
        store.apply_skill_edges([("ok", "skill:a", "related", "skill:a2", 0.5)], [], [], T0)
    with store.transaction():
        store.apply_skill_edges([], [], [("zzz", 0.9)], T0)  # reweighting a missing edge: nothing
    assert store.skill_edges() == []
