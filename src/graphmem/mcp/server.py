"""``graphmem mcp``: one knowledge base served over MCP (stdio or streamable HTTP).

The knowledge base is opened once for the server's lifetime. Tools: the official memory server's
nine (:mod:`.tools_memory`), graphmem's own (:mod:`.tools_graphmem`), skills with progressive
disclosure (:mod:`.tools_skills`). Resources: wiki pages as ``graphmem://wiki/{slug}``,
``graphmem://index`` and ``graphmem://log``; a tool call that changes a page publishes
``notifications/resources/updated`` to the clients subscribed to it.

Over HTTP a non-loopback host is refused unless a token is given (``--token`` or
``$GRAPHMEM_TOKEN``); with a token every request must carry ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.server.transport_security import TransportSecuritySettings

from .. import __version__
from ..errors import GraphmemError, NotFound
from ..netguard import bearer_ok, check_bind
from .registry import INDEX_URI, LOG_URI, Registry
from .tools_graphmem import register_graphmem_tools
from .tools_memory import register_memory_tools
from .tools_skills import SkillsCatalog, register_skills_tools

if TYPE_CHECKING:
    from ..kb import KnowledgeBase

__all__ = ["build_server", "check_http_host", "serve_http", "transport_security", "BearerAuth", "INSTRUCTIONS"]

INSTRUCTIONS = """graphmem: a knowledge base with evidence (documents, a knowledge graph, a wiki, memories, skills).
Workflow: 1) look in the wiki first (wiki_search, then wiki_read_page or the graphmem://wiki/{slug} resource);
2) ask the knowledge itself with query_with_evidence or search (every hit cites document, chunk and span) and
get_context for a token-budgeted block with citation markers; 3) cite what you use; 4) file a valuable answer
back as a wiki page (wiki_write_page) so the next question starts from it. Add knowledge with ingest_document
(text plus the entities and relations you extracted, each with its supporting text) or ingest_path.
The memory server's tools (create_entities, add_observations, search_nodes, ...) work as before; their
observations become evidence that search cites. Skills: search_skills, then activate_skill, then
read_skill_resource for a file it lists."""


def _instructions() -> str:
    return INSTRUCTIONS


def build_server(kb: KnowledgeBase, skills_dirs: Sequence[str | os.PathLike[str]] = (),
                 project_dir: str | os.PathLike[str] | None = None,
                 ingest_roots: Sequence[str | os.PathLike[str]] = ()) -> tuple[MCPServer[Any], Registry]:
    """The MCP server over ``kb`` (not yet running) and its registry. ``ingest_path`` reads only
    below ``project_dir`` (default: the working folder) and ``ingest_roots``."""
    bus = InMemorySubscriptionBus()
    server: MCPServer[Any] = MCPServer("graphmem", title="graphmem", version=__version__,
                                       instructions=_instructions(), subscriptions=bus,
                                       log_level="WARNING")
    reg = Registry(server, kb, bus)
    register_memory_tools(reg)
    project = Path(project_dir) if project_dir else Path.cwd()
    register_graphmem_tools(reg, [project, *map(Path, ingest_roots)])
    catalog = SkillsCatalog(kb, skills_dirs, project)
    register_skills_tools(reg, catalog)
    _register_resources(reg)
    return server, reg


def _wiki_file(kb: KnowledgeBase, name: str) -> str:
    """index.md or log.md of the wiki (never through a symlink: nothing escapes the folder)."""
    path = kb.wiki.dir / name
    if path.is_symlink() or not path.is_file():
        return ""
    return path.read_text(encoding="utf-8", errors="replace")


def _register_resources(reg: Registry) -> None:
    kb = reg.kb

    async def read(fn: Any, *args: Any) -> Any:
        def call() -> Any:
            try:
                with reg.lock:
                    return fn(*args)
            except NotFound as exc:
                raise ResourceNotFoundError(str(exc)) from None
            except GraphmemError as exc:
                raise ResourceError(f"{type(exc).__name__}: {exc}") from None
        return await anyio.to_thread.run_sync(call)

    @reg.server.resource(INDEX_URI, name="index", title="Wiki index", mime_type="text/markdown",
                         description="index.md: every wiki page by category, with its summary.")
    async def wiki_index() -> str:
        return str(await read(_wiki_file, kb, "index.md"))

    @reg.server.resource(LOG_URI, name="log", title="Wiki log", mime_type="text/markdown",
                         description="log.md: what was ingested, written and linted, newest last.")
    async def wiki_log() -> str:
        return str(await read(_wiki_file, kb, "log.md"))

    @reg.server.resource("graphmem://wiki/{slug}", name="wiki-page", title="Wiki page", mime_type="text/markdown",
                         description="One wiki page (markdown with front matter) by slug, e.g. memory-leak.")
    async def wiki_page(slug: str) -> str:
        page = await read(kb.wiki.read_page_by_slug, slug)
        path = Path(page["path"])
        if path.is_file() and not path.is_symlink():
            return path.read_text(encoding="utf-8", errors="replace")
        return str(page.get("content", ""))


# -- HTTP ------------------------------------------------------------------------------------------


def check_http_host(host: str, token: str | None) -> None:
    """Refuse to listen beyond this machine without a token, and refuse a blank token (the same
    rules as ``graphmem serve``: :func:`graphmem.netguard.check_bind`)."""
    check_bind(host, token)


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (compared in
    constant time); anything else gets 401 before MCP sees it."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = b""
            for key, value in scope.get("headers", []):
                if key == b"authorization":
                    given = value
            if not bearer_ok(given, self.token):
                body = b'{"error": "missing or wrong bearer token: send Authorization: Bearer <token>"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def transport_security(host: str, token: str | None) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding check. With a token, the token is the protection: a remote client
    reaches the server under whatever name or address it uses (a LAN address, a proxy's name), so
    the Host check is off. Without a token the server is loopback-only and only loopback Host and
    Origin values are accepted (a web page cannot rebind a name onto it)."""
    if token:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = ["127.0.0.1", "localhost", "[::1]"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[h for name in hosts for h in (name, f"{name}:*")],
        allowed_origins=[f"http://{name}{port}" for name in hosts for port in ("", ":*")],
    )


def serve_http(server: MCPServer[Any], host: str, port: int, token: str | None) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until interrupted."""
    import uvicorn

    check_http_host(host, token)
    app: Any = server.streamable_http_app(host=host, transport_security=transport_security(host, token))
    if token:
        app = BearerAuth(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    uvicorn.Server(config).run()
