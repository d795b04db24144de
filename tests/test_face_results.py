"""Faces return typed results: to_dict() is the old dict (keys in order), and each result is that dict, read-only."""

from __future__ import annotations

import json

import pytest

import graphmem
from graphmem.faces.results import (
    Backlink,
    DocumentDeleted,
    EdgeDetail,
    EntityDetail,
    LinkFrom,
    LintReport,
    LogEntry,
    MemoriesAdded,
    MemoryDeleted,
    MemoryEvent,
    MemoryFeedback,
    MemoryRelevance,
    MemoryUpdated,
    Merged,
    Neighbourhood,
    NodeDeleted,
    PageDeleted,
    PageHit,
    PageInfo,
    PageRead,
    PageWritten,
    Result,
    Retyped,
    SkillDetail,
    SkillNeighbours,
    SkillsInfo,
    SyncReport,
)


def test_a_result_reads_like_the_dict_it_replaced() -> None:
    r = DocumentDeleted("doc_1", 2, 3, 1)
    assert r["doc_id"] == "doc_1" and r.get("nope") is None and "nodes_removed" in r
    assert list(r) == ["doc_id", "versions_deleted", "nodes_removed", "edges_removed"]
    assert r == {"doc_id": "doc_1", "versions_deleted": 2, "nodes_removed": 3, "edges_removed": 1}
    assert r != {"doc_id": "doc_1"} and r == DocumentDeleted("doc_1", 2, 3, 1) and r != DocumentDeleted("d", 2, 3, 1)
    assert dict(r) == r.to_dict() and len(r) == 4 and isinstance(r, dict)
    assert json.loads(json.dumps(r)) == r.to_dict()
    with pytest.raises(KeyError):
        r["nope"]
    for change in (lambda: r.__setitem__("doc_id", "x"), lambda: r.update(doc_id="x"), lambda: r.pop("doc_id"),
                   r.clear):
        with pytest.raises(TypeError, match="read-only"):
            change()
    assert r["doc_id"] == "doc_1"
    with pytest.raises(AttributeError):
        r.doc_id = "x"  # type: ignore[misc]
    assert repr(r) == "DocumentDeleted(doc_id='doc_1', versions_deleted=2, nodes_removed=3, edges_removed=1)"


def test_graph_face_results(quickstart, kb: graphmem.KnowledgeBase) -> None:
    ent = kb.graph.get_entity("memory leak")
    assert isinstance(ent, EntityDetail) and ent.node.name == "memory leak" and ent.evidence_count == 1
    assert list(ent.to_dict())[:11] == ["id", "kind", "name", "type", "aliases", "properties", "created_at",
                                        "updated_at", "relevance", "archived", "manual"]
    assert list(ent.to_dict())[11:] == ["relations", "evidence", "evidence_count"]
    [rel] = ent.relations
    assert (rel.direction, rel.type, rel.source, rel.target, rel.other) == (
        "out", "causes", "memory leak", "system crash", "system crash")
    assert ent["relations"][0]["evidence"][0]["doc_id"] == "doc_1"  # old dict-style access still works
    json.dumps(ent.to_dict())

    edge = kb.graph.get_edge(rel.id)
    assert isinstance(edge, EdgeDetail) and (edge.source_name, edge.target_name) == ("memory leak", "system crash")
    assert edge.to_dict()["evidence"][0]["text"] == "System crashes due to memory leaks."

    near = kb.graph.neighbours("memory leak")
    assert isinstance(near, Neighbourhood)
    assert [(n.node.name, n.depth) for n in near.nodes.values()] == [("memory leak", 0), ("system crash", 1)]
    assert near.to_dict()["nodes"][ent.node.id]["depth"] == 0 and len(near["edges"]) == 1

    kb.add_node("leaky memory", "issue")
    re = kb.graph.retype("leaky memory", "bug")
    assert isinstance(re, Retyped) and (re.old_type, re.type) == ("issue", "issue")
    merged = kb.graph.merge("memory leak", "leaky memory")
    assert isinstance(merged, Merged) and merged.aliases_added == ["leaky memory"]
    assert list(merged.to_dict()) == ["kept", "merged", "aliases_added", "edges_moved", "edges_folded",
                                      "self_loops_dropped"]
    gone = kb.graph.delete_node("system crash")
    assert isinstance(gone, NodeDeleted) and gone == {"id": gone.id, "name": "system crash", "edges_removed": 1}


def test_documents_delete_result(quickstart, kb: graphmem.KnowledgeBase) -> None:
    out = kb.documents.delete("doc_1")
    assert out == DocumentDeleted("doc_1", 1, 2, 1)


def test_memory_face_results(kb: graphmem.KnowledgeBase) -> None:
    added = kb.memory.add(["I love pizza", "My dog is Rex"], user_id="u1")
    assert isinstance(added, MemoriesAdded) and all(isinstance(r, MemoryEvent) for r in added.results)
    assert [r.memory for r in added.results] == ["I love pizza", "My dog is Rex"] and added.edges >= 1
    mid = added["results"][0]["id"]
    up = kb.memory.update(mid, "I love pizza and pasta")
    assert isinstance(up, MemoryUpdated) and up.previous_version == f"{mid}~v1"
    assert list(up.to_dict()) == ["id", "memory", "event", "previous_version", "edges"]
    rel = kb.memory.mark_relevant(mid, 0.5)
    assert isinstance(rel, MemoryRelevance) and rel.floor == 0.5
    fb = kb.memory.feedback(mid, "food?", helpful=True)
    assert fb == MemoryFeedback(mid, True)
    gone = kb.memory.delete(mid)
    assert isinstance(gone, MemoryDeleted) and gone.to_dict() == {"id": mid, "event": "DELETE", "edges": gone.edges}
    assert kb.memory.add("x" * 0 + "fact", user_id="u1", infer=False)["results"][0]["event"] == "ADD"


