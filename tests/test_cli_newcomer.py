"""Issue 13, the CLI parts: exit codes, --home anywhere, absolute model folders, progress and warnings shown."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import tomllib

from cli_inproc import graphmem_env, run_cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def run(*args: str, cwd: Path, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(args, env=graphmem_env(**(env_extra or {})), cwd=cwd)


def _no_traceback(p: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in p.stderr, p.stderr


# --- item 3: failures exit non-zero, with the summary still printed -------------------------------------------

def test_ingest_nonexistent_path_exits_1_and_prints_the_summary(tmp_path):
    p = run("--home", "kb", "ingest", "no-such-folder/", cwd=tmp_path)
    _no_traceback(p)
    assert p.returncode == 1
    assert "0 documents" in p.stdout  # the summary is still printed
    assert "no-such-folder" in p.stdout + p.stderr
    assert "nothing was ingested" in p.stderr


def test_ingest_only_unsupported_files_exits_1(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "blob.dat").write_bytes(b"\x00\x01\x02")
    p = run("--home", "kb", "ingest", "data", "--json", cwd=tmp_path)
    _no_traceback(p)
    assert p.returncode == 1
    summary = json.loads(p.stdout)
    assert summary["documents"] == 0 and summary["skipped"]


def test_ingest_with_one_missing_path_among_good_ones_is_a_partial_failure(tmp_path):
    (tmp_path / "a.md").write_text("# Alpha\n\nThe dispatch API calls the ledger database.\n", encoding="utf-8")
    p = run("--home", "kb", "ingest", "a.md", "gone.md", cwd=tmp_path)
    _no_traceback(p)
    assert p.returncode == 3
    assert "1 added" in p.stdout
    assert "gone.md" in p.stderr


@pytest.mark.parametrize("where", ["parent", "inside"])
def test_a_named_unsupported_file_is_a_partial_failure_from_any_folder(tmp_path, where):
    # The skipped entry names a document id; matching it against the working directory made the
    # exit status depend on where the command ran (0 from the parent folder, 3 from inside).
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nThe dispatch API calls the ledger.\n", encoding="utf-8")
    (folder / "bad.xyz").write_text("not a supported type\n", encoding="utf-8")
    if where == "parent":
        p = run("--home", "kb", "ingest", "a/good.md", "a/bad.xyz", cwd=tmp_path)
    else:
        p = run("--home", "../kb", "ingest", "good.md", "bad.xyz", cwd=folder)
    _no_traceback(p)
    assert p.returncode == 3 and "bad.xyz" in p.stderr


def test_ingest_all_documents_failing_exits_1(tmp_path):
    # the LLM extractor at an address where nothing listens: every document fails
    (tmp_path / "a.md").write_text("# Alpha\n\nThe dispatch API calls the ledger database.\n", encoding="utf-8")
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "config.toml").write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "x"\ntimeout = 2\n', encoding="utf-8")
    p = run("--home", "kb", "ingest", "a.md", "--extractor", "llm", "--json", cwd=tmp_path)
    _no_traceback(p)
    summary = json.loads(p.stdout)
    assert summary["failed"], summary
    assert p.returncode == 1


def test_ingest_all_fine_and_unchanged_reingest_exit_0(tmp_path):
    (tmp_path / "a.md").write_text("# Alpha\n\nThe dispatch API calls the ledger database.\n", encoding="utf-8")
    assert run("--home", "kb", "ingest", "a.md", cwd=tmp_path).returncode == 0
    again = run("--home", "kb", "ingest", "a.md", cwd=tmp_path)
    assert again.returncode == 0 and "1 unchanged" in again.stdout


def test_ingest_prune_of_a_folder_whose_files_are_all_gone_exits_0(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Alpha\n\nThe dispatch API.\n", encoding="utf-8")
    assert run("--home", "kb", "ingest", "docs", cwd=tmp_path).returncode == 0
    (tmp_path / "docs" / "a.md").unlink()
    p = run("--home", "kb", "ingest", "docs", "--prune", cwd=tmp_path)
    assert p.returncode == 0, p.stderr  # the pruning was the work asked for
    assert "pruned" in p.stdout


def test_ingest_help_documents_the_exit_codes(tmp_path):
    out = run("ingest", "--help", cwd=tmp_path).stdout
    assert "Exit status" in out and "3" in out and "nothing" in out


# --- item 4: --home / --read-only on every subcommand, the subcommand's value wins -----------------------------

def test_init_home_after_the_subcommand(tmp_path):
    p = run("init", "--home", "kb-after", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "kb-after" / "graph.db").is_file()
    assert not (tmp_path / ".graphmem").exists()


def test_home_after_a_nested_subcommand_and_subcommand_value_wins(tmp_path):
    (tmp_path / "a.md").write_text("# Alpha\n\nThe dispatch API calls the ledger database.\n", encoding="utf-8")
    assert run("ingest", "a.md", "--home", "kb1", cwd=tmp_path).returncode == 0
    listed = run("--home", "kb-other", "docs", "list", "--home", "kb1", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [d["title"] for d in json.loads(listed.stdout)] == ["Alpha"]
    assert not (tmp_path / "kb-other").exists()
    wiki = run("wiki", "list", "--home", "kb1", "--json", cwd=tmp_path)
    assert wiki.returncode == 0, wiki.stderr


def test_home_on_subcommand_beats_the_environment(tmp_path):
    run("init", "--home", "kb1", cwd=tmp_path)
    p = run("stats", "--home", "kb1", "--json", cwd=tmp_path, env_extra={"GRAPHMEM_HOME": str(tmp_path / "kb-env")})
    assert p.returncode == 0, p.stderr
    assert Path(json.loads(p.stdout)["home"]).name == "kb1"


def test_json_before_the_subcommand(tmp_path):
    run("init", "--home", "kb", cwd=tmp_path)
    p = run("--json", "--home", "kb", "stats", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["documents"] == 0


def test_read_only_after_the_subcommand_refuses_writes(tmp_path):
    run("init", "--home", "kb", cwd=tmp_path)
    p = run("entity", "add", "Dispatch API", "--home", "kb", "--read-only", cwd=tmp_path)
    _no_traceback(p)
    assert p.returncode == 1
    assert "read-only" in p.stderr
    stats = json.loads(run("stats", "--home", "kb", "--json", cwd=tmp_path).stdout)
    assert stats["entities"] == 0


# --- item 5: local model folders are stored absolute; a missing folder fails loudly -----------------------------

def _fake_model_dir(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}", encoding="utf-8")
    return path


def test_init_stores_a_relative_model_folder_as_an_absolute_path(tmp_path):
    _fake_model_dir(tmp_path / "models" / "mini")
    p = run("init", "--home", "kb", "--embedder", "model2vec:models/mini", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    cfg = tomllib.loads((tmp_path / "kb" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["embeddings"]["model"] == f"model2vec:{(tmp_path / 'models' / 'mini').resolve()}"


def test_init_keeps_a_hub_id_as_typed(tmp_path):
    p = run("init", "--home", "kb", "--embedder", "model2vec:minishlab/potion-base-8M", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    cfg = tomllib.loads((tmp_path / "kb" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["embeddings"]["model"] == "model2vec:minishlab/potion-base-8M"


def test_init_refuses_a_folder_path_that_does_not_exist(tmp_path):
    p = run("init", "--home", "kb", "--embedder", "model2vec:./models/nope", cwd=tmp_path)
    _no_traceback(p)
    assert p.returncode == 1
    assert "models/nope" in p.stderr and "not found" in p.stderr
    assert not (tmp_path / "kb").exists()


def test_configured_model_folder_gone_fails_loudly(tmp_path):
    model = _fake_model_dir(tmp_path / "models" / "mini")
    assert run("init", "--home", "kb", "--embedder", "model2vec:models/mini", cwd=tmp_path).returncode == 0
    model.rename(tmp_path / "models" / "moved")
    (tmp_path / "a.md").write_text("# Alpha\n\nThe dispatch API.\n", encoding="utf-8")
    # no GRAPHMEM_EMBED_MODEL here: config.toml's model is the one in force
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")} | {"HF_HUB_OFFLINE": "1"}
    p = run_cli(["--home", "kb", "search", "dispatch"], cwd=tmp_path, env=env)
    _no_traceback(p)
    assert p.returncode == 1
    assert str(model.resolve()) in p.stderr
    assert "--embedder" in p.stderr


# --- item 9: warnings shown in text mode ----------------------------------------------------------------------

def test_text_summary_shows_the_first_warnings_and_counts_the_rest():
    from graphmem.cli import _render_summary

    warnings = [f"doc{i}: entity 'x{i}' has no supporting text in the document" for i in range(8)]
    summary = {"documents": 8, "added": 8, "new_versions": 0, "unchanged": 0, "skipped": [], "failed": [],
               "chunks": 8, "entities": 1, "relations": 0, "mentions": 0, "warnings_count": 8,
               "warnings": warnings, "pruned": [], "elapsed_s": 0.1, "docs_per_s": 80.0, "interrupted": False,
               "extractor": "offline"}
    text = _render_summary(summary)
    assert "warning doc0: entity 'x0'" in text and "warning doc4:" in text
    assert "doc5:" not in text
    assert "and 3 more warnings" in text


def _skill(root: Path, name: str, description: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{description}\n",
                                     encoding="utf-8")


def test_skills_build_reports_progress_and_its_slow_steps(tmp_path):
    for i in range(3):
        _skill(tmp_path / "skills", f"pdf-tool-{i}", f"Fill and merge PDF forms, variant {i}")
    p = run("--home", "kb", "skills", "build", "skills", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "skills: 3/3" in p.stderr
    assert "skills: embedding 3 skills" in p.stderr
    assert "3 added" in p.stdout


def test_ingest_says_when_it_updates_the_wiki_after_the_last_document(tmp_path):
    (tmp_path / "a.md").write_text("# Alpha\n\nThe dispatch API calls the ledger database.\n", encoding="utf-8")
    p = run("--home", "kb", "ingest", "a.md", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert "ingest: updating wiki pages" in lines, lines
    last_document = max(i for i, ln in enumerate(lines) if ln.startswith("ingest: 1/1"))
    assert lines.index("ingest: updating wiki pages") > last_document


def test_memory_backfill_reports_progress(tmp_path):
    assert run("--home", "kb", "memory", "add", "I prefer tea", "--user", "u1", cwd=tmp_path).returncode == 0
    assert run("--home", "kb", "memory", "add", "I live in Paris", "--user", "u1", cwd=tmp_path).returncode == 0
    p = run("--home", "kb", "memory", "backfill", "--user", "u1", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "backfill: 2/2" in p.stderr


# --- item 10 (CLI parts) ------------------------------------------------------------------------------------

EMPTY_QUERY_COMMANDS = [
    ("search", "{q}"), ("query", "{q}"), ("docs", "search", "{q}"), ("wiki", "search", "{q}"),
    ("memory", "search", "{q}", "--user", "u1"), ("skills", "query", "{q}"), ("skills", "prompt", "{q}"),
]


@pytest.mark.parametrize("command", EMPTY_QUERY_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("query", ["", "   "], ids=["empty", "blank"])
def test_empty_query_is_one_clear_error_in_every_command(tmp_path, command, query):
    p = run("--home", "kb", *[query if a == "{q}" else a for a in command], cwd=tmp_path)
    _no_traceback(p)
    assert p.returncode == 1
    assert p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith("error: the query is empty"), p.stderr


def test_errors_name_cli_commands_not_python_calls(tmp_path):
    run("init", "--home", "kb", cwd=tmp_path)
    p = run("--home", "kb", "entity", "show", "Nothing Here", cwd=tmp_path)
    assert p.returncode == 1
    assert "add_node(" not in p.stderr
    assert "graphmem entity add" in p.stderr
    p = run("--home", "kb", "relation", "add", "Nothing Here", "calls", "Other", cwd=tmp_path)
    assert p.returncode == 1 and "add_node(" not in p.stderr
    p = run("--home", "kb", "memory", "show", "no-such-memory", cwd=tmp_path)
    assert p.returncode == 1 and "get_all(" not in p.stderr and "graphmem memory list" in p.stderr


def test_cli_wording_translates_the_scope_message():
    from graphmem.cli.speak import cli_wording
    from graphmem.errors import InvalidInput
    from graphmem.memory.scope import require_scope

    with pytest.raises(InvalidInput) as err:
        require_scope({}, True, "add")
    said = cli_wording(str(err.value))
    assert "user_id" not in said and "--user, --agent, --run, --tenant" in said


@pytest.fixture
def examples_kb(tmp_path):
    p = run("--home", "kb", "ingest", str(EXAMPLES), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    run("--home", "kb", "wiki", "sync", cwd=tmp_path)
    return tmp_path


def test_k_is_the_total_number_of_hits_over_all_kinds(examples_kb):
    p = run("--home", "kb", "search", "dispatch outage", "-k", "5", "--kind", "chunk", "--kind", "entity",
            "--kind", "document", "--json", cwd=examples_kb)
    assert p.returncode == 0, p.stderr
    hits = json.loads(p.stdout)["hits"]
    assert len(hits) == 5
    assert len({h["kind"] for h in hits}) >= 2  # shared between the kinds, not the first kind's 5
    text = run("--home", "kb", "search", "dispatch outage", "-k", "5", "--kind", "chunk", "--kind", "entity",
               cwd=examples_kb).stdout
    assert sum(1 for ln in text.splitlines() if ln[:3].strip().rstrip(".").isdigit()) == 5
    assert "total" in run("search", "--help", cwd=examples_kb).stdout


def test_scores_print_as_numbers_a_person_can_compare(examples_kb):
    for command in (("docs", "search", "PgBouncer"), ("wiki", "search", "PgBouncer")):
        p = run("--home", "kb", *command, cwd=examples_kb)
        assert p.returncode == 0, p.stderr
        assert not re.search(r"\d\.?\d*e[-+]\d", p.stdout), p.stdout  # no 2.75e-06
        first = p.stdout.splitlines()[0]
        assert first.startswith("1.00 "), first  # the best hit is 1.00, the others a share of it


# --- SkillGraph's own CLI spellings -------------------------------------------------------------------------

def test_skillgraph_spellings_build_skills_dir_and_query_top_k(tmp_path):
    for i in range(4):
        _skill(tmp_path / "skills", f"pdf-tool-{i}", f"Fill and merge PDF forms, variant {i}")
    for i in range(8):  # more than top_k * skills.return_all_factor, so --top-k is what limits the answer
        _skill(tmp_path / "skills", f"calendar-{i}", f"Book meetings in a calendar, variant {i}")
    p = run("--home", "kb", "skills", "build", "--skills-dir", "skills", "--backend", "local", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    q = run("--home", "kb", "skills", "query", "merge pdf forms", "--top-k", "2", "--json", cwd=tmp_path)
    assert q.returncode == 0, q.stderr
    assert len(json.loads(q.stdout)) == 2


def test_skills_build_backend_and_missing_folder_errors_are_clear(tmp_path):
    _skill(tmp_path / "skills", "pdf-tool", "Fill PDF forms")
    p = run("--home", "kb", "skills", "build", "--skills-dir", "skills", "--backend", "bogus", cwd=tmp_path)
    _no_traceback(p)
    assert p.returncode == 1 and "backend 'bogus'" in p.stderr
    p = run("--home", "kb", "skills", "build", "--backend", "local", cwd=tmp_path)
    assert p.returncode == 1 and "--skills-dir" in p.stderr
