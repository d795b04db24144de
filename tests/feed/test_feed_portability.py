"""Export -> import round trip (example corpus + memories + skills), the graph formats read back by their
tools' readers, backup during concurrent writes passing check, check finding and repairing damage."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.errors import Conflict, InvalidInput
from graphmem.portability import backup, check, export, import_jsonl, restore

REPO = Path(__file__).resolve().parents[2]
QUERIES = ["Why did dispatch fail during INC-2041?", "ledger database", "notification storm", "stale routes"]


def _skill(root: Path, rel: str, front: str, body: str) -> None:
    (root / rel).mkdir(parents=True)
    (root / rel / "SKILL.md").write_text(f"---\n{front}\n---\n{body}", encoding="utf-8")


def build(home: Path, tmp: Path) -> graphmem.KnowledgeBase:
    """The example corpus, memories of two users with edges and history, a skills folder, a hand-written page."""
    kb = graphmem.open(home)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kb.ingest_paths([REPO / "examples"])
    kb.memory.add([{"role": "user", "content": "I run the dispatch on-call rotation."},
                   {"role": "user", "content": "The ledger database is my responsibility."}], user_id="ana")
    first = kb.memory.add("I prefer incident notes in markdown", user_id="bo").results[0].id
    kb.memory.update(first, "I prefer incident notes in plain text")
    kb.memory.feedback(first, "notes format", helpful=True)
    skills = tmp / "skills"
    _skill(skills, "ops/restart-dispatch", "name: restart-dispatch\ndescription: Restart the dispatch service "
           "safely.\nrelated: [page-oncall]", "Drain queues first.\n")
    _skill(skills, "ops/page-oncall", "name: page-oncall\ndescription: Page the on-call engineer.", "Use the pager.\n")
    kb.skills.build([skills])
    kb.wiki.write_page("topic", "Dispatch runbook", "How to restart [[dispatch api]] safely.")
    return kb


def rows_of(kb: graphmem.KnowledgeBase) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for table, row in kb.store.dump_rows():
        out.setdefault(table, []).append(json.dumps(row, sort_keys=True))
    return {t: sorted(r) for t, r in out.items()}


def answers(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    """What searches answer: ids and scores of the top hits of every face."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out: dict[str, Any] = {}
        for q in QUERIES:
            res = kb.search(q, kinds=["chunk", "entity", "page"], k=8).to_dict()
            out[q] = [(h.get("id"), h.get("kind"), round(h["score"], 9)) for h in res["hits"]]
        out["docs"] = [h.chunk.chunk_id for h in kb.documents.search("dispatch", 5)]
        out["ana"] = [h["id"] for h in kb.memory.search("who owns the ledger?", user_id="ana").to_dict()["results"]]
        out["bo"] = [h["id"] for h in kb.memory.search("notes", user_id="bo").to_dict()["results"]]
        out["history"] = [v.to_dict() for v in kb.memory.history(kb.memory.get_all(user_id="bo").to_dict()
                                                                 ["results"][0]["id"])]
        out["skills"] = [h.to_dict()["id"] for h in kb.skills.retrieve("restart the dispatch service")]
        out["pages"] = [p.to_dict()["slug"] for p in kb.wiki.list_pages()]
        out["wiki_search"] = [h.to_dict()["slug"] for h in kb.wiki.search_wiki("restart dispatch")]
    return out


def wiki_tree(home: Path) -> dict[str, str]:
    return {p.relative_to(home).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((home / "wiki").rglob("*")) if p.is_file()}


def test_jsonl_export_then_import_gives_the_same_knowledge_base_and_the_same_answers(tmp_path: Path) -> None:
    with build(tmp_path / "a", tmp_path) as kb:
        out = export(kb.ctx, "jsonl", tmp_path / "kb.jsonl")
        assert out["counts"]["skills"] == 2 and out["counts"]["memories"] >= 4 and out["counts"]["provenance"] > 100
        before_rows, before_files = rows_of(kb), wiki_tree(kb.home)
        before = answers(kb)
    with graphmem.open(tmp_path / "b") as copy:
        loaded = import_jsonl(copy.ctx, tmp_path / "kb.jsonl")
        assert loaded["rows"] == {t: len(r) for t, r in before_rows.items()}
        after_rows = rows_of(copy)
        added = [e for e in after_rows["events"] if json.loads(e)["type"] == "kb.imported"]
        assert len(added) == 1 and json.loads(added[0])["id"] == copy.store.last_event_id()  # the import's own
        after_rows["events"].remove(added[0])
        # replay of the copy starts at its import (the undo log is not exported)
        since = [m for m in after_rows["kb_meta"] if json.loads(m)["key"] == "replay.since_event"]
        assert [json.loads(m)["value"] for m in since] == [str(copy.store.last_event_id() - 1)]  # before its own
        after_rows["kb_meta"].remove(since[0])
        before_rows["kb_meta"] = [m for m in before_rows["kb_meta"] if json.loads(m)["key"] != "replay.since_event"]
        assert after_rows == before_rows
        assert wiki_tree(copy.home) == before_files
        assert check(copy.ctx)["ok"] is True
        assert answers(copy) == before
        assert before["skills"] and before["ana"] and before["pages"]


