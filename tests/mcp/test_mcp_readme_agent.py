"""The README's "Use with an agent" commands run as written, in order, in a fresh project folder."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from mcp_helpers import REPO, server_env

SCRIPT = Path(sys.executable).parent / "graphmem"


def _section_commands() -> list[list[str]]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Use with an agent\n", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()  # a trailing comment explains the line
            if line and not line.startswith("#"):
                commands.append(shlex.split(line))
    return commands


def test_the_agent_section_commands_run_as_written(tmp_path: Path) -> None:
    commands = _section_commands()
    assert [c[:1] for c in commands] == [["graphmem"]] * len(commands)
    assert ["graphmem", "skills", "info"] in commands
    outputs = []
    for cmd in commands:
        p = subprocess.run([str(SCRIPT), *cmd[1:]], cwd=tmp_path, capture_output=True, text=True,
                           env=server_env(), timeout=120)
        assert p.returncode == 0, f"{shlex.join(cmd)} -> {p.returncode}: {p.stderr}"
        outputs.append(p.stdout)
    servers = json.loads((tmp_path / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers["graphmem"]["args"][-1] == str((tmp_path / ".graphmem").resolve())
    assert (tmp_path / ".agents" / "skills" / "graphmem" / "SKILL.md").is_file()
    info = outputs[commands.index(["graphmem", "skills", "info"])]
    assert info.startswith("1 skills from ") and str(tmp_path / ".agents" / "skills") in info
