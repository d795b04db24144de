"""``graphmem mcp install``: the MCP client configuration that starts ``graphmem mcp``.

One entry per client, in the file and shape the client documents, with absolute paths (clients
start servers from folders of their own choosing):

* claude-code: ``.mcp.json`` in the project, ``{"mcpServers": {name: {type, command, args}}}``
  (or the ``claude mcp add`` command line);
* claude-desktop: ``claude_desktop_config.json`` in the app's folder, ``{"mcpServers": ...}``;
* cursor: ``.cursor/mcp.json`` in the project, ``{"mcpServers": ...}``;
* vscode: ``.vscode/mcp.json`` in the project, ``{"servers": {name: {"type": "stdio", ...}}}``;
* codex: ``~/.codex/config.toml`` (``$CODEX_HOME``), a ``[mcp_servers.<name>]`` table.

An existing file is merged, never replaced: other servers and keys stay as they were. A file that
cannot be parsed is refused (nothing written), with the entry to add by hand.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInput

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["CLIENTS", "InstallPlan", "plan_install", "write_install", "server_command", "default_path"]

CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode", "codex")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def server_command(home: Path) -> tuple[str, list[str]]:
    """The absolute command and arguments that start ``graphmem mcp`` on ``home``."""
    script = Path(sys.executable).with_name("graphmem.exe" if os.name == "nt" else "graphmem")
    home_arg = str(home.expanduser().resolve())
    if script.is_file():
        return str(script.resolve()), ["mcp", "--home", home_arg]
    return str(Path(sys.executable).resolve()), ["-m", "graphmem", "mcp", "--home", home_arg]


def _desktop_config() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if os.name == "nt":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / "Claude" / \
            "claude_desktop_config.json"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "Claude" / "claude_desktop_config.json"


def default_path(client: str, project: Path) -> Path:
    """Where ``client`` reads its MCP servers from."""
    if client == "claude-code":
        return project / ".mcp.json"
    if client == "claude-desktop":
        return _desktop_config()
    if client == "cursor":
        return project / ".cursor" / "mcp.json"
    if client == "vscode":
        return project / ".vscode" / "mcp.json"
    if client == "codex":
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml"
    raise InvalidInput(f"--client: '{client}' is not one of {', '.join(CLIENTS)}")


@dataclass
class InstallPlan:
    """What ``install`` would write: the merged file text, where, and the entry alone."""

    client: str
    path: Path
    text: str
    entry: dict[str, Any]
    existed: bool
    claude_command: str | None = None

    def to_dict(self, written: bool) -> dict[str, Any]:
        """Plain data for ``--json``."""
        out = {"client": self.client, "path": str(self.path), "written": written, "existed": self.existed,
               "entry": self.entry, "text": self.text}
        if self.claude_command:
            out["claude_command"] = self.claude_command
        return out


def _entry(client: str, command: str, args: list[str]) -> dict[str, Any]:
    if client in ("claude-code", "vscode"):
        return {"type": "stdio", "command": command, "args": args}
    return {"command": command, "args": args}


def _merge_json(path: Path, old: str | None, top: str, name: str, entry: dict[str, Any]) -> str:
    data: Any = {}
    if old is not None and old.strip():
        try:
            data = json.loads(old)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path} is not plain JSON ({exc.msg}, line {exc.lineno}; comments are not kept "
                               f"by a merge); nothing was written; add this under \"{top}\" by hand: "
                               f"{json.dumps({name: entry})}") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path}: expected a JSON object at the top; nothing was written")
    servers = data.setdefault(top, {})
    if not isinstance(servers, dict):
        raise InvalidInput(f"{path}: \"{top}\" is not an object; nothing was written")
    servers[name] = entry
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def _merge_toml(path: Path, old: str | None, name: str, entry: dict[str, Any]) -> str:
    old = old or ""
    try:
        before = tomllib.loads(old)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path} is not valid TOML ({exc}); nothing was written") from None
    ours = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*(\"" + re.escape(name) + r"\"|" + re.escape(name) +
                      r")\s*(\.[^\]]*)?\]\s*(#.*)?$")
    header = re.compile(r"^\s*\[")
    kept: list[str] = []
    skipping = False
    for line in old.splitlines():
        if header.match(line):
            skipping = bool(ours.match(line))
        if not skipping:
            kept.append(line)
    body = "\n".join(kept).rstrip("\n")
    block = [f"[mcp_servers.{name}]"] + [f"{k} = {_toml_value(v)}" for k, v in entry.items()]
    text = (body + "\n\n" if body else "") + "\n".join(block) + "\n"
    try:
        after = tomllib.loads(text)
    except tomllib.TOMLDecodeError:  # e.g. the server is an inline table under [mcp_servers]
        after = None
    if after is None:
        raise InvalidInput(f"{path}: cannot merge [mcp_servers.{name}] (it is defined another way there); "
                           "nothing was written; edit that entry by hand")
    # The merge may change our table only: anything else that differs means the text surgery failed.
    for doc in (before, after):
        doc.get("mcp_servers", {}).pop(name, None)
        if doc.get("mcp_servers") == {}:
            del doc["mcp_servers"]
    if before != after:
        raise InvalidInput(f"{path}: cannot merge [mcp_servers.{name}] without touching other settings; "
                           "nothing was written; add the table by hand")
    return text


def plan_install(client: str, home: Path, *, path: Path | None = None, name: str = "graphmem",
                 project: Path | None = None) -> InstallPlan:
    """The merged configuration for ``client`` (nothing is written)."""
    if client not in CLIENTS:
        raise InvalidInput(f"--client: '{client}' is not one of {', '.join(CLIENTS)}")
    if not _NAME.match(name):
        raise InvalidInput(f"--name: '{name}' must be 1-64 letters, digits, '-' or '_'")
    target = (path or default_path(client, (project or Path.cwd()).resolve())).expanduser()
    target = target if target.is_absolute() else Path.cwd() / target
    if target.is_dir():
        raise InvalidInput(f"--path: {target} is a folder; give the configuration file")
    try:
        old = target.read_text(encoding="utf-8") if target.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {target} ({exc}); nothing was written") from None
    command, args = server_command(home)
    entry = _entry(client, command, args)
    if client == "codex":
        text = _merge_toml(target, old, name, entry)
    else:
        text = _merge_json(target, old, "servers" if client == "vscode" else "mcpServers", name, entry)
    claude = None
    if client == "claude-code":
        claude = "claude mcp add --transport stdio --scope project " + shlex.join([name, "--", command, *args])
    return InstallPlan(client, target, text, entry, old is not None, claude)


def write_install(plan: InstallPlan) -> None:
    """Write the planned file atomically (its folder created)."""
    try:
        plan.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = plan.path.with_name(f".{plan.path.name}.graphmem-tmp")
        tmp.write_text(plan.text, encoding="utf-8")
        tmp.replace(plan.path)
    except OSError as exc:
        raise InvalidInput(f"cannot write {plan.path}: {exc.strerror}; nothing was written") from None
