"""graphmem over the Model Context Protocol.

:mod:`.server` (needs the ``mcp`` extra: ``pip install 'graphmem[mcp]'``) builds the server;
:mod:`.memory_graph` (the official memory server's graph operations) and :mod:`.install` (client
configuration files) need only the standard library, so the CLI imports them without the extra.
"""

from __future__ import annotations

from ..models import plain

__all__ = ["MISSING_SDK", "plain"]

MISSING_SDK = ("the MCP server needs the official MCP Python SDK (2.x): pip install 'graphmem[mcp]' "
               "(or pip install 'mcp>=2.3,<3')")


