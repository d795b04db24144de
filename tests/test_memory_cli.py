"""``graphmem memory ...`` through the real entry point."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from cli_inproc import graphmem_env, run_cli


def run(home: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    p = run_cli(["--home", str(home), "memory", *args], env=graphmem_env())
    if ok:
        assert p.returncode == 0, p.stderr
    return p


def js(p: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(p.stdout)


def test_memory_commands(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    added = js(run(home, "add", "Where did you go on holiday?", "We went to Crete", "--user", "u1", "--run", "r1",
                   "--metadata", '{"doc_id": "trip"}', "--timestamp", "2024-06-01T10:00:00Z", "--json"))
    q, a = (r["id"] for r in added["results"])
    assert added["edges"] == 3  # REPLY_TO, TEMPORAL_NEXT, DOCUMENT_LINK
    found = js(run(home, "search", "holiday", "--user", "u1", "--json"))
    assert [r["id"] for r in found["results"]] == [q, a] and found["subgraph"]
    assert js(run(home, "search", "holiday", "--user", "u2", "--json"))["results"] == []
    text = run(home, "search", "holiday", "--user", "u1", "--strategy", "ppr").stdout
    assert q in text and "REPLY_TO" in text
    assert [m["id"] for m in js(run(home, "list", "--user", "u1", "--json"))["results"]] == [q, a]
    shown = js(run(home, "show", a, "--json"))
    assert shown["memory"] == "We went to Crete" and shown["metadata"] == {"doc_id": "trip"}
    assert js(run(home, "update", a, "We went to Crete and Rhodes", "--json"))["previous_version"] == f"{a}~v1"
    assert [h["event"] for h in js(run(home, "history", a, "--json"))] == ["ADD", "UPDATE"]
    assert js(run(home, "stats", "--user", "u1", "--json"))["edge_types"]["UPDATED_FROM"] == 1
    assert set(js(run(home, "decay", "--json"))) == {"decayed", "pruned", "archived"}
    assert js(run(home, "backfill", "--user", "u1", "--json"))["edges"] == 0
    assert js(run(home, "rm", a, "--json"))["event"] == "DELETE"
    assert "memories 1" in run(home, "stats").stdout


def test_memory_cli_errors(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    run(home, "add", "x", "--user", "u1")
    p = run(home, "show", "mem_missing", ok=False)
    assert p.returncode == 1 and "mem_missing" in p.stderr and "Traceback" not in p.stderr
    p = run(home, "add", "no scope", ok=False)
    assert p.returncode == 1 and "--user" in p.stderr and "user_id" not in p.stderr  # the CLI's words (issue 13)
    p = run(home, "add", "x", "--user", "u1", "--metadata", "{nope", ok=False)
    assert p.returncode == 1 and "--metadata" in p.stderr
    p = run(home, "add", " ", "--user", "u1", ok=False)
    assert p.returncode == 1 and "empty" in p.stderr
    assert len(js(run(home, "list", "--user", "u1", "--json"))["results"]) == 1
