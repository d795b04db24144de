"""The CLI through its real entry point: the root Click group in process (tests/cli_inproc.py), and
the installed `graphmem` script and `python -m graphmem` as subprocesses where the process is the point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_inproc import graphmem_env, run_cli
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT

SCRIPT = Path(sys.executable).parent / ("graphmem.exe" if os.name == "nt" else "graphmem")


def run(home, *args, ok=True, script=False):
    """``graphmem --home HOME ARGS...``: in process, or the installed console script with ``script=True``."""
    env = graphmem_env()
    if script:
        p = subprocess.run([str(SCRIPT), "--home", str(home), *args], capture_output=True, text=True, env=env,
                           timeout=60)
    else:
        p = run_cli(["--home", str(home), *args], env=env)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture
def files(tmp_path):
    (tmp_path / "crash.txt").write_text(QUICKSTART_TEXT, encoding="utf-8")
    (tmp_path / "ex.json").write_text(json.dumps({"entities": QUICKSTART_ENTITIES,
                                                  "relations": QUICKSTART_RELATIONS}), encoding="utf-8")
    return tmp_path


def test_console_script_installed(tmp_path):
    assert SCRIPT.exists(), "pip install -e . must install the graphmem console script"
    p = run(tmp_path / "kb", "init", "--json", script=True)
    assert json.loads(p.stdout)["created"] is True


def test_quickstart_through_cli(files):
    home = files / "kb"
    run(home, "init")
    r = json.loads(run(home, "ingest", str(files / "crash.txt"), "--extraction", str(files / "ex.json"),
                       "--id", "doc_1", "--json").stdout)
    assert (r["chunk_count"], r["nodes_added"], r["edges_added"]) == (1, 2, 1)
    again = json.loads(run(home, "ingest", str(files / "crash.txt"), "--extraction", str(files / "ex.json"),
                           "--id", "doc_1", "--json").stdout)
    assert again["status"] == "unchanged" and again["nodes_added"] == 0

    ev = json.loads(run(home, "query", "Why does the system crash?", "--evidence", "--json").stdout)
    assert {n["name"] for n in ev["subgraph"]["nodes"].values()} == {"memory leak", "system crash"}
    assert ev["subgraph"]["edges"][0]["type"] == "causes"
    chunk = ev["supporting_documents"][0]["supporting_chunks"][0]
    assert (chunk["text"], chunk["start"], chunk["end"]) == (QUICKSTART_TEXT, 0, len(QUICKSTART_TEXT))

    human = run(home, "query", "Why does the system crash?", "--evidence").stdout
    assert "memory leak --[causes]--> system crash (doc_1)" in human
    assert "“System crashes due to memory leaks.” (0-35)" in human


def test_docs_entity_stats_events(files):
    home = files / "kb"
    run(home, "ingest", str(files / "crash.txt"), "--extraction", str(files / "ex.json"), "--id", "doc_1")
    listed = json.loads(run(home, "docs", "list", "--json").stdout)
    assert [d["doc_id"] for d in listed] == ["doc_1"] and "content" not in listed[0]
    shown = json.loads(run(home, "docs", "show", "doc_1", "--json").stdout)
    assert shown["content"] == QUICKSTART_TEXT and shown["versions"] == [1]
    assert "doc_1:v1:c0" in run(home, "docs", "show", "doc_1", "--chunks").stdout
    hits = json.loads(run(home, "docs", "search", 'memory "NEAR* -:', "--json").stdout)
    assert hits[0]["chunk_id"] == "doc_1:v1:c0" and "[memory]" in hits[0]["snippet"].lower()
    ent = json.loads(run(home, "entity", "show", "Memory Leak", "--json").stdout)
    assert ent["relations"][0]["target"] == "system crash"
    assert "memory leak --[causes]--> system crash" in run(home, "entity", "show", "memory leak").stdout
    stats = json.loads(run(home, "stats", "--json").stdout)
    assert (stats["documents"], stats["entities"], stats["edges"]) == (1, 2, 1)
    assert "entities 2" in run(home, "stats").stdout
    evs = json.loads(run(home, "events", "--json").stdout)
    assert evs[-1]["type"] == "document.added"
    rm = json.loads(run(home, "docs", "rm", "doc_1", "--json").stdout)
    assert rm["nodes_removed"] == 2 and rm["edges_removed"] == 1
    assert json.loads(run(home, "stats", "--json").stdout)["entities"] == 0


def test_hand_made_entities_and_relations(tmp_path):
    home = tmp_path / "kb"
    run(home, "entity", "add", "wheel", "--type", "component")
    run(home, "entity", "add", "car", "--type", "system", "--alias", "automobile")
    rel = json.loads(run(home, "relation", "add", "wheel", "is part of", "automobile", "--json").stdout)
    assert (rel["source_name"], rel["type"], rel["target_name"]) == ("car", "contains", "wheel")
    sg = json.loads(run(home, "query", "the car", "--json").stdout)
    assert {n["name"] for n in sg["nodes"].values()} == {"car", "wheel"}


def test_ingest_folder_with_bad_files(tmp_path):
    home = tmp_path / "kb"
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "good.md").write_text("# Good\nThe Dispatch API depends on PgBouncer.", encoding="utf-8")
    (corpus / "bin.txt").write_bytes(b"\xff\xfe\x00bad")
    (corpus / "latin1.txt").write_bytes(b"caf\xe9 au lait")
    (corpus / "empty.txt").write_bytes(b"   \n")
    (corpus / "bad.jsonl").write_text('{"id": "r1", "text": "Redis is a cache."}\n{oops\n', encoding="utf-8")
    p = run(home, "ingest", str(corpus), "--extractor", "none", "--json")
    s = json.loads(p.stdout)
    assert s["added"] == 2
    reasons = {(os.path.basename(k["path"]), k["line"]): k["reason"] for k in s["skipped"]}
    assert "binary" in reasons[("bin.txt", None)]
    assert "not UTF-8" in reasons[("latin1.txt", None)]
    assert "no text" in reasons[("empty.txt", None)]
    assert "not JSON" in reasons[("bad.jsonl", 2)]
    human = run(home, "ingest", str(corpus), "--extractor", "none").stdout
    assert "2 unchanged" in human and "skipped" in human and "bin.txt" in human


@pytest.mark.parametrize("setup,args,message", [
    (None, ["query", "x"], "no knowledge base at"),
    ("init", ["docs", "show", "nope"], "no document with id 'nope'"),
    ("init", ["entity", "show", "nope"], "no entity named 'nope'"),
    ("init", ["relation", "add", "a", "uses", "b"], "no entity named 'a'"),
    ("init", ["docs", "rm", "nope"], "no document with id 'nope'"),
])
def test_errors_are_one_line_without_traceback(tmp_path, setup, args, message):
    home = tmp_path / "kb"
    if setup:
        run(home, setup)
    p = run(home, *args, ok=False)
    assert p.returncode == 1
    assert message in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name,content,extraction,message", [
    ("bin.txt", b"\xff\xfe\x00bad", b"{}", "not UTF-8"),
    ("empty.txt", b"   \n", b"{}", "is empty"),
    ("ok.txt", QUICKSTART_TEXT.encode(), b"{bad json", "not valid JSON"),
    ("ok.txt", QUICKSTART_TEXT.encode(), b'{"entities": [{"type": "issue"}]}', "entities[0].name: missing"),
    ("ok.txt", QUICKSTART_TEXT.encode(),
     b'{"relations": [{"source": "a", "target": "b", "type": "c", "confidence": 7}]}', "outside [0, 1]"),
])
def test_bad_files_rejected_and_store_unchanged(tmp_path, name, content, extraction, message):
    home = tmp_path / "kb"
    run(home, "init")
    before = json.loads(run(home, "stats", "--json").stdout)
    (tmp_path / name).write_bytes(content)
    (tmp_path / "x.json").write_bytes(extraction)
    args = ["ingest", str(tmp_path / name), "--extraction", str(tmp_path / "x.json")]
    p = run(home, *args, ok=False)
    assert p.returncode == 1 and message in p.stderr and "Traceback" not in p.stderr
    after = json.loads(run(home, "stats", "--json").stdout)
    before.pop("size_bytes"), after.pop("size_bytes")
    assert after == before


def test_home_from_environment(tmp_path):
    env = {**os.environ, "GRAPHMEM_HOME": str(tmp_path / "envkb"), "GRAPHMEM_EMBED_MODEL": "none"}
    p = subprocess.run([sys.executable, "-m", "graphmem", "init", "--json"], capture_output=True, text=True,
                       env=env, timeout=60)  # a subprocess on purpose: `python -m graphmem` and the real environment
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["home"] == str(tmp_path / "envkb")


def test_readme_main_job_on_the_example_corpus(tmp_path):
    """`graphmem ingest examples/` offline, then a question answered with evidence spans;
    a second ingest reports every file unchanged."""
    repo = Path(__file__).resolve().parent.parent
    env = graphmem_env()

    def gm(*args):
        p = run_cli(["--home", str(tmp_path / "kb"), *args], env=env, cwd=repo)
        assert p.returncode == 0, p.stderr
        return p.stdout

    first = json.loads(gm("ingest", "examples/", "--json"))
    assert first["added"] == 15 and first["skipped"] == [] and first["failed"] == []  # 12 files + 3 records
    assert first["relations"] > 30 and first["extractor"] == "offline"
    assert "examples/README.md" not in json.dumps(first)  # .graphmemignore'd
    ev = json.loads(gm("query", "Why did dispatch fail during INC-2041?", "--evidence", "--json"))
    edges = {(e["source_name"], e["type"], e["target_name"]) for e in ev["subgraph"]["edges"]}
    assert ("PgBouncer connection pool exhaustion", "causes", "Dispatch API outage") in edges
    quotes = [q for d in ev["supporting_documents"] for c in d["supporting_chunks"] for q in c["quotes"]]
    assert quotes and all(q["start"] is not None for q in quotes)
    docs = {d["doc_id"]: d for d in ev["supporting_documents"]}
    q = next(q for d in docs.values() for c in d["supporting_chunks"] for q in c["quotes"]
             if "PgBouncer connection pool exhaustion" in q["text"])
    source = next(d for d in docs if any(q in c["quotes"] for c in docs[d]["supporting_chunks"]))
    if not source.startswith("note-"):
        text = (repo / source).read_text(encoding="utf-8")
        if source.endswith(".md") and text.startswith("---"):
            text = text.split("---", 2)[2].lstrip("\n")
        assert q["text"] in text
    second = json.loads(gm("ingest", "examples/", "--json"))
    assert second["unchanged"] == 15 and second["added"] == 0 and second["new_versions"] == 0


def test_a_real_process_reads_a_pipe_and_exits_with_the_documented_codes(tmp_path):
    """Subprocess smoke test (the rest run in process): stdin piped into `python -m graphmem`, its JSON
    piped back out, and the exit statuses a shell sees: 0, 1 (bad input, one line) and 2 (usage)."""
    home = str(tmp_path / "kb")
    env = graphmem_env()

    def gm(*args, stdin=""):
        return subprocess.run([sys.executable, "-m", "graphmem", "--home", home, *args], input=stdin,
                              capture_output=True, text=True, env=env, timeout=120)

    written = gm("wiki", "write", "topic", "Piped", "--json", stdin="From a pipe, see [[Elsewhere]].\n")
    assert written.returncode == 0, written.stderr
    assert json.loads(written.stdout)["slug"] == "piped"
    read = gm("wiki", "read", "topic/piped", "--json")
    assert "From a pipe" in json.loads(read.stdout)["content"]
    missing = gm("entity", "show", "nobody")
    assert missing.returncode == 1 and missing.stderr.startswith("error: no entity named 'nobody'")
    assert len(missing.stderr.strip().splitlines()) == 1
    usage = gm("search")
    assert usage.returncode == 2 and "Missing argument" in usage.stderr


def test_an_extraction_ingest_without_title_keeps_the_documents_title(files):
    home = files / "kb"
    args = ["ingest", str(files / "crash.txt"), "--extraction", str(files / "ex.json"), "--id", "doc_1", "--json"]
    first = json.loads(run(home, *args, "--title", "Crash report").stdout)
    assert first["status"] == "added"
    again = json.loads(run(home, *args).stdout)  # no --title: not a retitle to the file's name
    assert (again["status"], again["version"]) == ("unchanged", 1)
    shown = json.loads(run(home, "docs", "show", "doc_1", "--json").stdout)
    assert shown["title"] == "Crash report"
    new = json.loads(run(home, "ingest", str(files / "crash.txt"), "--extraction", str(files / "ex.json"),
                         "--id", "doc_2", "--json").stdout)
    assert new["status"] == "added"
    assert json.loads(run(home, "docs", "show", "doc_2", "--json").stdout)["title"] == "crash.txt"