def test_import_refuses_a_non_empty_kb_bad_files_and_writes_nothing(tmp_path: Path, kb) -> None:
    kb.graph.add_node("alpha")
    exported = tmp_path / "x.jsonl"
    export(kb.ctx, "jsonl", exported)
    with pytest.raises(Conflict, match="not empty"):
        import_jsonl(kb.ctx, exported)
    with graphmem.open(tmp_path / "fresh") as fresh:
        bad = tmp_path / "bad.jsonl"
        lines = exported.read_text().splitlines()
        end = json.loads(lines[-1])
        end["end"]["rows"]["nodes"] += 1  # a whole file, with one row of another schema
        bad.write_text("\n".join([*lines[:-1], '{"table": "nodes", "row": {"id": "x", "colour": 1}}',
                                  json.dumps(end)]) + "\n")
        with pytest.raises(InvalidInput, match="nodes.colour: no such column"):
            import_jsonl(fresh.ctx, bad)
        bad.write_text('{"nodes": 1}\n')
        with pytest.raises(InvalidInput, match="not a graphmem JSONL export"):
            import_jsonl(fresh.ctx, bad)
        bad.write_text(lines[0] + '\n{"file": "wiki/../../escape.md", "text": "x"}\n')
        with pytest.raises(InvalidInput, match="not inside wiki"):
            import_jsonl(fresh.ctx, bad)
        assert fresh.store.last_event_id() == 0 and fresh.stats()["entities"] == 0
        assert not (tmp_path / "escape.md").exists()


def test_graphml_loads_in_networkx_with_every_node_and_edge(tmp_path: Path, quickstart, kb) -> None:
    nx = pytest.importorskip("networkx")
    kb.memory.add("the crash report is in the wiki", user_id="u1")
    kb.memory.add("I reviewed the crash", user_id="u2")
    export(kb.ctx, "graphml", tmp_path / "g.graphml")
    g = nx.read_graphml(tmp_path / "g.graphml")
    nodes = {r["id"]: r for _, r in kb.store.dump_rows(["nodes"])}
    edges = [r for _, r in kb.store.dump_rows(["edges"])]
    assert set(g.nodes) == set(nodes) and g.number_of_edges() == len(edges)
    leak = kb.graph.find("memory leak").id
    crash = kb.graph.find("system crash").id
    assert g.nodes[leak]["name"] == "memory leak" and g.nodes[leak]["kind"] == "entity"
    assert g.nodes[leak]["type"] == "issue" and g.nodes[leak]["relevance"] == 1.0
    [(_, _, data)] = [(a, b, d) for a, b, d in g.edges(data=True) if (a, b) == (leak, crash)]
    assert data["type"] == "causes" and data["confidence"] == 1.0
    # one user's memories only
    export(kb.ctx, "graphml", tmp_path / "u1.graphml", scope={"user_id": "u1"})
    kinds = [d["kind"] for _, d in nx.read_graphml(tmp_path / "u1.graphml").nodes(data=True)]
    assert kinds.count("memory") == 1


def test_cypher_and_neo4j_csv_name_every_node_and_relationship(tmp_path: Path, quickstart, kb) -> None:
    export(kb.ctx, "cypher", tmp_path / "g.cypher")
    lines = (tmp_path / "g.cypher").read_text().splitlines()
    assert lines[0].startswith("CREATE CONSTRAINT graphmem_id")
    assert sum(line.startswith("CREATE (:GraphmemNode:Entity {") for line in lines) == 2
    [rel] = [line for line in lines if line.startswith("MATCH")]
    leak, crash = kb.graph.find("memory leak").id, kb.graph.find("system crash").id
    assert f'(a:GraphmemNode {{id: "{leak}"}})' in rel and f'(b:GraphmemNode {{id: "{crash}"}})' in rel
    assert '-[:CAUSES {' in rel and 'type: "causes"' in rel and rel.endswith("]->(b);")
    export(kb.ctx, "csv", tmp_path / "neo")
    with (tmp_path / "neo" / "nodes.csv").open() as f:
        nodes = list(csv.DictReader(f))
    with (tmp_path / "neo" / "relationships.csv").open() as f:
        rels = list(csv.DictReader(f))
    assert {n["id:ID"] for n in nodes if n["kind"] == "entity"} == {leak, crash}
    assert len(nodes) == len(list(kb.store.dump_rows(["nodes"])))  # the wiki's pages are nodes too
    assert {n[":LABEL"] for n in nodes} == {"GraphmemNode;Entity", "GraphmemNode;Page"}
    assert [(r[":START_ID"], r[":END_ID"], r[":TYPE"]) for r in rels] == [(leak, crash, "CAUSES")]


