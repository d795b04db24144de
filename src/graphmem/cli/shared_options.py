"""``--home`` and ``--read-only`` on every subcommand as well as on the group.

People (and graphmem's own hints) write ``graphmem init --home X``; click only knows options where
they are declared, so the group's options are repeated on every command below it. A value given on
the subcommand wins over the group's (and so over ``GRAPHMEM_HOME``); left out, the group's stands.
"""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

__all__ = ["add_shared_options"]


def _given(ctx: click.Context, param: click.Parameter) -> bool:
    return param.name is not None and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE


def _set_home(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    if value is not None and _given(ctx, param):
        ctx.ensure_object(dict)["home"] = value


def _set_read_only(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and _given(ctx, param):
        ctx.ensure_object(dict)["read_only"] = True


def _shared_params() -> list[click.Parameter]:
    # expose_value=False: the commands keep reading ctx.obj, their signatures do not change
    return [
        click.Option(["--home"], type=click.Path(file_okay=False, path_type=Path), default=None,
                     expose_value=False, callback=_set_home,
                     help="Knowledge base folder (also accepted before the command; this one wins)."),
        click.Option(["--read-only"], is_flag=True, default=False, expose_value=False, callback=_set_read_only,
                     help="Open the knowledge base read-only (also accepted before the command)."),
    ]


def add_shared_options(group: click.Group) -> None:
    """Give every command and sub-group below ``group`` the group's ``--home`` / ``--read-only``."""
    for command in group.commands.values():
        names = {opt for p in command.params for opt in getattr(p, "opts", [])}
        command.params.extend(p for p in _shared_params() if not set(p.opts) & names)
        if isinstance(command, click.Group):
            add_shared_options(command)
