"""``graphmem entity retype NAME TYPE``: the command the ingest's type-conflict warning names."""

from __future__ import annotations

import click

from .app import _emit, _open, entity, handle_errors, json_option

__all__ = ["entity_retype"]


@entity.command("retype")
@click.argument("name")
@click.argument("type_", metavar="TYPE")
@json_option
@click.pass_context
@handle_errors
def entity_retype(ctx: click.Context, name: str, type_: str, as_json: bool) -> None:
    """Give entity NAME (name, alias or id) the type TYPE (normalised: "Bug" -> issue)."""
    kb = _open(ctx)
    _emit(kb.graph.retype(name, type_), as_json,
          lambda r: f"entity {r['name']} ({r['id']}): type {r['old_type']} -> {r['type']}")