def test_memory_jsonl_is_the_memory_servers_format_and_imports_back(tmp_path: Path, quickstart, kb) -> None:
    export(kb.ctx, "memory-jsonl", tmp_path / "memory.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "memory.jsonl").read_text().splitlines()]
    entities = {x["name"]: x for x in lines if x["type"] == "entity"}
    assert set(entities) == {"memory leak", "system crash"}
    assert entities["memory leak"]["observations"] == ["Memory leaks occur when objects are not released."]
    assert [x for x in lines if x["type"] == "relation"] == [
        {"type": "relation", "from": "memory leak", "to": "system crash", "relationType": "causes"}]
    out = subprocess.run([sys.executable, "-m", "graphmem", "--home", str(tmp_path / "other"), "import",
                          "memory-jsonl", str(tmp_path / "memory.jsonl"), "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    with graphmem.open(tmp_path / "other") as other:
        assert {n.name for n in other.graph.list()} == {"memory leak", "system crash"}


def test_export_rejects_unknown_formats_and_scoped_jsonl(tmp_path: Path, kb) -> None:
    with pytest.raises(InvalidInput, match="format: 'dot'"):
        export(kb.ctx, "dot", tmp_path / "x")
    with pytest.raises(InvalidInput, match="scope"):
        export(kb.ctx, "jsonl", tmp_path / "x", scope={"user_id": "u"})
    with pytest.raises(InvalidInput, match="scope: unknown field 'team'"):
        export(kb.ctx, "graphml", tmp_path / "x", scope={"team": "u"})


WRITER = """
import sys, graphmem
with graphmem.open(sys.argv[1]) as kb:
    for i in range(int(sys.argv[2])):
        kb.memory.add(f"fact number {i} about the dispatch queue", user_id="w")
        kb.graph.add_node(f"component {i}")
"""


def test_a_backup_taken_during_concurrent_writes_passes_check_and_restores(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    with graphmem.open(home) as kb:
        kb.ingest_with_content("doc_1", "Crash", "notes/crash.txt", "System crashes due to memory leaks.", [], [])
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(home), "150"])
    try:
        with graphmem.open(home) as kb:
            while kb.store.last_event_id() < 20:  # the writer is under way
                threading.Event().wait(0.01)
            result = backup(kb.ctx, tmp_path / "bk")
            assert result["last_event_id"] >= 20
    finally:
        assert writer.wait(120) == 0
    restored = tmp_path / "restored"
    restore(tmp_path / "bk", restored)
    with graphmem.open(restored) as copy:
        report = check(copy.ctx)
        assert report["ok"] is True, report
        memories = copy.memory.get_all(user_id="w", limit=1000).to_dict()["results"]
        events = copy.events.list(limit=100000)
        # a consistent snapshot: every memory of the copy has its event, no event lacks its memory
        assert len(memories) == len([e for e in events if e.type == "memory.added"])
        assert 0 < len(memories) <= 150
    with pytest.raises(Conflict, match="already holds a knowledge base"):
        restore(tmp_path / "bk", restored)
    with pytest.raises(InvalidInput, match="not an empty folder"):
        with graphmem.open(home) as kb:
            backup(kb.ctx, tmp_path / "bk")


def test_check_reports_damage_and_repair_fixes_it(tmp_path: Path, quickstart, kb) -> None:
    assert check(kb.ctx)["ok"] is True
    page = Path(kb.wiki.list_pages()[0].to_dict()["path"]).relative_to(kb.home / "wiki").as_posix()
    (kb.home / "wiki" / page).unlink()
    (kb.home / "wiki" / "topic").mkdir(exist_ok=True)
    (kb.home / "wiki" / "topic" / "stray.md").write_text("# stray\n")
    (kb.home / "wiki" / "topic" / "sub").mkdir()
    (kb.home / "wiki" / "topic" / "sub" / "deep.md").write_text("# deep\n")  # sync never indexes it
    temp = kb.home / "wiki" / "topic" / ".stray.md.999999999-1.tmp"  # a pid no process has
    temp.write_text("half written")
    with kb.store.transaction():
        kb.store.conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')")
    report = check(kb.ctx)
    assert report["ok"] is False
    assert report["wiki"] == [f"page row {page} has no file (run `graphmem wiki sync`)",
                              "page file topic/stray.md has no row (run `graphmem wiki sync`)",
                              "page file topic/sub/deep.md is in a subfolder, which graphmem does not index "
                              "(pages are wiki/<category>/<page>.md): move it to topic/ to make it a page"]
    assert report["temp_files"] == ["temp file wiki/topic/.stray.md.999999999-1.tmp"]
    assert report["fts"]
    fixed = check(kb.ctx, repair=True)
    assert fixed["repaired"] is True and fixed["temp_files"] == [
        "temp file wiki/topic/.stray.md.999999999-1.tmp (removed)"]
    assert not temp.exists()
    after = check(kb.ctx)
    assert after["fts"] == [] and after["temp_files"] == [] and len(after["wiki"]) == 3  # files are the user's
    assert [h.chunk.doc_id for h in kb.documents.search("memory leaks", 3)] == ["doc_1"]
