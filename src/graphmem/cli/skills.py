"""``graphmem skills ...``: build, rebuild, query, prompt, show, info, graph.

SkillGraph's verbs (build, query, show, info, graph, rebuild) so its users find them. Each
command parses its arguments, calls one ``kb.skills`` method and prints the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..compat.skillgraph import BACKENDS, embeddings_config
from ..skills.spec import spec_violations
from .app import _emit, _fail, _open, handle_errors, json_option, query_argument
from .progress import _Progress, _progress_mode

__all__ = ["skills"]


follow_option = click.option(
    "--follow-symlinks", is_flag=True,
    help="Follow symlinked SKILL.md files and folders below DIRS (skipped by default: they can point anywhere).")


@click.group()
def skills() -> None:
    """Agent skills (SKILL.md folders): index them, then hand an agent the few a message needs."""


def _built(d: dict[str, Any]) -> str:
    lines = [f"{d['scanned']} SKILL.md files: {d['added']} added, {d['updated']} updated, {d['unchanged']} unchanged,"
             f" {d['removed']} removed; edges +{d['edges_added']} -{d['edges_removed']} ({d['seconds']:.2f} s)"]
    if d["unresolved_related"]:
        n = sum(len(v) for v in d["unresolved_related"].values())
        lines.append(f"{n} related names name no indexed skill (see `graphmem skills info`)")
    lines += [f"warning: {w}" for w in d["warnings"]]
    lines += [f"skipped: {s['path']}: {s['reason']}" for s in d.get("skipped", [])]
    return "\n".join(lines)


@skills.command("build")
@click.argument("dirs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--skills-dir", "skills_dirs", multiple=True, type=click.Path(path_type=Path),
              help="A folder of skills (SkillGraph's spelling of DIRS; repeatable).")
@click.option("--backend", metavar="NAME",
              help=f"SkillGraph's embedding backend: {', '.join(BACKENDS)} (ollama: the OpenAI-compatible "
                   "embedder at Ollama's default URL), or an embedder SPEC; default: the configured model.")
@click.option("--keep-missing", is_flag=True, help="Keep skills whose SKILL.md is gone.")
@follow_option
@json_option
@click.pass_context
@handle_errors
def skills_build(ctx: click.Context, dirs: tuple[Path, ...], skills_dirs: tuple[Path, ...], backend: str | None,
                 keep_missing: bool, follow_symlinks: bool, as_json: bool) -> None:
    """Index every SKILL.md under DIRS (incremental: unchanged files are skipped)."""
    roots = [*dirs, *skills_dirs]
    if not roots:
        _fail("give the skills folder: graphmem skills build DIR (or --skills-dir DIR)")
    overrides = embeddings_config(backend) if backend is not None else {}
    kb = _open(ctx, create=True, config={"embeddings": overrides} if overrides else None)
    with _Progress(_progress_mode(as_json), label="skills") as progress:
        result = kb.skills.build(roots, prune=not keep_missing, follow_symlinks=follow_symlinks,
                                 on_progress=lambda done, total: progress(done, total, ""), on_stage=progress.stage)
    _emit(result.to_dict(), as_json, _built)


@skills.command("rebuild")
@click.argument("dirs", nargs=-1, type=click.Path(path_type=Path))
@follow_option
@json_option
@click.pass_context
@handle_errors
def skills_rebuild(ctx: click.Context, dirs: tuple[Path, ...], follow_symlinks: bool, as_json: bool) -> None:
    """Drop the skills index and build it again (from DIRS, default the folders built before)."""
    kb = _open(ctx)
    with _Progress(_progress_mode(as_json), label="skills") as progress:
        result = kb.skills.rebuild(list(dirs), follow_symlinks=follow_symlinks,
                                   on_progress=lambda done, total: progress(done, total, ""), on_stage=progress.stage)
    _emit(result.to_dict(), as_json, _built)


def _hits(hits: list[dict[str, Any]]) -> str:
    if not hits:
        return "no skills indexed; run `graphmem skills build DIR`"
    out = []
    for n, h in enumerate(hits, 1):
        via = f"graph from {h['from']}" if h.get("from") else h["via"]
        desc = h["description"] if len(h["description"]) <= 160 else h["description"][:159] + "…"
        out.append(f"{n}. {h['name']}  [{h['id']}]  score {h['score']:.3f} ({via})\n   {desc}\n   {h['path']}")
    return "\n".join(out)


@skills.command("query")
@query_argument()
@click.option("-k", "--top-k", "top_k", type=click.IntRange(min=1), default=None, help="How many skills (default 8).")
@click.option("--strategy", type=click.Choice(["bfs", "ppr", "none"]), default=None, help="Graph expansion.")
@json_option
@click.pass_context
@handle_errors
def skills_query(ctx: click.Context, text: str, top_k: int | None, strategy: str | None, as_json: bool) -> None:
    """The skills a message (TEXT) needs, best first, with how each was found."""
    kb = _open(ctx)
    _emit([h.to_dict() for h in kb.skills.retrieve(text, top_k, strategy=strategy)], as_json, _hits)


@skills.command("prompt")
@query_argument()
@click.option("-k", "--top-k", "top_k", type=click.IntRange(min=1), default=None, help="How many skills (default 8).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "hermes", "claude"]), default="markdown",
              help="markdown (by category), hermes (<available_skills>) or claude (a context file).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the block to this file (e.g. .claude/skills-context.md) instead of printing it.")
@click.option("--all", "all_skills", is_flag=True, help="Every skill (what agents inject today), for comparison.")
@json_option
@click.pass_context
@handle_errors
def skills_prompt(ctx: click.Context, text: str, top_k: int | None, fmt: str, out: Path | None, all_skills: bool,
                  as_json: bool) -> None:
    """The prompt block of the skills TEXT needs, with its token estimate on stderr."""
    kb = _open(ctx)
    block = kb.skills.prompt_all(fmt) if all_skills else kb.skills.prompt(text, top_k, fmt)
    if out is not None:
        kb.skills.write_block(block, out)
    if as_json:
        _emit(block.to_dict() | ({"path": str(out)} if out else {}), True, str)
        return
    if out is None:
        click.echo(block.text, nl=False)
    click.echo(f"{block.skills} skills, ~{block.tokens} tokens" + (f", written to {out}" if out else ""), err=True)


@skills.command("show")
@click.argument("skill_id")
@json_option
@click.pass_context
@handle_errors
def skills_show(ctx: click.Context, skill_id: str, as_json: bool) -> None:
    """Print a skill's full SKILL.md (by id, or by name when unambiguous)."""
    kb = _open(ctx)
    if as_json:
        _emit(kb.skills.get(skill_id), True, str)
    else:
        click.echo(kb.skills.show(skill_id), nl=False)