def test_wiki_face_results(kb: graphmem.KnowledgeBase) -> None:
    w = kb.wiki.write_page("topic", "Page one", "Body, see [[Page two]].", summary="One", tags=["a"])
    assert isinstance(w, PageWritten) and w.created and (w.page.slug, w.page.tags) == ("page-one", ["a"])
    assert list(w.to_dict()) == ["slug", "category", "title", "path", "summary", "tags", "updated", "created_at",
                                 "created"]
    assert not kb.wiki.write_page("topic", "Page one", "Body again, see [[Page two]].").created
    kb.wiki.write_page("topic", "Page two", "Back to [[page-one]].")
    r = kb.wiki.read_page("topic", "Page one")
    assert isinstance(r, PageRead) and r.content.startswith("Body again")
    [link] = r.links
    assert link.target == "page two" and link.line > 1  # lines of the file, front matter included
    [back] = r.backlinks
    assert isinstance(back, LinkFrom) and back.slug == "page-two"
    assert r["backlinks"] == [{"slug": "page-two", "line": back.line}]
    assert list(r.to_dict())[-5:] == ["front_matter", "content", "links", "backlinks", "link_slugs"]
    assert r.link_slugs == {"page two": "page-two"}  # the page each link means (the UI follows it)
    assert [p.slug for p in kb.wiki.list_pages("topic")] == ["page-one", "page-two"]
    assert all(isinstance(p, PageInfo) for p in kb.wiki.list_pages())
    [hit] = kb.wiki.search_wiki("again")
    assert isinstance(hit, PageHit) and hit.slug == "page-one" and hit.score > 0
    assert kb.wiki.backlinks("page-one") == [Backlink("page-two", back.line, "Page two", "topic")]
    log = kb.wiki.get_log(2)
    assert all(isinstance(e, LogEntry) for e in log) and log[-1].operation == "write"
    assert log[-1].target == "topic/page-two" and log[-1]["line"] == log[-1].line
    lint = kb.wiki.lint_wiki()
    assert isinstance(lint, LintReport) and lint.fixed is None and "fixed" not in lint
    assert lint.problems == lint["problems"] and list(lint.to_dict())[-1] == "problems"
    assert list(lint.findings)[:3] == ["orphan_pages", "missing_pages", "broken_wikilinks"]
    fixed = kb.wiki.lint_wiki(fix=True)
    assert fixed.fixed is not None and list(fixed.to_dict())[-2:] == ["problems", "fixed"]
    (kb.home / "wiki" / "topic" / "by-hand.md").write_text("# By hand\n\nWritten in an editor.\n", encoding="utf-8")
    synced = kb.wiki.sync()
    assert isinstance(synced, SyncReport) and synced.indexed == ["topic/by-hand"] and synced.removed == []
    assert list(synced.to_dict()) == ["indexed", "removed", "unchanged", "skipped", "regenerated", "failed"]
    out = kb.wiki.delete_page("topic", "Page one")
    assert isinstance(out, PageDeleted) and out.slug == "page-one" and out.path.endswith("topic/page-one.md")
    assert list(out.to_dict()) == ["slug", "category", "path", "deleted"]


def test_skills_face_results(kb: graphmem.KnowledgeBase, tmp_path) -> None:
    for rel, front in (("ops/rotate-keys", "name: rotate-keys\ndescription: Rotate vault keys.\nrelated: [restart]"),
                       ("ops/restart", "name: restart\ndescription: Restart PgBouncer.")):
        (tmp_path / "skills" / rel).mkdir(parents=True)
        (tmp_path / "skills" / rel / "SKILL.md").write_text(f"---\n{front}\n---\nBody of {rel}.\n", encoding="utf-8")
    kb.skills.build([tmp_path / "skills"])
    got = kb.skills.get("rotate-keys")  # by name
    assert isinstance(got, SkillDetail) and (got.id, got.related, got.body) == (
        "ops/rotate-keys", ["restart"], "Body of ops/rotate-keys.\n")
    assert list(got.to_dict())[:3] == ["id", "name", "description"] and got["category"] == "ops"
    near = kb.skills.neighbours("ops/rotate-keys")
    assert isinstance(near, SkillNeighbours) and [link.id for link in near.edges["related"]] == ["ops/restart"]
    assert near.to_dict()["edges"]["related"][0] == {"id": "ops/restart", "name": "restart",
                                                     "weight": near.edges["related"][0].weight}
    info = kb.skills.info()
    assert isinstance(info, SkillsInfo) and (info.skills, info.categories, info.with_vectors) == (2, {"ops": 2}, False)
    assert kb.skills.show("rotate-keys").startswith("---\nname: rotate-keys")


def test_every_result_type_is_a_result() -> None:
    import graphmem.faces.results as results

    for name in results.__all__:
        assert issubclass(getattr(results, name), Result)


def test_plain_turns_results_inside_containers_into_json_data(kb: graphmem.KnowledgeBase) -> None:
    # The one converter the CLI, the MCP server and the HTTP API print through (graphmem.models.plain).
    from graphmem.models import plain

    added = kb.memory.add("I like tea", user_id="u1")
    got = plain({"added": added, "pair": (added, 1), 7: [added]})
    assert got == {"added": added.to_dict(), "pair": [added.to_dict(), 1], "7": [added.to_dict()]}
    assert type(got["added"]) is dict and type(got["pair"]) is list
    assert json.loads(json.dumps(got)) == got
