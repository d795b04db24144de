"""Issue 13 item 2: a file is one document wherever the command runs. Ids are paths relative to
the parent of the path given (a folder's files begin with its name; a file given alone is its
name), folders ingested before keep their ids for their subfolders and files, older
working-directory ids are kept, and two files that would share an id in one command are refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import graphmem

REPO = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / ("graphmem.exe" if os.name == "nt" else "graphmem")


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    proj = tmp_path / "proj"
    shutil.copytree(REPO / "examples", proj / "examples")
    (proj / "examples" / "deep").mkdir()
    (proj / "examples" / "deep" / "inner.md").write_text("# Inner\nThe Inner Service uses Redis.\n")
    (tmp_path / "elsewhere" / "further").mkdir(parents=True)
    monkeypatch.chdir(proj)
    return tmp_path


def _count(kb: graphmem.KnowledgeBase) -> int:
    return kb.stats()["documents"]


def test_same_file_from_three_folders_is_one_document(tree, monkeypatch):
    kb_home = tree / "kb"
    with graphmem.open(kb_home) as kb:
        first = kb.ingest_paths(["examples/"])
        n = _count(kb)
        assert first.added == n >= 10
        assert kb.documents.get("examples/dispatch-api.md") is not None
        for cwd, given in ((tree / "elsewhere", "../proj/examples"), (tree / "elsewhere" / "further",
                                                                       str(tree / "proj" / "examples")),
                           (tree / "proj" / "examples", ".")):
            monkeypatch.chdir(cwd)
            again = kb.ingest_paths([given])
            assert (again.added, again.new_versions, again.unchanged) == (0, 0, n), (cwd, given)
            assert _count(kb) == n


def test_subfolder_and_single_file_keep_the_ids_of_their_ingested_folder(tree, monkeypatch):
    with graphmem.open(tree / "kb") as kb:
        n = kb.ingest_paths(["examples"]).added
        sub = kb.ingest_paths(["examples/deep/"])
        one = kb.ingest_paths(["examples/dispatch-api.md"])
        monkeypatch.chdir(tree / "elsewhere")
        far = kb.ingest_paths([tree / "proj" / "examples" / "deep" / "inner.md"])
        assert (sub.added, sub.unchanged, one.added, one.unchanged, far.added, far.unchanged) == (0, 1, 0, 1, 0, 1)
        assert _count(kb) == n and kb.documents.get("examples/deep/inner.md") is not None


def test_parent_after_its_subfolder_keeps_the_subfolder_ids(tree):
    with graphmem.open(tree / "kb") as kb:
        assert kb.ingest_paths(["examples/deep"]).added == 1
        assert kb.documents.get("deep/inner.md") is not None
        whole = kb.ingest_paths(["examples"])
        assert whole.unchanged == 1 and _count(kb) == whole.added + 1


def test_a_file_given_alone_is_its_name(tree, monkeypatch):
    monkeypatch.chdir(tree / "elsewhere")
    with graphmem.open(tree / "kb") as kb:
        kb.ingest_paths([tree / "proj" / "examples" / "dispatch-api.md"])
        assert kb.documents.get("dispatch-api.md") is not None


def test_two_folders_with_one_name_in_one_command_are_refused_and_nothing_is_written(tree):
    for side in ("a", "b"):
        (tree / side / "docs").mkdir(parents=True)
        (tree / side / "docs" / "README.md").write_text(f"# {side}\nThe {side.upper()} service uses Kafka.\n")
    with graphmem.open(tree / "kb") as kb:
        with pytest.raises(graphmem.InvalidInput, match=r"would both be document 'docs/README.md'"):
            kb.ingest_paths([tree / "a" / "docs", tree / "b" / "docs"])
        assert _count(kb) == 0
        both = kb.ingest_paths([tree / "a", tree / "b"])  # their parents give distinct ids
        assert both.added == 2 and kb.documents.get("a/docs/README.md") and kb.documents.get("b/docs/README.md")


def test_an_older_cwd_relative_id_is_kept(tree, monkeypatch):
    """A knowledge base filled before this rule named files relative to the working directory;
    re-ingesting from there must not duplicate them."""
    notes = tree / "proj" / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("The Ledger Service uses Postgres.\n", encoding="utf-8")
    monkeypatch.chdir(tree)
    with graphmem.open(tree / "kb") as kb:
        kb.ingest_with_content("proj/notes/a.txt", "a.txt", "proj/notes/a.txt", "The Ledger Service uses Postgres.\n")
        r = kb.ingest_paths([notes])
        assert (r.added, r.unchanged) == (0, 1) and _count(kb) == 1


def test_prune_from_another_folder_removes_only_deleted_files(tree, monkeypatch):
    with graphmem.open(tree / "kb") as kb:
        n = kb.ingest_paths(["examples"]).added
        (tree / "proj" / "examples" / "deep" / "inner.md").unlink()
        monkeypatch.chdir(tree / "elsewhere")
        r = kb.ingest_paths(["../proj/examples"], prune=True)
        assert r.pruned == ["examples/deep/inner.md"] and _count(kb) == n - 1


def test_cli_help_states_the_id_rule():
    p = subprocess.run([str(SCRIPT), "ingest", "--help"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0
    flat = " ".join(p.stdout.split())
    assert "relative to the folder that holds each PATH" in flat


def test_rst_csv_py_are_read_as_text_and_skipped_files_say_how_to_read_them(tmp_path, monkeypatch):
    """Issue 13 item 10 (reader part): .rst, .csv and .py are text by default; a file that is
    still skipped says why and how to read it anyway."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.rst").write_text("Guide\n=====\n\nThe Guide Service uses Redis.\n")
    (docs / "owners.csv").write_text("service,owner\nDispatch API,team-a\n")
    (docs / "tool.py").write_text('"""The Tool Service uses Kafka."""\n')
    (docs / "image.xyz").write_bytes(b"\x89XYZ\x00\x01")
    monkeypatch.chdir(tmp_path)
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths(["docs"])
        assert s.added == 3
        assert "Dispatch API,team-a" in kb.documents.get("docs/owners.csv").content
        assert "Tool Service uses Kafka" in kb.documents.get("docs/tool.py").content
        [skipped] = s.skipped
        assert skipped.path == "docs/image.xyz"
        assert "unsupported file type '.xyz'" in skipped.reason and "ingest.readers" in skipped.reason


