"""The README's examples run as written (issue 13 item 10): every ```python block, in order, in a
fresh folder with the bundled examples, offline; the quick start's graphmem commands through the
real entry point; every command of the CLI synopsis exists."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphmem.cli import cli

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
SCRIPT = Path(sys.executable).parent / ("graphmem.exe" if os.name == "nt" else "graphmem")

# What each python block leaves behind that the README's comments promise (checked after the block).
CHECKS = {
    "kb.ingest_with_content(": """
import json as _j
print("CHECK " + _j.dumps({"r": r, "chain": answer["evidence_chain"], "n_hits": len(hits.hits),
                           "parts": sorted(hits.hits[0].parts), "skill_ids": [h.id for h in
                           kb_skills_hits] if "kb_skills_hits" in dir() else None}))
""",
    "kb.memory.add(": """
import json as _j
print("CHECK " + _j.dumps({"n": len(out["results"]), "first": out["results"][0]["memory"]
                           if "memory" in out["results"][0] else out["results"][0].get("text"),
                           "edge_types": sorted({e["type"] for e in out["subgraph"]})}))
""",
}


def fenced_blocks() -> list[tuple[str, str]]:
    """``(language, text)`` of every fenced block, in order."""
    blocks, lang, lines = [], None, []
    for line in README.splitlines():
        if line.startswith("```"):
            if lang is None:
                lang, lines = line[3:].strip(), []
            else:
                blocks.append((lang, "\n".join(lines) + "\n"))
                lang = None
        elif lang is not None:
            lines.append(line)
    return blocks


def python_blocks() -> list[str]:
    return [text for lang, text in fenced_blocks() if lang == "python"]


def shell_blocks() -> list[str]:
    return [text for lang, text in fenced_blocks() if lang == ""]


def offline_env(tmp: Path) -> dict[str, str]:
    """A newcomer's machine without network: own HOME/XDG dirs, a dead proxy, hubs offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env.update(HOME=str(tmp / "home"), XDG_CONFIG_HOME=str(tmp / "home" / ".config"),
               XDG_CACHE_HOME=str(tmp / "home" / ".cache"), XDG_DATA_HOME=str(tmp / "home" / ".local" / "share"),
               HF_HOME=str(tmp / "home" / ".cache" / "huggingface"), HF_HUB_OFFLINE="1",
               HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
               )
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    return env


@pytest.fixture
def newcomer(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fresh folder holding the clone's examples/, and the skills folder the README builds."""
    work = tmp_path / "work"
    shutil.copytree(REPO / "examples", work / "examples")
    skill = tmp_path / "home" / ".claude" / "skills" / "col" / "helm-chart-builder" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: helm-chart-builder\ndescription: Turn Kubernetes YAML manifests into a Helm "
                     "chart with values.yaml\n---\n# Helm chart builder\nConvert k8s YAML into a Helm chart.\n",
                     encoding="utf-8")
    return work, offline_env(tmp_path)


def _run_python(code: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def _checked(stdout: str) -> dict:
    [line] = [ln for ln in stdout.splitlines() if ln.startswith("CHECK ")]
    return json.loads(line[len("CHECK "):])


def test_readme_has_the_python_blocks_this_test_checks():
    blocks = python_blocks()
    assert len(blocks) >= 3
    for marker in CHECKS:
        assert sum(marker in b for b in blocks) == 1, f"README: expected one python block with {marker!r}"


def test_every_python_block_runs_as_written(newcomer):
    work, env = newcomer
    results = {}
    for i, block in enumerate(python_blocks()):
        # The skills loop variable is kept so the check can see what the README's loop produced.
        code = block.replace("for h in kb.skills.retrieve(", "for h in (kb_skills_hits := kb.skills.retrieve(")
        code = code.replace('top_k=8):', 'top_k=8)):') if "kb_skills_hits" in code else code
        code += "".join(check for marker, check in CHECKS.items() if marker in block)
        p = _run_python(code, work, env)
        assert p.returncode == 0, f"README python block {i} failed:\n{block}\n--- stderr ---\n{p.stderr[-3000:]}"
        assert "Traceback" not in p.stderr
        for marker in CHECKS:
            if marker in block:
                results[marker] = _checked(p.stdout)
    lib = results["kb.ingest_with_content("]
    assert {k: lib["r"][k] for k in ("doc_id", "chunk_count", "nodes_added", "edges_added", "warnings")} == {
        "doc_id": "doc_1", "chunk_count": 1, "nodes_added": 2, "edges_added": 1, "warnings": []}
    assert "memory leak --[causes]--> system crash (doc_1)" in lib["chain"]
    assert lib["n_hits"] >= 1 and {"dense", "lexical", "graph", "relevance"} <= set(lib["parts"])
    assert lib["skill_ids"] and lib["skill_ids"][0] == "col/helm-chart-builder"
    mem = results["kb.memory.add("]
    assert mem["n"] >= 1
    assert "REPLY_TO" in mem["edge_types"] or "TEMPORAL_NEXT" in mem["edge_types"]


def _quick_start_commands() -> list[str]:
    first = shell_blocks()[0]
    return [c.strip() for c in first.split("&&") if c.strip().startswith("graphmem ")]


def test_quick_start_commands_run_offline(newcomer):
    work, env = newcomer
    cmds = _quick_start_commands()
    assert [c.split()[3] for c in cmds] == ["ingest", "query"]
    outputs = []
    for cmd in cmds:
        argv = [str(SCRIPT), *__import__("shlex").split(cmd)[1:]]
        p = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, f"{cmd}\n{p.stderr[-2000:]}"
        assert "Traceback" not in p.stderr
        outputs.append(p.stdout)
    assert "PgBouncer connection pool exhaustion" in outputs[1] and "supporting documents:" in outputs[1]


def _synopsis_commands() -> list[list[str]]:
    """``[group, sub]`` (or ``[cmd]``) of every line of the README's CLI synopsis."""
    block = next(b for b in shell_blocks() if b.lstrip().startswith("graphmem init"))
    out: list[list[str]] = []
    for line in block.splitlines():
        line = line.split("  #")[0].strip()
        if not line.startswith("graphmem "):
            continue
        words = line.split()[1:]
        head = words[0]
        alternatives = " ".join(words[1:]).split(" | ")
        subs: list[str] = []
        for alt in alternatives:
            first = alt.split()[0] if alt.split() else ""
            if re.fullmatch(r"[a-z][a-z|-]*", first):
                subs += first.split("|")
        out += [[head, s] for s in subs] if subs else [[head]]
    return out


def test_every_synopsis_command_exists():
    cmds = _synopsis_commands()
    assert ["entity", "retype"] in cmds and ["ingest"] in cmds
    runner = CliRunner()
    missing = [c for c in cmds if runner.invoke(cli, [*c, "--help"], obj={}).exit_code != 0]
    assert missing == []
