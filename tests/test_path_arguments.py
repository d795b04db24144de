"""Path arguments of the library: one path is a list of one, anything else that is not a path is refused by
name, and a folder or link this user may not read is skipped, not a traceback."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import snapshot

import graphmem
from graphmem.errors import InvalidInput


def _folders(root: Path) -> None:
    """``a/``, ``b/`` and ``ab/``: a string iterated letter by letter names the first two."""
    for name, text in (("a", "zebras graze"), ("b", "yaks climb"), ("ab", "the folder that was asked for")):
        (root / name).mkdir(parents=True)
        (root / name / f"{name}.md").write_text(f"# {name}\n\n{text}\n", encoding="utf-8")


def _doc_ids(kb: graphmem.KnowledgeBase) -> list[str]:
    return sorted(d.doc_id for d in kb.documents.list())


def test_one_relative_path_string_ingests_that_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _folders(tmp_path / "work")
    monkeypatch.chdir(tmp_path / "work")
    with graphmem.open(tmp_path / "kb") as kb:
        kb.ingest_paths("ab")
        assert _doc_ids(kb) == ["ab/ab.md"]  # before: ['a/a.md', 'b/b.md'], and ab/ never read


def test_one_absolute_path_string_and_a_path_object(tmp_path: Path) -> None:
    _folders(tmp_path / "work")
    with graphmem.open(tmp_path / "kb") as kb:
        missing = kb.ingest_paths(str(tmp_path / "nothing-here"))  # before: the walk started at "/"
        assert [s.path for s in missing.skipped] == [str(tmp_path / "nothing-here")]
        assert _doc_ids(kb) == []
        kb.ingest_paths(tmp_path / "work" / "b")
        assert _doc_ids(kb) == ["b/b.md"]


@pytest.mark.parametrize(("paths", "named"), [
    ([None], "paths[0] must be a path"),
    (["ok", 5], "paths[1] must be a path"),
    (5, "paths must be a path or a list of paths"),
    (b"/tmp", "paths must be a path or a list of paths"),
    ({"a": 1}, "paths must be a path or a list of paths"),
    ("", "paths is an empty path"),
    (["  "], "paths[0] is an empty path"),
])
def test_what_is_not_a_path_is_refused_by_name(kb: graphmem.KnowledgeBase, paths: Any, named: str) -> None:
    before = snapshot(kb)
    with pytest.raises(InvalidInput, match=r"kb\.ingest_paths: " + named.replace("[", r"\[").replace("]", r"\]")):
        kb.ingest_paths(paths)
    assert snapshot(kb) == before


def test_glob_and_excludes_are_checked_and_one_pattern_is_a_list_of_one(tmp_path: Path) -> None:
    _folders(tmp_path / "work")
    with graphmem.open(tmp_path / "kb") as kb:
        with pytest.raises(InvalidInput, match="glob must be a pattern string"):
            kb.ingest_paths([tmp_path / "work"], glob=5)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="excludes must be a pattern or a list of patterns"):
            kb.ingest_paths([tmp_path / "work"], excludes=5)  # type: ignore[arg-type]
        assert _doc_ids(kb) == []
        kb.ingest_paths([tmp_path / "work"], excludes="a*")
        assert _doc_ids(kb) == ["work/b/b.md"]


def _skill(folder: Path, name: str) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Use when {name} is needed.\n---\n\n# {name}\n",
                                     encoding="utf-8")


def test_skills_build_takes_one_folder_string(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _skill(tmp_path / "work" / "a" / "one", "one")
    _skill(tmp_path / "work" / "ab" / "two", "two")
    monkeypatch.chdir(tmp_path / "work")
    with graphmem.open(tmp_path / "kb") as kb:
        built = kb.skills.build("ab")
        assert built.roots == [str(tmp_path / "work" / "ab")]  # before: the folders "a" and "b"
        assert [h.name for h in kb.skills.retrieve("two is needed", 5)] == ["two"]
        with pytest.raises(InvalidInput, match=r"skills\.build: dirs\[0\] must be a path"):
            kb.skills.build([None])  # type: ignore[list-item]
        with pytest.raises(InvalidInput, match=r"skills\.rebuild: dirs must be a path or a list"):
            kb.skills.rebuild(7)  # type: ignore[arg-type]


def test_a_link_this_user_may_not_look_behind_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pathlib's ``is_dir()`` raises PermissionError (it only swallows "no such file"): a link to
    /proc/1/cwd, or into another user's folder, stopped the CLI's ingest with a traceback."""
    _folders(tmp_path / "work")
    os.symlink(tmp_path / "work" / "a", tmp_path / "work" / "b" / "locked")
    real_stat = Path.stat

    def stat(self: Path, *, follow_symlinks: bool = True) -> os.stat_result:
        if self.name == "locked" and follow_symlinks:
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(Path, "stat", stat)
    with graphmem.open(tmp_path / "kb") as kb:
        done = kb.ingest_paths([tmp_path / "work" / "b"])
        assert _doc_ids(kb) == ["b/b.md"]
        assert [s.path for s in done.skipped] == ["b/locked"]
        given = kb.ingest_paths([tmp_path / "work" / "b" / "locked"])  # the link given as the path itself
        assert [(s.path, "symbolic link" in s.reason) for s in given.skipped] == [
            (str(tmp_path / "work" / "b" / "locked"), True)]