# -- ids shared by files of different folders across separate commands --------------------------


def _two_projects(tree: Path) -> tuple[Path, Path]:
    p1, p2 = tree / "p1" / "docs", tree / "p2" / "docs"
    p1.mkdir(parents=True)
    p2.mkdir(parents=True)
    (p1 / "x.md").write_text("# X\nThe Alpha Service uses Redis.\n")
    (p1 / "only1.md").write_text("# Only\nThe Beta Service uses Kafka.\n")
    (p2 / "x.md").write_text("# X\nThe Gamma Service uses Postgres.\n")
    return p1, p2


def test_a_same_named_folder_ingested_later_is_refused_and_writes_nothing(tree):
    p1, p2 = _two_projects(tree)
    with graphmem.open(tree / "kb") as kb:
        assert kb.ingest_paths([p1]).added == 2
        with pytest.raises(graphmem.InvalidInput) as err:
            kb.ingest_paths([p2])
        msg = str(err.value)
        assert str(p1 / "x.md") in msg and str(p2 / "x.md") in msg and "docs/x.md" in msg
        doc = kb.documents.get("docs/x.md")
        assert doc.version == 1 and "Alpha Service" in doc.content
        assert [d.version for d in kb.documents.versions("docs/x.md")] == [1] and _count(kb) == 2


def test_a_same_named_file_ingested_later_is_refused(tree):
    for side in ("a", "b"):
        (tree / side).mkdir()
        (tree / side / "todo.md").write_text(f"# Todo\nThe {side.upper()} Service uses Redis.\n")
    with graphmem.open(tree / "kb") as kb:
        kb.ingest_paths([tree / "a" / "todo.md"])
        with pytest.raises(graphmem.InvalidInput, match="todo.md"):
            kb.ingest_paths([tree / "b" / "todo.md"])
        doc = kb.documents.get("todo.md")
        assert doc.version == 1 and "A Service" in doc.content
        again = kb.ingest_paths([tree / "a" / "todo.md"])  # the file it came from is still welcome
        assert again.unchanged == 1


def test_prune_of_a_same_named_folder_keeps_the_first_folders_documents(tree):
    p1, p2 = _two_projects(tree)
    (p2 / "x.md").unlink()
    (p2 / "y.md").write_text("# Y\nThe Delta Service uses Redis.\n")
    with graphmem.open(tree / "kb") as kb:
        assert kb.ingest_paths([p1]).added == 2
        r = kb.ingest_paths([p2], prune=True)
        assert r.pruned == [] and r.added == 1
        assert kb.documents.get("docs/only1.md") is not None and kb.documents.get("docs/x.md") is not None
        (p1 / "only1.md").unlink()
        assert kb.ingest_paths([p1], prune=True).pruned == ["docs/only1.md"]
