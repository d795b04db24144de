"""The in-process CLI runner gives each call what a fresh process would have (tests/cli_inproc.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import graphmem
from cli_inproc import graphmem_env, run_cli


def test_env_and_cwd_are_the_calls_own_and_restored(tmp_path: Path) -> None:
    before_env, before_cwd = dict(os.environ), os.getcwd()
    env = graphmem_env(GRAPHMEM_HOME=str(tmp_path / "from-env"))
    p = run_cli(["init", "--json"], env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["home"] == str(tmp_path / "from-env")
    p = run_cli(["--home", "relative", "init", "--json"], env=graphmem_env(), cwd=tmp_path)
    assert (tmp_path / "relative" / "graph.db").exists()  # relative to the call's cwd
    assert dict(os.environ) == before_env and os.getcwd() == before_cwd
    # a variable left out of env is unset for the call, as with subprocess.run(env=...)
    os.environ["GRAPHMEM_HOME"] = str(tmp_path / "leaked")
    try:
        p = run_cli(["init", "--json"], env=graphmem_env(), cwd=tmp_path)
    finally:
        del os.environ["GRAPHMEM_HOME"]
    assert json.loads(p.stdout)["home"] == ".graphmem"


def test_every_call_shows_its_notes_like_a_new_process(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    assert run_cli(["--home", str(home), "init"], env=graphmem_env()).returncode == 0
    for _ in range(2):  # a warning already shown in this process is shown again: each call is a new "process"
        p = run_cli(["--home", str(home), "--read-only", "stats"], env=graphmem_env())
        assert p.returncode == 0
        assert p.stderr.count("note: knowledge base") == 1 and "is read-only" in p.stderr


def test_stdin_is_fed_and_stdout_stderr_are_apart(tmp_path: Path) -> None:
    home = str(tmp_path / "kb")
    p = run_cli(["--home", home, "wiki", "write", "topic", "Piped", "--json"], env=graphmem_env(),
                input="From stdin.\n")
    assert p.returncode == 0 and json.loads(p.stdout)["slug"] == "piped"
    bad = run_cli(["--home", home, "entity", "show", "nobody"], env=graphmem_env())
    assert (bad.returncode, bad.stdout) == (1, "") and bad.stderr.startswith("error: no entity named 'nobody'")


def test_an_escaping_exception_is_a_traceback_and_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(self: graphmem.KnowledgeBase) -> dict:
        raise RuntimeError("boom in stats")

    monkeypatch.setattr(graphmem.KnowledgeBase, "stats", boom)
    p = run_cli(["--home", str(tmp_path / "kb"), "init"], env=graphmem_env())
    assert p.returncode == 0
    p = run_cli(["--home", str(tmp_path / "kb"), "stats"], env=graphmem_env())
    assert p.returncode == 1 and "Traceback" in p.stderr and "RuntimeError: boom in stats" in p.stderr
