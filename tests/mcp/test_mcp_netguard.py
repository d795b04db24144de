"""The shared loopback / token rules (graphmem.netguard) and the tokenless MCP server's Host check."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mcp_helpers import running_http_server

from graphmem.errors import InvalidInput
from graphmem.netguard import bearer_ok, check_bind, is_loopback_host


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "localhost.", " localhost ", "127.0.0.1", "127.1.2.3",
                                  "::1", "[::1]"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "example.com", "localhost.example.com", "::", "",
                                  "[::]"])
def test_non_loopback_hosts(host: str) -> None:
    assert not is_loopback_host(host)


def test_check_bind_rules() -> None:
    check_bind("127.0.0.1", None)
    check_bind("[::1]", None)
    check_bind("0.0.0.0", "T0ken")
    with pytest.raises(InvalidInput, match="--host 0.0.0.0"):
        check_bind("0.0.0.0", None)
    for blank in ("", "  ", "\t"):
        with pytest.raises(InvalidInput, match="--token"):
            check_bind("127.0.0.1", blank)


def test_bearer_ok() -> None:
    assert bearer_ok("Bearer s3cret", "s3cret")
    assert bearer_ok(b"bearer  s3cret ", "s3cret")
    assert not bearer_ok("Bearer wrong", "s3cret")
    assert not bearer_ok("s3cret", "s3cret")
    assert not bearer_ok("Basic s3cret", "s3cret")
    assert not bearer_ok(None, "s3cret")
    assert not bearer_ok("Bearer ", "  ")  # a blank token never matches, not even a blank secret
    assert not bearer_ok("Bearer", "")


def _status(url: str, headers: dict[str, str]) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_tokenless_loopback_server_accepts_only_loopback_host_and_origin(tmp_path: Path) -> None:
    with running_http_server(tmp_path, None) as server:
        url, port = server["url"], server["port"]
        assert _status(url, {}) == 200
        assert _status(url, {"Host": f"localhost:{port}"}) == 200
        assert _status(url, {"Host": f"evil.example:{port}"}) == 421  # DNS rebinding
        assert _status(url, {"Origin": "http://evil.example"}) == 403  # a web page elsewhere
        assert _status(url, {"Origin": f"http://localhost:{port}"}) == 200
