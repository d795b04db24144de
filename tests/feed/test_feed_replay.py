"""kb.events.replay: the knowledge base as it was at three points of a scripted history (graph, memories,
page list, search top hits), by event id and by time; `graphmem events replay` and `events export --until`."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import graphmem
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT
from graphmem.errors import InvalidInput

KB = graphmem.KnowledgeBase


def state(kb: Any) -> dict[str, Any]:
    """What the acceptance compares: graph, memories, pages, search top hits."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nodes = sorted((n.name, n.type) for n in kb.graph.list(limit=10000))
        edges = sorted((r["id"], r["source"], r["target"], r["type"], r["confidence"])
                       for _, r in kb.store.dump_rows(["edges"]))
        memories = sorted((m["id"], m["memory"], m.get("user_id")) for m in
                          kb.memory.get_all(filters={"user_id": "u1"}, limit=1000).to_dict()["results"])
        pages = sorted(p.to_dict()["slug"] for p in kb.wiki.list_pages())
        hits = [(h.get("id"), h.get("kind")) for h in
                kb.search("memory leak crash", kinds=["chunk", "entity", "page"], k=6).to_dict()["hits"]]
        docs = sorted((d.doc_id, d.version) for d in kb.documents.list())
        mem_hits = [h["id"] for h in kb.memory.search("tea", user_id="u1").to_dict()["results"]]
    return {"nodes": nodes, "edges": edges, "memories": memories, "pages": pages, "hits": hits, "docs": docs,
            "memory_hits": mem_hits}


def scripted(kb: KB) -> list[tuple[int, dict[str, Any]]]:
    points = []
    kb.ingest_with_content("doc_1", "System Crash Analysis", "crash.txt", QUICKSTART_TEXT, QUICKSTART_ENTITIES,
                           QUICKSTART_RELATIONS)
    first = kb.memory.add("I like green tea", user_id="u1").results[0].id
    points.append((kb.events.last_id(), state(kb)))
    kb.graph.add_node("garbage collector", "component", aliases=["gc"])
    kb.graph.add_edge("garbage collector", "memory leak", "prevents", 0.8)
    kb.memory.update(first, "I like black tea")
    kb.memory.add("Tea at four, always", user_id="u1")
    kb.wiki.write_page("topic", "Crash runbook", "Restart after a [[memory leak]].")
    points.append((kb.events.last_id(), state(kb)))
    kb.ingest_with_content("doc_1", "System Crash Analysis", "crash.txt", QUICKSTART_TEXT + " Leaks grow slowly.",
                           QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    kb.graph.merge("memory leak", "garbage collector")
    kb.memory.delete(first)
    kb.wiki.delete_page("topic", "Crash runbook")
    kb.graph.retype("system crash", "incident")
    points.append((kb.events.last_id(), state(kb)))
    kb.documents.delete("doc_1")  # and more after the last point
    kb.memory.add("Coffee is fine too", user_id="u1")
    return points


def test_replay_at_three_points_equals_the_state_captured_then(kb: KB) -> None:
    points = scripted(kb)
    now = state(kb)
    assert len({json.dumps(s, sort_keys=True) for _, s in points} | {json.dumps(now, sort_keys=True)}) == 4
    for event_id, expected in points:
        with kb.events.replay(event_id) as view:
            assert view.until == event_id and view.replay_stats["events"] == event_id
            assert view.read_only is True
            assert state(view) == expected, f"replay to event {event_id}"
    assert state(kb) == now  # replay never touched the knowledge base itself


def test_replay_by_time_and_the_cost_follows_the_changes_undone(kb: KB) -> None:
    points = scripted(kb)
    second = kb.events.list(after_id=points[1][0] - 1, limit=1)[0]
    with kb.events.replay(second.timestamp) as view:
        assert view.until >= points[1][0]
        assert state(view)["memories"] == points[1][1]["memories"] or view.until > points[1][0]
    with kb.events.replay(points[2][0]) as near, kb.events.replay(points[0][0]) as far:
        assert 0 < near.replay_stats["undone"] < far.replay_stats["undone"]


def test_replay_rejects_bad_points(kb: KB) -> None:
    kb.graph.add_node("a")
    with pytest.raises(InvalidInput, match="does not exist yet"):
        kb.events.replay(99)
    with pytest.raises(InvalidInput, match="neither an event id nor an ISO-8601 time"):
        kb.events.replay("yesterday")
    with pytest.raises(InvalidInput, match="until"):
        kb.events.replay(-1)


def test_an_imported_knowledge_base_replays_only_from_its_import_on(kb: KB, tmp_path: Path) -> None:
    from graphmem.portability import export, import_jsonl

    kb.graph.add_node("a")
    kb.graph.add_node("b")
    export(kb.ctx, "jsonl", tmp_path / "x.jsonl")
    with graphmem.open(tmp_path / "copy") as copy:
        import_jsonl(copy.ctx, tmp_path / "x.jsonl")
        with pytest.raises(InvalidInput, match="starts after event"):
            copy.events.replay(1)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphmem", "--home", str(home), *args], capture_output=True,
                          text=True, timeout=120)


def test_cli_replay_prints_stats_and_export_until_writes_that_state(kb: KB, tmp_path: Path) -> None:
    points = scripted(kb)
    event_id, expected = points[1]
    out = _cli(kb.home, "events", "replay", "--until", str(event_id), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["until"] == event_id and data["entities"] == len([n for n in expected["nodes"]])
    assert data["memories"] == len(expected["memories"]) and data["pages"] == len(expected["pages"])
    out = _cli(kb.home, "events", "export", "--until", str(event_id), str(tmp_path / "then.jsonl"), "--json")
    assert out.returncode == 0, out.stderr
    with graphmem.open(tmp_path / "then") as then:
        from graphmem.portability import import_jsonl

        import_jsonl(then.ctx, tmp_path / "then.jsonl")
        got = state(then)
        assert (got["nodes"], got["edges"], got["memories"], got["pages"]) == (
            expected["nodes"], expected["edges"], expected["memories"], expected["pages"])
    bad = _cli(kb.home, "events", "replay", "--until", "soon")
    assert bad.returncode == 1 and "until" in bad.stderr and "Traceback" not in bad.stderr
