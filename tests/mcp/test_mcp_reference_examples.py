"""The official memory server's documented usage, replayed against `graphmem mcp`, and its memory.jsonl
imported with `graphmem import memory-jsonl`.

The examples are the ones of modelcontextprotocol/servers src/memory/README.md (entity John_Smith,
relation John_Smith works_at Anthropic, observations about John_Smith); the expected graphs follow
the reference code (src/memory/index.ts): names already present are skipped, observations already
present are not added again, open_nodes and search_nodes return the relations touching a match.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import McpSession, server_env, stdio_server  # noqa: F401 - the fixture

import graphmem
from graphmem.mcp.memory_graph import MemoryGraph

README_ENTITY = {"name": "John_Smith", "entityType": "person", "observations": ["Speaks fluent Spanish"]}
README_RELATION = {"from": "John_Smith", "to": "Anthropic", "relationType": "works_at"}
README_OBSERVATIONS = ["Speaks fluent Spanish", "Graduated in 2019", "Prefers morning meetings"]

EXPECTED = {
    "entities": [
        {"name": "Anthropic", "entityType": "organization", "observations": []},
        {"name": "John_Smith", "entityType": "person",
         "observations": ["Speaks fluent Spanish", "Graduated in 2019", "Prefers morning meetings"]},
    ],
    "relations": [README_RELATION],
}


def _strip(graph: dict[str, Any]) -> dict[str, Any]:
    return {
        "entities": sorted(({k: e[k] for k in ("name", "entityType", "observations")} for e in graph["entities"]),
                           key=lambda e: e["name"]),
        "relations": sorted(({k: r[k] for k in ("from", "to", "relationType")} for r in graph["relations"]),
                            key=lambda r: (r["from"], r["to"])),
    }


@pytest.fixture(scope="module")
def session(stdio_server: tuple[McpSession, Path]) -> McpSession:  # noqa: F811 - the imported fixture
    return stdio_server[0]


def test_readme_usage_gives_the_reference_graph(session: McpSession) -> None:
    created = session.ok("create_entities", {"entities": [
        README_ENTITY, {"name": "Anthropic", "entityType": "organization", "observations": []}]})
    assert [e["name"] for e in created["entities"]] == ["John_Smith", "Anthropic"]
    assert session.ok("create_relations", {"relations": [README_RELATION]})["relations"][0]["from"] == "John_Smith"
    added = session.ok("add_observations", {"observations": [{"entityName": "John_Smith",
                                                              "contents": README_OBSERVATIONS}]})
    assert added["results"] == [{"entityName": "John_Smith",
                                 "addedObservations": ["Graduated in 2019", "Prefers morning meetings"]}]
    assert _strip(session.ok("read_graph")) == EXPECTED
    assert _strip(session.ok("open_nodes", {"names": ["John_Smith"]})) == {
        "entities": [EXPECTED["entities"][1]], "relations": [README_RELATION]}
    assert _strip(session.ok("search_nodes", {"query": "organization"})) == {
        "entities": [EXPECTED["entities"][0]], "relations": [README_RELATION]}
    assert _strip(session.ok("search_nodes", {"query": "MORNING"}))["entities"] == [EXPECTED["entities"][1]]


def _jsonl(graph: dict[str, Any]) -> str:
    """The file the reference server writes (saveGraph: entity lines, then relation lines)."""
    lines = [json.dumps({"type": "entity", **e}) for e in graph["entities"]]
    lines += [json.dumps({"type": "relation", **r}) for r in graph["relations"]]
    return "\n".join(lines)


def _gm(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphmem", "--home", str(home), *args], capture_output=True,
                          text=True, env=server_env(), timeout=120)


def test_import_memory_jsonl_gives_the_same_graph(tmp_path: Path) -> None:
    src = tmp_path / "memory.jsonl"
    src.write_text(_jsonl(EXPECTED), encoding="utf-8")
    p = _gm(tmp_path / "kb", "import", "memory-jsonl", str(src), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"entities_created": 2, "relations_created": 1, "observations_added": 3,
                                    "skipped": []}
    with graphmem.open(tmp_path / "kb") as kb:
        assert _strip(MemoryGraph(kb).read_graph()) == EXPECTED
    again = json.loads(_gm(tmp_path / "kb", "import", "memory-jsonl", str(src), "--json").stdout)
    assert again == {"entities_created": 0, "relations_created": 0, "observations_added": 0, "skipped": []}


def test_import_refuses_a_bad_line_and_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "memory.jsonl"
    src.write_text(_jsonl(EXPECTED) + '\n{"type": "entity", "name": "X"}\n', encoding="utf-8")
    p = _gm(tmp_path / "kb", "import", "memory-jsonl", str(src))
    assert p.returncode == 1 and "line 4" in p.stderr and "entityType" in p.stderr
    with graphmem.open(tmp_path / "kb") as kb:
        assert kb.graph.list() == []
    p = _gm(tmp_path / "kb", "import", "memory-jsonl", str(tmp_path / "missing.jsonl"))
    assert p.returncode == 1 and "missing.jsonl" in p.stderr


def test_import_skips_relations_to_unknown_entities(tmp_path: Path) -> None:
    src = tmp_path / "memory.jsonl"
    graph = {"entities": EXPECTED["entities"][1:], "relations": [README_RELATION]}
    src.write_text(_jsonl(graph), encoding="utf-8")
    out = json.loads(_gm(tmp_path / "kb", "import", "memory-jsonl", str(src), "--json").stdout)
    assert out["relations_created"] == 0 and out["skipped"] == [
        "relation John_Smith -works_at-> Anthropic: no entity Anthropic"]
