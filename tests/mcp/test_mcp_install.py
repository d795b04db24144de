"""`graphmem mcp install --client ...`: each client's documented configuration shape, merges that keep
other servers, and --print that writes nothing. Runs the real entry point; no real home folder is
touched (CODEX_HOME, XDG_CONFIG_HOME and the working folder point into tmp)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomllib

CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode", "codex")
# The documented keys of one stdio server entry per client.
ENTRY_KEYS = {
    "claude-code": {"type", "command", "args", "env"},       # .mcp.json (Claude Code docs, "MCP")
    "claude-desktop": {"command", "args", "env"},            # claude_desktop_config.json
    "cursor": {"type", "command", "args", "env", "envFile"},  # .cursor/mcp.json
    "vscode": {"type", "command", "args", "env", "envFile"},  # .vscode/mcp.json ("servers")
    "codex": {"command", "args", "env", "cwd", "startup_timeout_sec", "tool_timeout_sec", "enabled"},
}


def gm(tmp: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMEM_", "CODEX_", "XDG_"))}
    env.update(GRAPHMEM_EMBED_MODEL="none", CODEX_HOME=str(tmp / "codex-home"), XDG_CONFIG_HOME=str(tmp / "xdg"),
               HOME=str(tmp / "home"))
    return subprocess.run([sys.executable, "-m", "graphmem", "--home", str(tmp / "kb"), "mcp", "install", *args],
                          capture_output=True, text=True, env=env, cwd=str(cwd or tmp), timeout=120)


def parse(client: str, text: str) -> dict[str, Any]:
    """The servers table of a client's configuration text."""
    if client == "codex":
        return dict(tomllib.loads(text)["mcp_servers"])
    data = json.loads(text)
    return dict(data["servers" if client == "vscode" else "mcpServers"])


def check_entry(client: str, entry: dict[str, Any], home: Path) -> None:
    assert set(entry) <= ENTRY_KEYS[client], set(entry) - ENTRY_KEYS[client]
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
    assert isinstance(entry["args"], list) and all(isinstance(a, str) for a in entry["args"])
    assert entry["args"][-3:] == ["mcp", "--home", str(home.resolve())]
    if client == "vscode":
        assert entry["type"] == "stdio"
    if client == "claude-code":
        assert entry.get("type", "stdio") == "stdio"


@pytest.mark.parametrize("client", CLIENTS)
def test_print_shows_the_documented_shape_and_writes_nothing(tmp_path: Path, client: str) -> None:
    target = tmp_path / "cfg" / ("config.toml" if client == "codex" else "mcp.json")
    p = gm(tmp_path, "--client", client, "--print", "--path", str(target))
    assert p.returncode == 0, p.stderr
    servers = parse(client, p.stdout)
    assert list(servers) == ["graphmem"]
    check_entry(client, servers["graphmem"], tmp_path / "kb")
    assert not target.exists() and not (tmp_path / "kb").exists()
    if client == "claude-code":
        assert "claude mcp add --transport stdio --scope project graphmem -- " in p.stderr


@pytest.mark.parametrize("client,where", [
    ("claude-code", ".mcp.json"), ("cursor", ".cursor/mcp.json"), ("vscode", ".vscode/mcp.json"),
    ("codex", "codex-home/config.toml"), ("claude-desktop", "xdg/Claude/claude_desktop_config.json"),
])
def test_writes_where_the_client_reads(tmp_path: Path, client: str, where: str) -> None:
    if client == "claude-desktop" and sys.platform in ("darwin", "win32"):
        pytest.skip("the Linux location is tested; macOS and Windows use the app's own folder")
    project = tmp_path / "project"
    project.mkdir()
    p = gm(tmp_path, "--client", client, cwd=project)
    assert p.returncode == 0, p.stderr
    base = tmp_path if where.startswith(("codex-home", "xdg")) else project
    written = base / where
    check_entry(client, parse(client, written.read_text(encoding="utf-8"))["graphmem"], tmp_path / "kb")


