"""`graphmem wiki ...` through the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from cli_inproc import run_cli
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT
from test_cli import run


def run_stdin(home: Path, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    p = run_cli(["--home", str(home), *args], env=env, input=stdin)
    assert p.returncode == 0, p.stderr
    return p


def test_wiki_commands_end_to_end(tmp_path):
    home = tmp_path / "kb"
    (tmp_path / "crash.txt").write_text(QUICKSTART_TEXT, encoding="utf-8")
    (tmp_path / "ex.json").write_text(json.dumps({"entities": QUICKSTART_ENTITIES,
                                                  "relations": QUICKSTART_RELATIONS}), encoding="utf-8")
    run(home, "ingest", str(tmp_path / "crash.txt"), "--extraction", str(tmp_path / "ex.json"), "--id", "doc_1",
        "--title", "System Crash Analysis")

    # write: --content, stdin and --file
    w = json.loads(run(home, "wiki", "write", "summary", "System Crash Analysis Summary", "--content",
                       "Crashes come from [[memory-leak]].", "--summary", "why it crashes", "--tag", "ops",
                       "--source", "doc_1", "--json").stdout)
    assert (w["slug"], w["created"], w["tags"]) == ("system-crash-analysis-summary", True, ["ops"])
    assert "created topic/piped" in run_stdin(
        home, "From stdin, see [[system-crash]].\n", "wiki", "write", "topic", "Piped").stdout
    (tmp_path / "body.md").write_text("From a file.\n", encoding="utf-8")
    run(home, "wiki", "write", "topic", "Filed", "--file", str(tmp_path / "body.md"))

    # read by slug and by category + title
    r = json.loads(run(home, "wiki", "read", "piped", "--json").stdout)
    assert r["content"] == "From stdin, see [[system-crash]].\n"
    assert run(home, "wiki", "read", "topic", "Filed").stdout.rstrip().endswith("From a file.")
    assert json.loads(run(home, "wiki", "read", "summary", "System Crash Analysis Summary", "--json").stdout)[
        "front_matter"]["source_documents"] == ["doc_1@v1"]

    listed = json.loads(run(home, "wiki", "list", "--json").stdout)
    assert {p["slug"] for p in listed} >= {"memory-leak", "system-crash", "system-crash-analysis-summary", "piped",
                                           "filed"}
    assert [p["slug"] for p in json.loads(run(home, "wiki", "list", "--category", "topic", "--json").stdout)] == [
        "filed", "piped"]

    hits = json.loads(run(home, "wiki", "search", "memory leak", "-k", "3", "--json").stdout)
    assert hits[0]["slug"] == "memory-leak" and len(hits) == 3 and hits[0]["snippet"]
    assert "entity/memory-leak" in run(home, "wiki", "search", "memory leak").stdout

    back = json.loads(run(home, "wiki", "backlinks", "memory-leak", "--json").stdout)
    assert "system-crash-analysis-summary" in {b["slug"] for b in back}

    log = json.loads(run(home, "wiki", "log", "-n", "3", "--json").stdout)
    assert len(log) == 3 and log[-1]["operation"] == "write" and log[-1]["target"] == "topic/filed"
    assert "write | topic/filed" in run(home, "wiki", "log").stdout

    # lint: problems -> exit 1, grouped output; --json has the report
    p = run(home, "wiki", "lint", ok=False)
    assert p.returncode == 1 and "unlinked_pages" in p.stdout and "problems" in p.stdout
    report = json.loads(run(home, "wiki", "lint", "--json", ok=False).stdout)
    assert "filed" in report["isolated_pages"]

    (home / "wiki" / "topic" / "dropped.md").write_text("by hand [[filed]]\n", encoding="utf-8")
    assert json.loads(run(home, "wiki", "lint", "--json", ok=False).stdout)["orphan_pages"] == ["topic/dropped.md"]
    synced = json.loads(run(home, "wiki", "sync", "--json").stdout)
    assert synced["indexed"] == ["topic/dropped"]

    rm = json.loads(run(home, "wiki", "rm", "topic", "Filed", "--json").stdout)
    assert rm["deleted"] and not (home / "wiki" / "topic" / "filed.md").exists()
    assert "deleted topic/piped" in run(home, "wiki", "rm", "piped").stdout
    fixed = run(home, "wiki", "lint", "--fix", "--create-stubs", ok=False)  # dropped.md links [[filed]]
    assert "fixed stubs_created: topic/filed" in fixed.stdout
    assert json.loads(run(home, "wiki", "lint", "--json", ok=False).stdout)["broken_wikilinks"] == {}


def test_wiki_errors_are_one_line_and_exit_1(tmp_path):
    home = tmp_path / "kb"
    run(home, "init")
    p = run(home, "wiki", "write", "topic", "!!!", "--content", "x", ok=False)
    assert p.returncode == 1 and p.stderr.startswith("error: title") and "Traceback" not in p.stderr
    p = run(home, "wiki", "read", "topic", "Nope", ok=False)
    assert p.returncode == 1 and "no page titled 'Nope'" in p.stderr
    p = run(home, "wiki", "read", "a", "b", "c", ok=False)
    assert p.returncode == 1 and "SLUG, or a CATEGORY and a TITLE" in p.stderr
    p = run(home, "wiki", "write", "topic", "T", "--content", "x", "--file", "y", ok=False)
    assert p.returncode == 1 and "either --content or --file" in p.stderr
    assert json.loads(run(home, "wiki", "lint", "--json").stdout)["problems"] == 0
    assert run(home, "wiki", "search", "nothing").stdout.strip() == "no matching pages"
