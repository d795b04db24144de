"""How graphmem's functions become MCP tools: one knowledge base, one lock, errors as tool errors,
and change notifications for the resources a call touched.

Every tool body is a plain function over the library. ``Registry.tool`` wraps it: the call runs
in a worker thread under the server's lock (the knowledge base is one SQLite connection; calls
are serialised, not interleaved), a :class:`graphmem.errors.GraphmemError` becomes an MCP tool
error (``isError`` with graphmem's message, which names the field), and afterwards the events the
call (or another process) appended are turned into ``notifications/resources/updated`` for the
wiki pages they name: on ``subscriptions/listen`` streams (the 2026-07-28 protocol, through the SDK's
subscription bus) and to the sessions that called ``resources/subscribe`` (2025-era clients, which
most hosts still are; MCPServer has no public hook for that verb yet, so the SDK's documented
workaround registers it on the low-level server).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated
from mcp.types import EmptyResult, SubscribeRequestParams, ToolAnnotations, UnsubscribeRequestParams
from pydantic import ConfigDict

from ..errors import GraphmemError
from . import plain

if TYPE_CHECKING:
    from ..kb import KnowledgeBase

__all__ = ["Registry", "plain", "INDEX_URI", "LOG_URI", "page_uri"]

F = TypeVar("F", bound=Callable[..., Any])

INDEX_URI = "graphmem://index"
LOG_URI = "graphmem://log"


def page_uri(slug: str) -> str:
    """The resource URI of a wiki page."""
    return f"graphmem://wiki/{slug}"


class Registry:
    """The server, its knowledge base and the bookkeeping every tool call shares."""

    def __init__(self, server: MCPServer[Any], kb: KnowledgeBase, bus: InMemorySubscriptionBus) -> None:
        self.server = server
        self.kb = kb
        self.bus = bus
        self.lock = threading.Lock()
        self._last_event = self._newest_event()
        self._legacy: dict[str, list[Any]] = {}  # uri -> connections that called resources/subscribe
        low = server._lowlevel_server  # the SDK's documented workaround (docs/migration.md)
        low.add_request_handler("resources/subscribe", SubscribeRequestParams, self._subscribe)
        low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, self._unsubscribe)

    @staticmethod
    def _connection(ctx: Any) -> Any:
        # ctx.session lives for one request; the connection behind it is the client (it also sends
        # on the connection's own channel, as an unsolicited notification should).
        return getattr(ctx.session, "_connection", None) or ctx.session

    async def _subscribe(self, ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        conns = self._legacy.setdefault(str(params.uri), [])
        conn = self._connection(ctx)
        if not any(c is conn for c in conns):
            conns.append(conn)
        return EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        conn = self._connection(ctx)
        self._legacy[str(params.uri)] = [c for c in self._legacy.get(str(params.uri), []) if c is not conn]
        return EmptyResult()

    def _newest_event(self) -> int:
        newest = 0
        while True:  # page to the end of the change log once, at start
            page = self.kb.events.list(after_id=newest, limit=10_000)
            if not page:
                return newest
            newest = page[-1].id

    def changed_uris(self) -> list[str]:
        """Resource URIs of the wiki pages changed since the last look (in any process)."""
        uris: list[str] = []
        with self.lock:  # concurrent calls (HTTP sessions) must not report the same events twice
            events = self.kb.events.list(after_id=self._last_event, limit=10_000)
            if events:
                self._last_event = events[-1].id
        for e in events:
            if e.type.startswith("wiki."):
                uris.append(page_uri(e.target))
        if uris:
            uris += [INDEX_URI, LOG_URI]
        return list(dict.fromkeys(uris))

    async def publish_changes(self) -> None:
        """Tell subscribed clients which resources changed."""
        for uri in await anyio.to_thread.run_sync(self.changed_uris):
            await self.bus.publish(ResourceUpdated(uri=uri))
            alive = []
            for conn in self._legacy.get(uri, []):
                try:
                    await conn.send_resource_updated(uri)
                    alive.append(conn)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                    continue  # a client that went away just stops hearing
            if uri in self._legacy:
                self._legacy[uri] = alive

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` under the knowledge base's lock, graphmem errors as tool errors."""
        try:
            with self.lock:
                return fn(*args, **kwargs)
        except GraphmemError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from None
        except (ValueError, OverflowError) as exc:
            # An argument the schema let through but the library or SQLite cannot take (a number
            # beyond 64 bits, a NUL in a path): a readable tool error, not a bare "Error executing tool".
            named = ", ".join(kwargs) or "the arguments"
            raise ToolError(f"InvalidInput: {getattr(fn, '__name__', 'tool')}: {named}: a value was refused "
                            f"({type(exc).__name__}: {exc}); check it and call again") from None

    def tool(self, *, title: str, read_only: bool, destructive: bool = False, idempotent: bool = False,
             name: str | None = None) -> Callable[[F], F]:
        """Register ``fn`` as a tool with truthful annotations (``destructive``/``idempotent`` are
        only meaningful for a tool that writes, so a read-only one sends neither)."""
        annotations = ToolAnnotations(
            title=title, read_only_hint=read_only, open_world_hint=False,
            destructive_hint=None if read_only else destructive,
            idempotent_hint=True if read_only else idempotent,
        )

        def decorator(fn: F) -> F:
            @functools.wraps(fn)
            async def run(*args: Any, **kwargs: Any) -> Any:
                result = await anyio.to_thread.run_sync(functools.partial(self.call, fn, *args, **kwargs))
                await self.publish_changes()
                return result

            self.server.add_tool(run, name=name or fn.__name__, title=title, annotations=annotations,
                                 structured_output=True)
            _refuse_unknown_arguments(self.server, name or fn.__name__)
            return fn

        return decorator


def _refuse_unknown_arguments(server: MCPServer[Any], name: str) -> None:
    """The SDK's argument models ignore unknown fields: ``search {"query": ..., "limit": 2}`` (the tool's
    argument is ``k``) answered 10 hits without a word. Like the HTTP API, refuse them (the schema says
    ``additionalProperties: false`` too). Values keep the SDK's lax parsing: agents often send ``"5"``."""
    tool = server._tool_manager.get_tool(name)  # noqa: SLF001 - the SDK has no public hook for the model config
    if tool is None:
        return
    base = tool.fn_metadata.arg_model
    tool.fn_metadata.arg_model = type(base.__name__, (base,), {
        "model_config": ConfigDict(**{**base.model_config, "extra": "forbid"}), "__module__": base.__module__})
    tool.parameters = tool.fn_metadata.arg_model.model_json_schema(by_alias=True)