NPX_MEMORY = ["-y", "@modelcontextprotocol/server-memory"]
FIXTURES = {
    "claude-code": {"mcpServers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
                                   "memory": {"command": "npx", "args": NPX_MEMORY}}},
    "claude-desktop": {"mcpServers": {"memory": {"command": "npx", "args": NPX_MEMORY,
                                                 "env": {"MEMORY_FILE_PATH": "/tmp/m.jsonl"}}},
                       "globalShortcut": "Ctrl+Space"},
    "cursor": {"mcpServers": {"docs": {"url": "http://localhost:3000/mcp"}}},
    "vscode": {"inputs": [{"type": "promptString", "id": "key", "password": True}],
               "servers": {"memory": {"type": "stdio", "command": "npx",
                                      "args": NPX_MEMORY}}},
}

CODEX_FIXTURE = """model = "o3"

[mcp_servers.memory]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-memory"]

[mcp_servers.graphmem]
command = "/old/graphmem"
args = ["mcp"]

[mcp_servers.graphmem.env]
OLD = "1"

[profiles.fast]
model = "o4-mini"
"""


@pytest.mark.parametrize("client", CLIENTS)
def test_merge_keeps_the_other_servers(tmp_path: Path, client: str) -> None:
    target = tmp_path / ("config.toml" if client == "codex" else "mcp.json")
    original = CODEX_FIXTURE if client == "codex" else json.dumps(FIXTURES[client], indent=2)
    target.write_text(original, encoding="utf-8")

    printed = gm(tmp_path, "--client", client, "--print", "--path", str(target))
    assert printed.returncode == 0, printed.stderr
    assert target.read_text(encoding="utf-8") == original  # --print writes nothing

    p = gm(tmp_path, "--client", client, "--path", str(target))
    assert p.returncode == 0, p.stderr
    text = target.read_text(encoding="utf-8")
    assert text == printed.stdout  # what --print showed is what was written
    servers = parse(client, text)
    check_entry(client, servers.pop("graphmem"), tmp_path / "kb")
    if client == "codex":
        before, after = tomllib.loads(original), tomllib.loads(text)
        before["mcp_servers"].pop("graphmem"), after["mcp_servers"].pop("graphmem")
        assert after == before  # the model, the profile and the other server unchanged
        assert "OLD" not in text  # our old table, its env subtable included, was replaced
    else:
        data, fixture = json.loads(text), FIXTURES[client]
        top = "servers" if client == "vscode" else "mcpServers"
        assert servers == fixture[top]
        assert {k: v for k, v in data.items() if k != top} == {k: v for k, v in fixture.items() if k != top}
    again = gm(tmp_path, "--client", client, "--path", str(target))
    assert again.returncode == 0 and target.read_text(encoding="utf-8") == text  # idempotent


def test_a_file_that_is_not_json_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    original = '{\n  // my servers\n  "servers": {}\n}\n'
    target.write_text(original, encoding="utf-8")
    p = gm(tmp_path, "--client", "vscode", "--path", str(target))
    assert p.returncode == 1 and "not plain JSON" in p.stderr and '"graphmem"' in p.stderr
    assert target.read_text(encoding="utf-8") == original


def test_a_codex_server_written_inline_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    original = '[mcp_servers]\ngraphmem = { command = "x" }\n'
    target.write_text(original, encoding="utf-8")
    p = gm(tmp_path, "--client", "codex", "--path", str(target))
    assert p.returncode == 1 and "mcp_servers.graphmem" in p.stderr
    assert target.read_text(encoding="utf-8") == original


def test_without_the_mcp_extra_the_server_says_what_to_install(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['mcp'] = None\n"  # as if the SDK were not installed
            "from graphmem.cli import main\n"
            f"sys.argv = ['graphmem', '--home', {str(tmp_path / 'kb')!r}, 'mcp']\n"
            "main()\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "GRAPHMEM_EMBED_MODEL": "none"})
    assert p.returncode == 1 and "pip install 'graphmem[mcp]'" in p.stderr and "Traceback" not in p.stderr
    # the other commands, install included, work without it
    code = code.replace("'mcp']", "'mcp', 'install', '--client', 'cursor', '--print', '--path', 'x.json']")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env={**os.environ, "GRAPHMEM_EMBED_MODEL": "none"})
    assert p.returncode == 0 and "mcpServers" in p.stdout
