"""``graphmem serve``: the HTTP API and web UI over one knowledge base (extra ``server``)."""

from __future__ import annotations

import click

from .app import _fail, _open, handle_errors

__all__ = ["serve"]


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; anything but a loopback address needs --token.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option("--token", default=None, envvar="GRAPHMEM_TOKEN",
              help="Require 'Authorization: Bearer TOKEN' on every API request (env GRAPHMEM_TOKEN).")
@click.option("--max-body", "max_body", default=1_048_576, show_default=True, type=click.IntRange(1),
              help="Largest request body accepted, in bytes (larger ones get 413).")
@click.option("--cors-origin", "cors_origins", multiple=True, metavar="ORIGIN",
              help="Allow browser calls from this origin (repeatable); CORS is off without it.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@click.pass_context
@handle_errors
def serve(ctx: click.Context, host: str, port: int, token: str | None, max_body: int,
          cors_origins: tuple[str, ...], log_level: str) -> None:
    """Serve the REST API (OpenAPI at /openapi.json, docs at /docs) and the web UI at /."""
    from ..server.http import MISSING_EXTRA, check_bind, checked_origins
    from ..server.http import serve as run_server

    check_bind(host, token)  # before anything is opened or created
    checked_origins(cors_origins)
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        _fail(MISSING_EXTRA)
    kb = _open(ctx, create=True)
    shown = "localhost" if host in ("127.0.0.1", "::1") else host
    click.echo(f"graphmem serving {kb.home} on http://{shown}:{port}/ (API docs at /docs"
               f"{', token required' if token else ''}); Ctrl-C stops", err=True)
    run_server(kb, host, port, token=token, max_body_bytes=max_body, cors_origins=cors_origins, log_level=log_level)
