"""``graphmem status`` (where the store lives) and ``graphmem migrate --to TARGET`` (copy it to another
backend); graphmem.portability.migrate does the work."""

from __future__ import annotations

import click

from .app import _emit, _open, handle_errors, json_option

__all__ = ["status_cmd", "migrate_cmd"]


@click.command("status")
@json_option
@click.pass_context
@handle_errors
def status_cmd(ctx: click.Context, as_json: bool) -> None:
    """Where the knowledge base lives: folder, store backend and (PostgreSQL) url without its password."""
    kb = _open(ctx, check_model=False)
    _emit(kb.status(), as_json,
          lambda d: f"knowledge base {d['home']}: {d['backend']} store "
                    + (f"at {d['store_url']} (from {d['store_origin']})" if d["store_url"] else "in graph.db")
                    + (", read-only" if d["read_only"] else "") + f", {d['migrations']} migrations applied")


@click.command("migrate")
@click.option("--to", "target", required=True, metavar="TARGET",
              help="postgresql://user@host/db (an empty database) or a new folder (a SQLite knowledge base).")
@click.option("--queries", default=20, show_default=True, type=click.IntRange(0, 1000),
              help="Searches compared between the two (document titles, then entity names).")
@json_option
@click.pass_context
@handle_errors
def migrate_cmd(ctx: click.Context, target: str, queries: int, as_json: bool) -> None:
    """Copy the knowledge base (--home) to TARGET and verify it: rows per table and top-10 searches.

    The target must be empty (nothing is mixed). Exit status 1 when the verification finds a difference.
    Afterwards point folders at a database with `graphmem --home DIR init --store URL`."""
    kb = _open(ctx, check_model=False)
    # Imported here: graphmem.portability pulls in the change feed's sinks (urllib, http) that no other
    # command needs at start-up (tests/test_cli_lazy_imports.py).
    from ..portability.migrate import migrate, render

    data = migrate(kb.ctx, target, queries)
    _emit(data, as_json, render)
    if not data["ok"]:
        ctx.exit(1)