def test_an_unreadable_ignore_file_stops_the_ingest_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _folders(tmp_path / "work")
    (tmp_path / "work" / ".gitignore").write_text("a/\n", encoding="utf-8")
    real_read = Path.read_text

    def read_text(self: Path, *args: Any, **kwargs: Any) -> str:
        if self.name == ".gitignore":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    with graphmem.open(tmp_path / "kb") as kb:
        before = snapshot(kb)
        with pytest.raises(InvalidInput, match=r"cannot read .*\.gitignore \(Permission denied\); fix its permissions"):
            kb.ingest_paths([tmp_path / "work"])
        assert snapshot(kb) == before


def test_the_knowledge_bases_own_folder_is_never_ingested(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``graphmem --home kb ingest .``: the run read kb/wiki's pages (and config.toml, graph.db) back as
    documents, 10 -> 127 -> 356 -> 792 documents over four runs (log.md changes every run)."""
    from graphmem.ingest.discover import OWN_FOLDER

    _folders(tmp_path / "work")
    monkeypatch.chdir(tmp_path / "work")
    with graphmem.open(tmp_path / "work" / "kb") as kb:
        runs = [kb.ingest_paths(".") for _ in range(3)]
        assert _doc_ids(kb) == ["work/a/a.md", "work/ab/ab.md", "work/b/b.md"]  # ids relative to the parent
        assert [(r.added, r.unchanged) for r in runs] == [(3, 0), (0, 3), (0, 3)]
        assert [[(s.path, s.reason) for s in r.skipped] for r in runs] == [[("work/kb", OWN_FOLDER)]] * 3
        inside = kb.ingest_paths([tmp_path / "work" / "kb" / "wiki"])
        assert [s.reason for s in inside.skipped] == [OWN_FOLDER] and len(_doc_ids(kb)) == 3


def test_a_nul_in_a_path_is_a_skipped_path(kb: graphmem.KnowledgeBase) -> None:
    """os calls raise ValueError ('embedded null byte'), which only OSError handlers let through."""
    done = kb.ingest_paths(["a\x00b"])
    assert [(s.path, "NUL" in s.reason) for s in done.skipped] == [("a\x00b", True)]


def test_the_own_folder_reached_through_a_link_is_not_ingested(tmp_path: Path) -> None:
    """The check compared unresolved paths: home at real/kb, ``alias -> real``, alias/kb/wiki was ingested."""
    from graphmem.ingest.discover import OWN_FOLDER

    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    with graphmem.open(tmp_path / "real" / "kb") as kb:
        kb.wiki.write_page("topic", "A page", "Some words.\n")
        done = kb.ingest_paths([tmp_path / "alias" / "kb" / "wiki"], follow_symlinks=True)
        assert [s.reason for s in done.skipped] == [OWN_FOLDER] and _doc_ids(kb) == []
