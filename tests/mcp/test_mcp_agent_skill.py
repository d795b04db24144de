"""graphmem's own Agent Skill, the Agent Skills spec checks behind `skills info`, and `skill install`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphmem.skills.spec import check_skill_file, spec_violations

REPO = Path(__file__).resolve().parents[2]
OWN = REPO / "skills" / "graphmem"


def gm(tmp: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env["GRAPHMEM_EMBED_MODEL"] = "none"
    return subprocess.run([sys.executable, "-m", "graphmem", "--home", str(tmp / "kb"), *args], capture_output=True,
                          text=True, env=env, cwd=str(cwd or tmp), timeout=120)


def test_graphmem_skill_passes_the_spec_and_names_its_references() -> None:
    assert check_skill_file(OWN) == []
    text = (OWN / "SKILL.md").read_text(encoding="utf-8")
    for ref in ("ingestion.md", "ontology.md", "query.md", "lint.md"):
        assert (OWN / "references" / ref).is_file()
        assert f"references/{ref}" in text  # the body points at every reference file
    assert "license: MIT" in text


GOOD = {"name": "pdf-tools", "description": "Fill PDF forms. Use when a form must be filled."}


@pytest.mark.parametrize("change,field", [
    ({"name": "PDF_Tools"}, "name"),
    ({"name": "-pdf"}, "name"),
    ({"name": "pdf--tools"}, "name"),
    ({"name": "a" * 65}, "name"),
    ({"name": None}, "name"),
    ({"description": ""}, "description"),
    ({"description": "x" * 1025}, "description"),
    ({"compatibility": "y" * 501}, "compatibility"),
    ({"metadata": {"version": 2}}, "metadata"),
    ({"metadata": ["a"]}, "metadata"),
    ({"allowed-tools": ["Read", "Bash"]}, "allowed-tools"),
    ({"license": ""}, "license"),
])
def test_each_spec_rule_is_reported_by_field(change: dict[str, object], field: str) -> None:
    fm = {**GOOD, **change}
    problems = spec_violations(fm, "pdf-tools" if field != "name" else None)
    assert len(problems) == 1 and problems[0].startswith(f"{field}:"), problems


def test_a_conforming_skill_has_no_violations_and_the_folder_must_match() -> None:
    full = {**GOOD, "license": "Apache-2.0", "compatibility": "Needs poppler", "metadata": {"author": "x"},
            "allowed-tools": "Read Bash(pdftk:*)"}
    assert spec_violations(full, "pdf-tools") == []
    assert spec_violations(full, "pdf")[0].startswith("name: 'pdf-tools' differs from its folder 'pdf'")
    assert spec_violations({**GOOD, "description": "d" * 1024}, "pdf-tools") == []


def test_skills_info_reports_violations(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    (root / "good-skill").mkdir(parents=True)
    (root / "good-skill" / "SKILL.md").write_text("---\nname: good-skill\ndescription: Does good things.\n---\nBody\n")
    (root / "Bad_Skill").mkdir()
    (root / "Bad_Skill" / "SKILL.md").write_text("---\nname: Bad_Skill\ndescription: " + "z" * 1100 + "\n---\nBody\n")
    assert gm(tmp_path, "skills", "build", str(root)).returncode == 0
    p = gm(tmp_path, "skills", "info", "--json")
    assert p.returncode == 0, p.stderr
    violations = json.loads(p.stdout)["spec_violations"]
    assert list(violations) == ["Bad_Skill"]
    assert [v.split(":")[0] for v in violations["Bad_Skill"]] == ["name", "description"]
    human = gm(tmp_path, "skills", "info").stdout
    assert "1 skills break the Agent Skills spec" in human and "Bad_Skill: name:" in human


def test_skill_install_copies_the_skill_into_a_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    p = gm(tmp_path, "skill", "install", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    dest = project / ".agents" / "skills" / "graphmem"
    assert Path(out["path"]) == dest.resolve()
    assert sorted(out["files"]) == sorted(q.relative_to(OWN).as_posix() for q in OWN.rglob("*") if q.is_file())
    assert (dest / "SKILL.md").read_text(encoding="utf-8") == (OWN / "SKILL.md").read_text(encoding="utf-8")
    assert check_skill_file(dest) == []
    again = gm(tmp_path, "skill", "install", cwd=project)
    assert again.returncode == 1 and "--force" in again.stderr
    (dest / "SKILL.md").write_text("changed", encoding="utf-8")
    assert gm(tmp_path, "skill", "install", "--force", "--dir", ".agents/skills", cwd=project).returncode == 0
    assert (dest / "SKILL.md").read_text(encoding="utf-8") == (OWN / "SKILL.md").read_text(encoding="utf-8")
    claude = gm(tmp_path, "skill", "install", "--dir", ".claude/skills", cwd=project)
    assert claude.returncode == 0 and (project / ".claude" / "skills" / "graphmem" / "references" / "lint.md").is_file()


def test_the_skill_ships_inside_the_package_so_a_plain_install_has_it() -> None:
    # `pip install graphmem` (no source tree) must still find it: the files live in the package and
    # the repository's skills/graphmem is a link to them; pyproject lists them as package data.
    import tomllib

    import graphmem
    from graphmem.cli.agent_io import bundled_skill

    package = Path(graphmem.__file__).resolve().parent
    assert bundled_skill() == package / "agent_skill" / "graphmem"
    assert OWN.resolve() == bundled_skill()
    globs = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["graphmem"]
    shipped = {p.relative_to(package).as_posix() for g in globs for p in package.glob(g)}
    wanted = {p.relative_to(package).as_posix() for p in bundled_skill().rglob("*") if p.is_file()}
    assert wanted and wanted <= shipped


def test_skill_install_refuses_an_empty_dir_and_a_linked_destination(tmp_path: Path) -> None:
    """--dir '' installed into ./graphmem; a symlinked DIR/graphmem with --force said 'cannot copy ...: None'."""
    project = tmp_path / "project"
    project.mkdir()
    empty = gm(tmp_path, "skill", "install", "--dir", "", cwd=project)
    assert empty.returncode == 1 and "--dir: give the project's skills folder" in empty.stderr
    assert not (project / "graphmem").exists()
    (project / "d3").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (project / "d3" / "graphmem").symlink_to(tmp_path / "elsewhere")
    linked = gm(tmp_path, "skill", "install", "--dir", "d3", "--force", cwd=project)
    assert linked.returncode == 1 and "is a symbolic link" in linked.stderr and "None" not in linked.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == []
