"""``graphmem import memory-jsonl FILE`` (the official memory server's file) and ``graphmem skill
install`` (graphmem's own Agent Skill into a project)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import click

from ..errors import InvalidInput
from ..skills.spec import check_skill_file
from .app import _emit, _open, handle_errors, json_option

__all__ = ["import_group", "skill", "bundled_skill"]


@click.group("import")
def import_group() -> None:
    """Bring knowledge from other tools' files."""


def _imported(d: dict[str, Any]) -> str:
    lines = [f"{d['entities_created']} entities, {d['relations_created']} relations, "
             f"{d['observations_added']} observations imported"]
    lines += [f"skipped: {s}" for s in d["skipped"]]
    return "\n".join(lines)


@import_group.command("memory-jsonl")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@json_option
@click.pass_context
@handle_errors
def import_memory_jsonl(ctx: click.Context, file: Path, as_json: bool) -> None:
    """Import the official MCP memory server's memory.jsonl (entity and relation lines); every line is
    checked first, and a bad one imports nothing."""
    kb = _open(ctx, create=True)
    from ..mcp.memory_graph import MemoryGraph

    _emit(MemoryGraph(kb).import_jsonl(file).to_dict(), as_json, _imported)


def bundled_skill() -> Path:
    """graphmem's own Agent Skill folder, shipped inside the package (``graphmem/agent_skill/graphmem``;
    the repository's ``skills/graphmem`` links to it), so a plain ``pip install`` has it too."""
    folder = Path(__file__).resolve().parents[1] / "agent_skill" / "graphmem"
    if not (folder / "SKILL.md").is_file():
        raise InvalidInput(f"graphmem's Agent Skill is missing from this installation ({folder}); "
                           "reinstall graphmem")
    return folder


@click.group("skill")
def skill() -> None:
    """graphmem's own Agent Skill (how an agent should use graphmem)."""


@skill.command("install")
@click.option("--dir", "target_dir", type=click.Path(file_okay=False), default=".agents/skills", show_default=True,
              help="The project's skills folder (e.g. .claude/skills for Claude Code).")
@click.option("--force", is_flag=True, help="Replace an existing copy.")
@json_option
@handle_errors
def skill_install(target_dir: str, force: bool, as_json: bool) -> None:
    """Copy graphmem's Agent Skill (SKILL.md and references/) into DIR/graphmem."""
    if not target_dir.strip():  # Path("") is the current folder: not what an empty --dir meant
        raise InvalidInput("--dir: give the project's skills folder (e.g. .claude/skills), not an empty path")
    source = bundled_skill()
    problems = check_skill_file(source)
    if problems:
        raise InvalidInput(f"the bundled skill breaks the Agent Skills spec: {'; '.join(problems)}")
    dest = Path(target_dir) / "graphmem"
    if dest.is_symlink():  # rmtree refuses a link (its OSError has no strerror): say what to do
        raise InvalidInput(f"{dest} is a symbolic link; graphmem does not write through it: remove the link, or "
                           "give --dir the folder it points to")
    if dest.exists() and not force:
        raise InvalidInput(f"{dest} exists; pass --force to replace it")
    try:
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    except OSError as exc:
        raise InvalidInput(f"cannot copy the skill to {dest}: {exc.strerror or exc}") from None
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    _emit({"path": str(dest.resolve()), "files": files}, as_json,
          lambda d: f"installed graphmem's skill in {d['path']} ({len(d['files'])} files)")
