"""Issue 12, defects 3 and 9 (skills part): ``skills build`` does not follow symlinks unless told
to (and says what it skipped, naming the flag), never hangs on a loop or a FIFO, and never reads
a SKILL.md over ``[skills] max_skill_kb`` (checked before reading; the file is skipped with a
warning naming the file and the key)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import graphmem
from graphmem.config import DEFAULTS
from graphmem.errors import InvalidInput, NotFound

pytestmark = pytest.mark.reliability

SHARED_SKILLS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "skills"


def skill(root: Path, rel: str, name: str, description: str = "does a thing", body: str = "Body.\n") -> Path:
    folder = root / rel
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the skills tree holding a secret SKILL.md and a secret file."""
    out = tmp_path / "outside"
    skill(out, "secret-skill", "secret-skill", "zanzibar secret description")
    (out / "id_rsa").write_text("---\nname: stolen\ndescription: zanzibar private key\n---\nKEY\n")
    return out


@pytest.fixture
def tree(tmp_path: Path, outside: Path) -> Path:
    root = tmp_path / "skills"
    skill(root, "col/real", "real", "a real skill")
    (root / "col" / "linked-file").mkdir(parents=True)
    (root / "col" / "linked-file" / "SKILL.md").symlink_to(outside / "id_rsa")
    (root / "col" / "linked-folder").symlink_to(outside / "secret-skill", target_is_directory=True)
    return root


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env["GRAPHMEM_EMBED_MODEL"] = "none"
    return subprocess.run([sys.executable, "-m", "graphmem", "--home", str(home), *args], capture_output=True,
                          text=True, env=env, timeout=120)


# -- symlinks ------------------------------------------------------------------------------------


def test_symlinked_files_and_folders_are_skipped_and_reported(kb: graphmem.KnowledgeBase, tree: Path) -> None:
    res = kb.skills.build([tree])
    assert res.added == ["col/real"]
    skipped = {Path(s["path"]).relative_to(tree).as_posix(): s["reason"] for s in res.to_dict()["skipped"]}
    assert set(skipped) == {"col/linked-file/SKILL.md", "col/linked-folder"}
    assert all("symlink" in r and "--follow-symlinks" in r for r in skipped.values()), skipped
    for sid in ("col/linked-file", "col/linked-folder"):
        with pytest.raises(NotFound):
            kb.skills.get(sid)
    assert not [h for h in kb.skills.retrieve("zanzibar", 8) if h.id != "col/real"]
    rows = kb.store.skill_files(str(tree))
    assert set(rows) == {"col/real"}


def test_follow_symlinks_indexes_them(kb: graphmem.KnowledgeBase, tree: Path) -> None:
    res = kb.skills.build([tree], follow_symlinks=True)
    assert sorted(res.added) == ["col/linked-file", "col/linked-folder", "col/real"]
    assert res.skipped == []
    assert kb.skills.get("col/linked-folder")["description"] == "zanzibar secret description"


def test_a_skill_indexed_through_a_link_is_removed_when_links_are_not_followed(kb: graphmem.KnowledgeBase,
                                                                                tree: Path) -> None:
    kb.skills.build([tree], follow_symlinks=True)
    res = kb.skills.build([tree])
    assert sorted(res.removed) == ["col/linked-file", "col/linked-folder"]
    with pytest.raises(NotFound):
        kb.skills.get("col/linked-file")


def test_loops_end_when_following(kb: graphmem.KnowledgeBase, tmp_path: Path) -> None:
    root = tmp_path / "loopy"
    skill(root, "a/one", "one")
    (root / "a" / "one" / "back").symlink_to(root, target_is_directory=True)  # a cycle to the root
    (root / "a" / "self").symlink_to(root / "a", target_is_directory=True)  # and to its own parent
    (root / "a" / "twin").symlink_to(root / "a" / "one", target_is_directory=True)  # the same folder twice
    res = kb.skills.build([root], follow_symlinks=True)
    assert res.added == ["a/one"] and res.scanned == 1
    res = kb.skills.build([root])
    assert res.unchanged == 1 and len(res.skipped) == 3


def test_a_fifo_named_skill_md_does_not_hang(kb: graphmem.KnowledgeBase, tmp_path: Path) -> None:
    root = tmp_path / "fifo"
    skill(root, "c/good", "good")
    (root / "c" / "pipe").mkdir()
    os.mkfifo(root / "c" / "pipe" / "SKILL.md")
    res = kb.skills.build([root], follow_symlinks=True)  # following or not, never opened for a blocking read
    assert res.added == ["c/good"]
    assert [s["reason"] for s in res.to_dict()["skipped"]] == ["not a regular file; skipped"]


def test_show_does_not_read_through_a_link_planted_after_the_build(kb: graphmem.KnowledgeBase, tmp_path: Path,
                                                                  outside: Path) -> None:
    root = tmp_path / "s"
    path = skill(root, "c/x", "x", "the x skill", "original body\n")
    kb.skills.build([root])
    path.unlink()
    path.symlink_to(outside / "id_rsa")
    shown = kb.skills.show("c/x")
    assert "KEY" not in shown and "original body" in shown


def test_cli_follow_symlinks_flag_and_summary(tmp_path: Path, tree: Path) -> None:
    home = tmp_path / "kb"
    p = run_cli(home, "skills", "build", str(tree))
    assert p.returncode == 0, p.stderr
    assert "linked-folder" in p.stdout and "--follow-symlinks" in p.stdout
    p = run_cli(home, "skills", "build", str(tree), "--follow-symlinks", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["added"] == 2 and out["skipped"] == []
    p = run_cli(home, "skills", "rebuild", "--follow-symlinks", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["added"] == 3, p.stderr


# -- size cap -----------------------------------------------------------------------------------


def test_default_cap_is_well_above_real_collections() -> None:
    cap_kb = DEFAULTS["skills"]["max_skill_kb"]
    sizes = [p.stat().st_size for p in SHARED_SKILLS.rglob("SKILL.md")] if SHARED_SKILLS.is_dir() else []
    largest = max(sizes, default=300 * 1024)  # the largest public SKILL.md known: 294 KB
    assert cap_kb * 1024 >= 3 * largest


def test_an_oversized_skill_md_is_skipped_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "s"
    skill(root, "c/small", "small")
    skill(root, "c/huge", "huge", body="word " * 1000)  # ~5 KB
    with graphmem.open(tmp_path / "kb", config={"skills": {"max_skill_kb": 2}}) as kb:
        res = kb.skills.build([root])
        assert res.added == ["c/small"]
        [warning] = [w for w in res.warnings if "huge" in w]
        assert "c/huge/SKILL.md" in warning and "skills.max_skill_kb" in warning
        with pytest.raises(NotFound):
            kb.skills.get("c/huge")


def test_a_skill_grown_over_the_cap_keeps_its_indexed_version(tmp_path: Path) -> None:
    root = tmp_path / "s"
    path = skill(root, "c/grow", "grow", "the first version")
    with graphmem.open(tmp_path / "kb", config={"skills": {"max_skill_kb": 2}}) as kb:
        kb.skills.build([root])
        path.write_text("---\nname: grow\ndescription: the second version\n---\n" + "word " * 1000)
        res = kb.skills.build([root])
        assert res.updated == [] and res.removed == [] and any("c/grow/SKILL.md" in w for w in res.warnings)
        assert kb.skills.get("c/grow")["description"] == "the first version"


def test_a_50_mb_skill_md_is_never_read_into_memory(kb: graphmem.KnowledgeBase, tmp_path: Path) -> None:
    root = tmp_path / "s"
    path = skill(root, "c/giant", "giant")
    with path.open("r+b") as f:  # a sparse 50 MB file: cheap to make, 50 MB to read
        f.truncate(50 * 1024 * 1024)
    skill(root, "c/fine", "fine")
    tracemalloc.start()
    try:
        res = kb.skills.build([root])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res.added == ["c/fine"] and any("c/giant/SKILL.md" in w and "max_skill_kb" in w for w in res.warnings)
    assert peak < 20 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB: the file was read"


@pytest.mark.parametrize("bad", [0, -5])
def test_a_bad_cap_is_invalid_input(tmp_path: Path, bad: int) -> None:
    root = tmp_path / "s"
    skill(root, "c/x", "x")
    with graphmem.open(tmp_path / "kb", config={"skills": {"max_skill_kb": bad}}) as kb:
        with pytest.raises(InvalidInput, match="skills.max_skill_kb"):
            kb.skills.build([root])
        assert kb.skills.info()["skills"] == 0


def test_rebuild_with_a_bad_cap_deletes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "s"
    skill(root, "c/x", "x")
    with graphmem.open(tmp_path / "kb") as kb:
        kb.skills.build([root])
    with graphmem.open(tmp_path / "kb", config={"skills": {"max_skill_kb": 0}}) as kb:
        with pytest.raises(InvalidInput, match="skills.max_skill_kb"):
            kb.skills.rebuild()
        assert kb.skills.info()["skills"] == 1
