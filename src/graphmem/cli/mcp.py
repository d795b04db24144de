"""``graphmem mcp``: serve the knowledge base over MCP; ``graphmem mcp install``: configure a client.

The server needs the ``mcp`` extra and is imported only when it runs, so every other command
works without it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import kb as kb_module
from ..mcp import MISSING_SDK
from ..mcp.install import CLIENTS, plan_install, write_install
from .app import _emit, _fail, handle_errors, json_option

__all__ = ["mcp"]


@click.group("mcp", invoke_without_command=True)
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio (a client starts the server) or streamable HTTP at http://HOST:PORT/mcp.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="HTTP: address to listen on; beyond loopback a token is required.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="HTTP: port.")
@click.option("--token", envvar="GRAPHMEM_TOKEN", default=None,
              help="HTTP: clients must send 'Authorization: Bearer TOKEN' (env GRAPHMEM_TOKEN).")
@click.option("--skills-dir", "skills_dirs", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="A folder of skills to offer (repeatable; .agents/skills and .claude/skills of the current "
                   "folder are offered too, and $GRAPHMEM_SKILLS_DIRS).")
@click.option("--ingest-root", "ingest_roots", multiple=True,
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A folder ingest_path may read besides the working folder (repeatable); nothing else on "
                   "this machine is readable through the server.")
@click.pass_context
@handle_errors
def mcp(ctx: click.Context, transport: str, host: str, port: int, token: str | None,
        skills_dirs: tuple[Path, ...], ingest_roots: tuple[Path, ...]) -> None:
    """Serve the knowledge base over MCP (stdio by default); `graphmem mcp install` configures a client."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        from ..mcp.server import build_server, check_http_host, serve_http
    except ImportError:
        _fail(MISSING_SDK)
        return
    if transport == "http":
        check_http_host(host, token)  # before opening anything
    kb = kb_module.open(ctx.obj["home"], create=True, read_only=True if ctx.obj.get("read_only") else None)
    try:
        server, _reg = build_server(kb, skills_dirs, ingest_roots=ingest_roots)
        if transport == "stdio":
            server.run("stdio")
        else:
            click.echo(f"graphmem MCP server on http://{host}:{port}/mcp ({kb.home})", err=True)
            serve_http(server, host, port, token)
    except KeyboardInterrupt:
        pass
    finally:
        kb.close()


@mcp.command("install")
@click.option("--client", type=click.Choice(CLIENTS), required=True, help="The MCP client to configure.")
@click.option("--print", "print_only", is_flag=True, help="Print the merged configuration; write nothing.")
@click.option("--path", "path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The configuration file (default: where the client reads it).")
@click.option("--name", default="graphmem", show_default=True, help="The server's name in the configuration.")
@json_option
@click.pass_context
@handle_errors
def mcp_install(ctx: click.Context, client: str, print_only: bool, path: Path | None, name: str,
                as_json: bool) -> None:
    """Write (or --print) the client's MCP configuration that starts `graphmem mcp` on this knowledge base,
    merged into its existing file (other servers are kept)."""
    plan = plan_install(client, ctx.obj["home"], path=path, name=name)
    if not print_only:
        write_install(plan)
    if as_json:
        _emit(plan.to_dict(written=not print_only), True, str)
        return
    if print_only:
        click.echo(plan.text, nl=False)
        click.echo(f"(not written; without --print this goes to {plan.path})", err=True)
    else:
        click.echo(f"{'updated' if plan.existed else 'wrote'} {plan.path}: server '{name}' -> graphmem mcp "
                   f"--home {Path(ctx.obj['home']).resolve()}")
    if plan.claude_command:
        click.echo(f"or, with the claude CLI: {plan.claude_command}", err=True)
    sys.stdout.flush()
