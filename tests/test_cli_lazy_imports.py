"""A cold CLI command imports what it runs: the change feed's webhook sinks (urllib, http, ssl)
and the export/backup formats load only for the commands that use them."""

from __future__ import annotations

import subprocess
import sys

from graphmem.cli.portability import EXPORT_FORMATS
from graphmem.portability import FORMATS


def test_the_cli_format_list_is_portabilitys() -> None:
    assert EXPORT_FORMATS == FORMATS


def test_importing_the_cli_leaves_feed_and_portability_unloaded() -> None:
    code = ("import sys, graphmem, graphmem.cli; "
            "print(sorted(m for m in sys.modules if m.startswith(('graphmem.feed', 'graphmem.portability',"
            " 'graphmem.mcp.memory_graph', 'urllib.request'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