def _info(d: dict[str, Any]) -> str:
    lines = [f"{d['skills']} skills from {', '.join(d['roots']) or '(none)'}"
             + ("" if d["with_vectors"] else " (no vectors: embeddings are off)"),
             "edges: " + (", ".join(f"{t} {n}" for t, n in sorted(d["edges"].items())) or "none")]
    cats = list(d["categories"].items())
    lines.append(f"{len(cats)} categories: " + ", ".join(f"{c or '(none)'} {n}" for c, n in cats[:15])
                 + (" …" if len(cats) > 15 else ""))
    if d["unresolved_related"]:
        lines.append("related names that name no indexed skill:")
        lines += [f"  {sid}: {', '.join(names)}" for sid, names in sorted(d["unresolved_related"].items())]
    if d.get("spec_violations"):
        lines.append(f"{len(d['spec_violations'])} skills break the Agent Skills spec:")
        lines += [f"  {sid}: {'; '.join(v)}" for sid, v in sorted(d["spec_violations"].items())]
    return "\n".join(lines)


def _violations(skill: Any) -> list[str]:
    skill = skill.to_dict() if hasattr(skill, "to_dict") else skill
    return spec_violations(skill.get("front_matter") or {}, Path(skill["path"]).parent.name)


@skills.command("info")
@json_option
@click.pass_context
@handle_errors
def skills_info(ctx: click.Context, as_json: bool) -> None:
    """Counts, categories, edges by type, unresolved related names and Agent Skills spec violations."""
    kb = _open(ctx)
    info = kb.skills.info().to_dict()  # a face result is read-only; the CLI adds the spec check
    info["spec_violations"] = {e.id: v for e in kb.skills.index().entries
                               if (v := _violations(kb.skills.get(e.id)))}
    _emit(info, as_json, _info)


def _graph(d: dict[str, Any]) -> str:
    lines = [f"{d['name']}  [{d['id']}]  ({d['category']})"]
    for typ, items in d["edges"].items():
        lines.append(f"  {typ}:")
        lines += [f"    - {e['name']}  [{e['id']}]  {e['weight']:.2f}" for e in items]
    if not d["edges"]:
        lines.append("  (no links)")
    return "\n".join(lines)


@skills.command("graph")
@click.argument("skill_id", required=False)
@json_option
@click.pass_context
@handle_errors
def skills_graph(ctx: click.Context, skill_id: str | None, as_json: bool) -> None:
    """A skill's neighbourhood by edge type (no ID: edge counts of the whole skill graph)."""
    kb = _open(ctx)
    if skill_id is None:
        _emit(kb.skills.info(), as_json, _info)
    else:
        _emit(kb.skills.neighbours(skill_id), as_json, _graph)
