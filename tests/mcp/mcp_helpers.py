"""Fixtures for the MCP tests: a real `graphmem mcp` process per test module, driven by the official
SDK's client through a blocking portal (the tests stay synchronous, the client stays connected).

Skills from ../shared/data/skills come from $GRAPHMEM_TEST_SKILLS or that folder; the tests that
need them skip with the reason when it is absent.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra: pip install 'graphmem[mcp]'")

from anyio.from_thread import BlockingPortal, start_blocking_portal  # noqa: E402

from mcp import Client, StdioServerParameters  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
OWN_SKILL = REPO / "src" / "graphmem" / "agent_skill"  # skills/graphmem links here; the scan skips links
SHARED_SKILLS = Path(os.environ.get("GRAPHMEM_TEST_SKILLS") or REPO.parent / "shared" / "data" / "skills")
# A small collection of the shared corpus: indexing it is quick.
SHARED_COLLECTION = SHARED_SKILLS / "anthropics-skills"

__all__ = ["McpSession", "server_env", "free_port", "SHARED_COLLECTION", "OWN_SKILL", "REPO", "skills_root",
           "stdio_server", "http_server", "running_http_server", "open_session"]


def server_env(**extra: str) -> dict[str, str]:
    """The server's environment: no GRAPHMEM_* from the caller, embeddings off, offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env.update(GRAPHMEM_EMBED_MODEL="none", HF_HUB_OFFLINE="1", **extra)
    return env


def free_port() -> int:
    """A port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def skills_root(tmp: Path) -> Path:
    """A skills folder with one skill offered to the model and one that is not."""
    root = tmp / "project-skills"
    for name, extra in (("release-notes", ""), ("deploy-prod", "disable-model-invocation: true\n")):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Write {name.replace('-', ' ')} for a software release from the "
            f"changelog.\n{extra}---\n\n# {name}\n\nSteps for {name}.\n", encoding="utf-8")
    return root


class McpSession:
    """A connected SDK client, usable from synchronous tests."""

    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self.portal = portal
        self.client = client

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """The CallToolResult of one tool call."""
        return self.portal.call(self.client.call_tool, name, arguments or {})

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The structured result of a call that must succeed."""
        res = self.call(name, arguments)
        assert not res.is_error, res.content[0].text if res.content else res
        assert isinstance(res.structured_content, dict)
        # The text block carries the same data for clients that read only text.
        assert json.loads(res.content[0].text) == res.structured_content
        return res.structured_content

    def run(self, fn: Any, *args: Any) -> Any:
        """Run an async function of the client in the portal."""
        return self.portal.call(fn, *args)


def open_session(stack: ExitStack, target: Any) -> McpSession:
    portal = stack.enter_context(start_blocking_portal())
    client = stack.enter_context(portal.wrap_async_context_manager(Client(target)))
    return McpSession(portal, client)


@pytest.fixture(scope="module")
def stdio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[McpSession, Path]]:
    """`graphmem mcp` over stdio on a fresh knowledge base, with the test skills folders."""
    tmp = tmp_path_factory.mktemp("mcp-stdio")
    home = tmp / "kb"
    # the project's own folder (the server's working folder) is offered without --skills-dir
    claude_skill = tmp / ".claude" / "skills" / "changelog-check"
    claude_skill.mkdir(parents=True)
    (claude_skill / "SKILL.md").write_text("---\nname: changelog-check\ndescription: Check a changelog entry "
                                           "against the merged pull requests.\n---\n\nCompare them.\n")
    (tmp / "extra-root").mkdir()  # a folder ingest_path may read besides the working folder
    args = ["-m", "graphmem", "mcp", "--home", str(home), "--skills-dir", str(OWN_SKILL),
            "--skills-dir", str(skills_root(tmp)), "--ingest-root", str(tmp / "extra-root")]
    if SHARED_COLLECTION.is_dir():
        args += ["--skills-dir", str(SHARED_COLLECTION)]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(tmp),
                                   env=server_env(GRAPHMEM_SKILLS_RESCAN_SECONDS="0"))
    with ExitStack() as stack:
        yield open_session(stack, params), home


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """`graphmem mcp --transport http` on 127.0.0.1 with a token (a real process)."""
    tmp = tmp_path_factory.mktemp("mcp-http")
    skills = ["--skills-dir", str(SHARED_COLLECTION)] if SHARED_COLLECTION.is_dir() else []
    with running_http_server(tmp, "s3cret-token", skills) as server:
        yield server


@contextmanager
def running_http_server(tmp: Path, token: str | None, extra: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
    """A `graphmem mcp --transport http` process on 127.0.0.1 (working folder ``tmp``) until the block ends."""
    port = free_port()
    log = (tmp / "server.log").open("w+")  # a file, not a pipe: nobody reads it while the tests run
    auth = ["--token", token] if token is not None else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphmem", "mcp", "--home", str(tmp / "kb"), "--transport", "http", "--host",
         "127.0.0.1", "--port", str(port), *auth, *extra],
        env=server_env(), cwd=str(tmp), stdout=log, stderr=log, text=True)
    try:
        _wait_for_port(proc, port, tmp / "server.log")
        yield {"url": f"http://127.0.0.1:{port}/mcp", "port": port, "token": token, "proc": proc,
               "home": tmp / "kb"}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait_for_port(proc: subprocess.Popen[str], port: int, log: Path) -> None:
    """Until the server accepts connections (it exits with its error otherwise)."""
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = log.read_text(encoding="utf-8", errors="replace")
            raise AssertionError(f"graphmem mcp exited with {proc.returncode}: {err}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("graphmem mcp did not listen within 60 s")
