"""The root ``graphmem`` group and the helpers every command module uses.

Command modules (``cli/__init__.py`` for the top-level commands, ``wiki.py``, ``skills.py``,
``memory.py``, ``config.py``, ``entity_retype.py``) import from here and register on :data:`cli`;
``cli/__init__.py`` imports them all. Nothing here imports a command module, so the command
modules and the package do not import each other in a circle.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from .. import kb as kb_module
from ..errors import GraphmemError
from . import render
from .model_folder import check_model_folder
from .speak import cli_wording

__all__ = ["cli", "entity", "handle_errors", "json_option", "query_argument", "_emit", "_fail", "_open", "_read_text"]

F = TypeVar("F", bound=Callable[..., Any])


def _emit(data: Any, as_json: bool, human: Callable[[Any], str]) -> None:
    data = render.plain(data)  # a face's typed result prints as its to_dict()
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        click.echo(human(data))


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def handle_errors(fn: F) -> F:
    """Turn library errors into one line on stderr and exit status 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except GraphmemError as exc:
            _fail(cli_wording(str(exc)))
        except KeyboardInterrupt:
            click.echo("interrupted; every finished operation is committed", err=True)
            sys.exit(130)

    return wrapper  # type: ignore[return-value]


def _open(ctx: click.Context, create: bool = False, check_model: bool = True,
          config: dict[str, Any] | None = None) -> kb_module.KnowledgeBase:
    home = ctx.obj["home"]
    kb = kb_module.open(home, create=create, read_only=True if ctx.obj.get("read_only") else None, config=config)
    ctx.call_on_close(kb.close)
    if check_model:
        check_model_folder(str(kb.config.embeddings.model), Path(home))
    return kb


def _json_wanted(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    return value or bool((ctx.obj or {}).get("json"))  # `graphmem --json stats` works too


json_option: Callable[[F], F] = click.option("--json", "as_json", is_flag=True, callback=_json_wanted,
                           help="Print JSON instead of text (also accepted before the command).")


def _non_empty_query(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    # One answer for every command (before any knowledge base is opened): some returned "no hits",
    # others an error naming a Python argument.
    if isinstance(value, str) and not value.strip():
        _fail(f"the query is empty; give the words to look for, e.g. {ctx.command_path} \"dispatch outage\"")
    return value


def query_argument(name: str = "text") -> Callable[[F], F]:
    """The TEXT/QUERY argument of a search command: an empty or blank one is one error, exit 1."""
    return click.argument(name, callback=_non_empty_query)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="GRAPHMEM_HOME",
    default=Path(kb_module.DEFAULT_HOME),
    show_default=True,
    help="Knowledge base folder (env GRAPHMEM_HOME).",
)
@click.option("--read-only", "read_only", is_flag=True,
              help="Open the knowledge base read-only (env GRAPHMEM_READ_ONLY=1; automatic when the folder "
                   "is not writable): reads work, writes are refused.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text, for commands that print data.")
@click.version_option(package_name="graphmem")
@click.pass_context
def cli(ctx: click.Context, home: Path, read_only: bool, as_json: bool) -> None:
    """graphmem: a persistent context graph for AI agents."""
    ctx.ensure_object(dict)
    ctx.obj["home"] = home
    ctx.obj["read_only"] = read_only
    ctx.obj["json"] = as_json


@cli.group()
def entity() -> None:
    """Show, add and merge entities."""


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        _fail(f"{path}: cannot read ({exc.strerror})")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        _fail(f"{path}: not UTF-8 text (invalid byte at position {exc.start}); convert it to UTF-8 first")
    raise AssertionError("unreachable")
