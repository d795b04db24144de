"""``graphmem export``, ``import FILE``, ``backup``, ``restore``, ``check``: a knowledge base moved, copied
and checked (graphmem.portability does the work)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..config import set_config_value
from .agent_io import import_group as memory_import_group
from .app import _emit, _open, handle_errors, json_option

# graphmem.portability's FORMATS, spelled out: importing that package (its graph formats and the
# change feed) for every command's option list is most of what a cold CLI process imports
# beyond what it runs. tests/test_cli_lazy_imports.py checks the two stay equal.
EXPORT_FORMATS = ("jsonl", "graphml", "cypher", "csv", "memory-jsonl")

__all__ = ["export_cmd", "import_group", "backup_cmd", "restore_cmd", "check_cmd"]


class _FileOrCommand(click.Group):
    """``graphmem import FILE`` loads a graphmem export; ``graphmem import memory-jsonl FILE`` and the other
    named imports stay subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = next((a for a in args if not a.startswith("-")), None)
        if first is not None and first not in self.commands:
            args = ["jsonl", *args]
        return super().parse_args(ctx, args)


@click.group("import", cls=_FileOrCommand)
def import_group() -> None:
    """Import a graphmem export (`graphmem import FILE`) or another tool's file (subcommands)."""


for _name, _command in memory_import_group.commands.items():
    import_group.add_command(_command, _name)


@import_group.command("jsonl")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@json_option
@click.pass_context
@handle_errors
def import_jsonl_cmd(ctx: click.Context, file: Path, as_json: bool) -> None:
    """Load FILE, written by `graphmem export --format jsonl`, into an empty knowledge base (one transaction:
    a bad line imports nothing)."""
    from ..portability import import_jsonl, read_export

    records = read_export(file)  # a bad file is refused before the knowledge base is created
    new_folder = not (ctx.obj["home"] / "config.toml").exists()
    model = records[0].get("embeddings_model")
    # A new folder takes the export's embedding model (its vectors were made with it); an existing one keeps
    # its own settings, and a search there says how to match them if they differ.
    kb = _open(ctx, create=True, check_model=not (new_folder and isinstance(model, str)),
               config={"embeddings": {"model": model}} if new_folder and isinstance(model, str) else None)
    if new_folder and isinstance(model, str):
        set_config_value(kb.home, "embeddings", "model", model)
    _emit(import_jsonl(kb.ctx, file, records), as_json,
          lambda d: f"imported {sum(d['rows'].values())} rows and {d['files']} wiki files from {d['file']}")


def _scope(user: str | None, agent: str | None, run: str | None, tenant: str | None) -> dict[str, str] | None:
    scope = {k: v for k, v in (("user_id", user), ("agent_id", agent), ("run_id", run), ("tenant_id", tenant))
             if v is not None}
    return scope or None


@click.command("export")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="jsonl", show_default=True,
              help="jsonl: lossless (import it back); graphml: networkx/Gephi; cypher: cypher-shell; csv: "
                   "neo4j-admin import (a folder); memory-jsonl: the MCP memory server's file.")
@click.option("--user", default=None, help="Only this user's memories (graph formats).")
@click.option("--agent", default=None, help="Only this agent's memories (graph formats).")
@click.option("--run", default=None, help="Only this run's memories (graph formats).")
@click.option("--tenant", default=None, help="Only this tenant's memories (graph formats).")
@json_option
@click.pass_context
@handle_errors
def export_cmd(ctx: click.Context, out: Path, fmt: str, user: str | None, agent: str | None, run: str | None,
               tenant: str | None, as_json: bool) -> None:
    """Write the knowledge base to OUT."""
    kb = _open(ctx)
    from ..portability import export

    _emit(export(kb.ctx, fmt, out, _scope(user, agent, run, tenant)), as_json,
          lambda d: f"exported {d['format']} to {d['out']}: " + ", ".join(f"{v} {k}" for k, v in d["counts"].items()))


@click.command("backup")
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@json_option
@click.pass_context
@handle_errors
def backup_cmd(ctx: click.Context, out: Path, as_json: bool) -> None:
    """Copy the knowledge base to the new folder OUT while others may write (graph.db, wiki/, config.toml)."""
    kb = _open(ctx)
    from ..portability import backup

    _emit(backup(kb.ctx, out), as_json,
          lambda d: f"backed up to {d['out']}: graph.db {d['graph_db_bytes']} bytes, {d['wiki_files']} wiki files "
                    f"(up to event {d['last_event_id']})")


@click.command("restore")
@click.argument("backup_dir", metavar="BACKUP", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Move an existing knowledge base aside (<home>.before-restore).")
@json_option
@click.pass_context
@handle_errors
def restore_cmd(ctx: click.Context, backup_dir: Path, force: bool, as_json: bool) -> None:
    """Restore the knowledge base (--home) from BACKUP, a folder `graphmem backup` wrote."""
    from ..kb import read_only_from_env
    from ..portability import restore

    read_only = bool(ctx.obj.get("read_only")) or read_only_from_env()  # the same switch as every other command's
    _emit(restore(backup_dir, ctx.obj["home"], force, read_only=read_only), as_json,
          lambda d: f"restored {d['home']} ({d['wiki_files']} wiki files)"
                    + (f"; the old one is at {d['moved_aside']}" if d["moved_aside"] else "")
                    + "".join(f"\nnote: {n}" for n in d["notes"]))


def _render_check(d: dict[str, Any]) -> str:
    if d["ok"]:
        return "ok: integrity, full-text and vector indexes, evidence, wiki files and temp files all consistent"
    lines = [f"{d['problems']} problem(s){' (repaired)' if d['repaired'] else ''}:"]
    for key in ("integrity", "fts", "vectors", "evidence", "wiki", "temp_files"):
        lines += [f"  {key}: {p}" for p in d[key]]
    return "\n".join(lines)


@click.command("check")
@click.option("--repair", is_flag=True, help="Rebuild indexes, drop dangling rows, remove stale temp files.")
@json_option
@click.pass_context
@handle_errors
def check_cmd(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Check the knowledge base's consistency (exit status 1 when a problem is found and not repaired)."""
    kb = _open(ctx)
    from ..portability import check

    data = check(kb.ctx, repair)
    _emit(data, as_json, _render_check)
    if not data["ok"] and not repair:
        ctx.exit(1)
