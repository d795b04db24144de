"""The documented commands' ``--json`` output, pinned byte for byte.

Faces return typed models now; the CLI prints their ``to_dict()``. Scripts parse that JSON, so the
shapes (keys, key order, value types, indentation) must not move. The golden files in
``tests/golden/cli_json/`` were recorded before faces returned models, on the corpus in
``tests/golden/corpus/`` with a frozen clock; only the temporary folder's path, wall-clock
durations and the database file's size are normalised. After an intended change of an output, re-record them with
``GRAPHMEM_REGOLD=1 python -m pytest tests/test_cli_json_golden.py`` and review the diff.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cli_inproc import graphmem_env, run_cli

GOLDEN = Path(__file__).resolve().parent / "golden"
EXPECTED = GOLDEN / "cli_json"
FROZEN = datetime(2026, 3, 1, 9, 30, 0, tzinfo=timezone.utc)

# (name, argv after `graphmem --home KB`, expected exit status); run in this order on one knowledge base.
SCRIPT: list[tuple[str, list[str], int]] = [
    ("init", ["init", "--json"], 0),
    ("ingest-folder", ["ingest", "corpus/docs", "--json"], 0),
    ("ingest-extraction", ["ingest", "corpus/checkout-outage.md", "--extraction",
                           "corpus/checkout-outage.extraction.json", "--id", "checkout", "--json"], 0),
    ("ingest-again", ["ingest", "corpus/docs", "--json"], 0),
    ("stats", ["stats", "--json"], 0),
    ("query", ["query", "Why did the dispatch API fail?", "--json"], 0),
    ("query-evidence", ["query", "Why did the dispatch API fail?", "--evidence", "--json"], 0),
    ("search", ["search", "PgBouncer connection pool", "--json"], 0),
    ("search-kinds", ["search", "checkout payment gateway", "--kind", "chunk", "--kind", "entity", "-k", "4",
                      "--json"], 0),
    ("search-context", ["search", "PgBouncer", "--context", "--budget", "80", "-k", "3", "--json"], 0),
    ("docs-list", ["docs", "list", "--json"], 0),
    ("docs-show", ["docs", "show", "checkout", "--json"], 0),
    ("docs-search", ["docs", "search", "pool", "-k", "3", "--json"], 0),
    ("entity-show", ["entity", "show", "PgBouncer", "--json"], 0),
    ("entity-add", ["entity", "add", "Pager Duty", "--type", "tool", "--alias", "pagerduty", "--json"], 0),
    ("relation-add", ["relation", "add", "Pager Duty", "alerts", "checkout service", "--confidence", "0.9",
                      "--json"], 0),
    ("entity-retype", ["entity", "retype", "Pager Duty", "service", "--json"], 0),
    ("entity-merge", ["entity", "merge", "Dispatch API", "Dispatch", "--json"], 0),
    ("entity-merge-same", ["entity", "merge", "Pager Duty", "pagerduty", "--json"], 1),
    ("entity-missing", ["entity", "show", "no such thing", "--json"], 1),
    ("events", ["events", "--after", "3", "--limit", "4", "--json"], 0),
    ("wiki-write", ["wiki", "write", "concepts", "Connection pools", "--content",
                    "Pools cap connections; see [[PgBouncer]] and [[Nowhere page]].", "--summary",
                    "What a pool is", "--tag", "db", "--source", "checkout", "--json"], 0),
    ("wiki-read", ["wiki", "read", "concepts/connection-pools", "--json"], 0),
    ("wiki-list", ["wiki", "list", "--json"], 0),
    ("wiki-search", ["wiki", "search", "pool", "--json"], 0),
    ("wiki-backlinks", ["wiki", "backlinks", "pgbouncer", "--json"], 0),
    ("wiki-log", ["wiki", "log", "-n", "3", "--json"], 0),
    ("wiki-lint", ["wiki", "lint", "--json"], 1),
    ("wiki-sync", ["wiki", "sync", "--json"], 0),
    ("wiki-rm", ["wiki", "rm", "concepts/connection-pools", "--json"], 0),
    ("memory-add", ["memory", "add", "I love pizza", "My dog is called Rex", "--user", "u1",
                    "--timestamp", "2026-02-01T10:00:00Z", "--json"], 0),
    ("memory-add-one", ["memory", "add", "Rex likes pizza crusts", "--user", "u1", "--metadata",
                        '{"topic": "pets"}', "--json"], 0),
    ("memory-search", ["memory", "search", "what does my dog like?", "--user", "u1", "--json"], 0),
    ("memory-search-flat", ["memory", "search", "pizza", "--user", "u1", "--no-graph", "-k", "2", "--json"], 0),
    ("memory-list", ["memory", "list", "--user", "u1", "--json"], 0),
    ("memory-stats", ["memory", "stats", "--json"], 0),
    ("memory-decay", ["memory", "decay", "--json"], 0),
    ("skills-build", ["skills", "build", "corpus/skills", "--json"], 0),
    ("skills-query", ["skills", "query", "the connection pool is exhausted", "--json"], 0),
    ("skills-show", ["skills", "show", "ops/rotate-keys", "--json"], 0),
    ("skills-info", ["skills", "info", "--json"], 0),
    ("skills-graph", ["skills", "graph", "--json"], 0),
    ("skills-prompt", ["skills", "prompt", "rotate the vault keys", "-k", "2", "--json"], 0),
    ("skills-rebuild", ["skills", "rebuild", "corpus/skills", "--json"], 0),
    ("docs-rm", ["docs", "rm", "checkout", "--json"], 0),
    ("stats-after", ["stats", "--json"], 0),
]

# Memory ids are random (uuid4) as in mem0; the commands that take one look it up from an earlier output.
ID_SCRIPT: list[tuple[str, list[str], int]] = [
    ("memory-show", ["memory", "show", "{mem}", "--json"], 0),
    ("memory-update", ["memory", "update", "{mem}", "I love pizza and pasta", "--json"], 0),
    ("memory-history", ["memory", "history", "{mem}", "--json"], 0),
    ("memory-rm", ["memory", "rm", "{mem}", "--json"], 0),
]

# Wall-clock durations, and the database file's size (it depends on the SQLite build, not on graphmem).
_DURATIONS = re.compile(r'("(?:elapsed_s|docs_per_s|elapsed_ms|seconds|size_bytes)": )[0-9.e+-]+')


def _normalised(text: str, root: Path) -> str:
    text = text.replace(str(root), "<TMP>")
    return _DURATIONS.sub(r"\g<1>0", text)


class _FrozenDatetime(datetime):
    @classmethod
    def now(cls, tz=None):  # type: ignore[override]
        return FROZEN if tz is None else FROZEN.astimezone(tz)


def _record(root: Path) -> dict[str, str]:
    """Run the script; ``name -> "exit N\\n<stdout>"`` normalised."""
    env = graphmem_env()
    home = ["--home", "kb"]
    outputs: dict[str, str] = {}

    def one(name: str, argv: list[str], code: int) -> str:
        p = run_cli([*home, *argv], env=env, cwd=root)
        assert p.returncode == code, f"{name}: exit {p.returncode}\n{p.stderr}"
        assert "Traceback" not in p.stderr, p.stderr
        outputs[name] = f"exit {p.returncode}\n{p.stdout}" + (f"stderr {p.stderr}" if code else "")
        return p.stdout

    for name, argv, code in SCRIPT:
        out = one(name, argv, code)
        if name == "memory-add":
            mem = re.search(r'"id": "([^"]+)"', out)
            assert mem is not None
            mem_id = mem.group(1)
    for name, argv, code in ID_SCRIPT:
        one(name, [a.replace("{mem}", mem_id) for a in argv], code)
    return {name: _normalised(text, root) for name, text in outputs.items()}


def _record_in_one_fresh_process(root: Path) -> dict[str, str]:
    """The whole script in one child process with a fixed hash seed.

    Graph scores of ``search`` depend on set iteration order (their last digits move with
    PYTHONHASHSEED), and memory ids are uuid4: the child fixes both (and the clock), then runs every
    command in process."""
    code = ("import json, random, sys, uuid, test_cli_json_golden as g\n"
            "rng = random.Random(14)\n"
            "uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)\n"
            "import graphmem.context\n"
            "graphmem.context.datetime = g._FrozenDatetime\n"
            "sys.stdout.write(json.dumps(g._record(g.Path(sys.argv[1]))))\n")
    env = graphmem_env(PYTHONHASHSEED="0")
    p = subprocess.run([sys.executable, "-c", code, str(root)], cwd=Path(__file__).resolve().parent, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    outputs: dict[str, str] = json.loads(p.stdout)
    return outputs


def test_documented_json_outputs_are_byte_identical(tmp_path: Path) -> None:
    shutil.copytree(GOLDEN / "corpus", tmp_path / "corpus")
    got = _record_in_one_fresh_process(tmp_path)
    if os.environ.get("GRAPHMEM_REGOLD") == "1":
        shutil.rmtree(EXPECTED, ignore_errors=True)
        EXPECTED.mkdir(parents=True)
        for i, (name, text) in enumerate(got.items()):
            (EXPECTED / f"{i:02d}-{name}.txt").write_bytes(text.encode("utf-8"))
        pytest.skip("golden files re-recorded; review `git diff tests/golden`")
    expected = {p.stem.split("-", 1)[1]: p.read_bytes() for p in sorted(EXPECTED.glob("*.txt"))}
    assert list(got) == list(expected), "the script and the golden files name different commands"
    changed = [name for name, text in got.items() if text.encode("utf-8") != expected[name]]
    if changed:
        first = changed[0]
        diff = "".join(difflib.unified_diff(expected[first].decode("utf-8").splitlines(True),
                                            got[first].splitlines(True), f"golden/{first}", f"now/{first}", n=2))
        pytest.fail(f"--json output changed for {changed}; first diff:\n{diff[:6000]}")


def test_the_golden_files_cover_every_documented_group() -> None:
    """A command group the README documents with --json has at least one pinned output."""
    names = {p.stem.split("-", 1)[1] for p in EXPECTED.glob("*.txt")}
    groups = {n.split("-")[0] for n in names}
    assert {"init", "ingest", "search", "query", "stats", "docs", "entity", "relation", "events", "wiki",
            "memory", "skills"} <= groups
    assert len(names) == len(SCRIPT) + len(ID_SCRIPT)
