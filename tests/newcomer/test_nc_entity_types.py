"""Issue 13 item 10: entity types — an agent's type beats the offline extractor's default
`concept` (and `concept` never downgrades a specific type); `kb.graph.retype` exists, as the
type-conflict warning says."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import graphmem
from cli_inproc import graphmem_env, run_cli

TEXT = "The Dispatch API depends on the tracker. Retries matter during an outage."


def _offline_ingest(kb: graphmem.KnowledgeBase, folder: Path) -> None:
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT)
    kb.ingest_paths([folder])


def test_agent_type_beats_offline_concept(kb, tmp_path):
    _offline_ingest(kb, tmp_path / "docs")
    assert kb.graph.find("tracker").type == "concept"  # the offline extractor's guess
    r = kb.ingest_with_content("agent-1", "Agent notes", "agent", "The tracker stores GPS pings.",
                               [{"name": "tracker", "type": "software",
                                 "supporting_text": "The tracker stores GPS pings."}])
    assert kb.graph.find("tracker").type == "software"
    assert not [w for w in r["warnings"] if "differs from the stored type" in w]
    assert [e.type for e in kb.events.list(limit=1000) if e.type == "node.retyped"] == ["node.retyped"]


def test_concept_never_downgrades_a_specific_type(kb):
    kb.ingest_with_content("a", "A", "a", "The tracker stores GPS pings.",
                           [{"name": "tracker", "type": "software"}])
    r = kb.ingest_with_content("b", "B", "b", "Ask the tracker.", [{"name": "tracker", "type": "concept"}])
    assert kb.graph.find("tracker").type == "software"
    assert r["warnings"] == []  # `concept` is "no particular type", not a conflict


def test_agent_type_upgrades_concept_within_one_document(kb):
    kb.ingest_with_content("a", "A", "a", "The tracker stores GPS pings.",
                           [{"name": "tracker"}, {"name": "Tracker", "type": "software"}])
    assert kb.graph.find("tracker").type == "software"


def test_add_node_with_a_type_upgrades_concept(kb):
    kb.add_node("tracker")
    kb.add_node("tracker", "software")
    assert kb.graph.find("tracker").type == "software"
    kb.add_node("tracker")  # default type: no downgrade
    assert kb.graph.find("tracker").type == "software"


def test_two_specific_types_keep_the_stored_one_and_name_retype(kb):
    kb.ingest_with_content("a", "A", "a", "The tracker stores GPS pings.", [{"name": "tracker", "type": "software"}])
    r = kb.ingest_with_content("b", "B", "b", "The tracker crashed.", [{"name": "tracker", "type": "issue"}])
    assert kb.graph.find("tracker").type == "software"
    [w] = [w for w in r["warnings"] if "differs from the stored type" in w]
    assert "graphmem entity retype" in w and "kb.graph.retype" in w


def test_retype_changes_the_type_and_logs_it(kb):
    kb.ingest_with_content("a", "A", "a", "The tracker stores GPS pings.",
                           [{"name": "tracker", "type": "software"}, {"name": "GPS ping", "type": "data"}],
                           [{"source": "tracker", "target": "GPS ping", "type": "stores",
                             "supporting_text": "The tracker stores GPS pings."}])
    assert "**Type:** software" in kb.wiki.read_page("entity", "tracker")["content"]
    out = kb.graph.retype("Tracker", "Bug")  # any spelling of the name; the type is normalised
    assert out == {"id": kb.graph.find("tracker").id, "name": "tracker", "old_type": "software", "type": "issue"}
    assert kb.graph.find("tracker").type == "issue"
    [ev] = [e for e in kb.events.list(limit=1000) if e.type == "node.retyped"]
    assert ev.payload == {"old_type": "software", "type": "issue"}
    assert "**Type:** issue" in kb.wiki.read_page("entity", "tracker")["content"]  # its page follows


def test_retype_unknown_entity_and_bad_type_are_clear_errors(kb):
    with pytest.raises(graphmem.NotFound, match="nosuch"):
        kb.graph.retype("nosuch", "software")
    kb.add_node("tracker", "software")
    with pytest.raises(graphmem.InvalidInput, match="type"):
        kb.graph.retype("tracker", "  ")
    assert kb.graph.find("tracker").type == "software"


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["--home", str(home), *args], env=graphmem_env())


def test_cli_entity_retype(tmp_path):
    home = tmp_path / "kb"
    assert _cli(home, "entity", "add", "tracker", "--type", "software").returncode == 0
    p = _cli(home, "entity", "retype", "Tracker", "Bug", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["type"] == "issue" and json.loads(p.stdout)["old_type"] == "software"
    p = _cli(home, "entity", "retype", "nosuch", "issue")
    assert p.returncode == 1 and "nosuch" in p.stderr and "Traceback" not in p.stderr
