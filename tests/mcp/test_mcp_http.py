"""`graphmem mcp --transport http` as a real process on 127.0.0.1, with a token."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from mcp_helpers import SHARED_COLLECTION, McpSession, http_server, open_session, server_env  # noqa: F401

httpx2 = pytest.importorskip("httpx2")


@pytest.fixture(scope="module")
def session(http_server: dict[str, Any]) -> Iterator[McpSession]:  # noqa: F811 - the imported fixture
    with ExitStack() as stack:
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {http_server['token']}"})
        # the portal owns the event loop the client runs on: the http client is entered there too
        s = open_session(stack, _transport(http_server["url"], client))
        yield s


class _transport:
    """streamable_http_client with our own httpx2 client, entered and closed with it."""

    def __init__(self, url: str, client: Any) -> None:
        self.url, self.client = url, client

    async def __aenter__(self) -> Any:
        from mcp.client.streamable_http import streamable_http_client

        await self.client.__aenter__()
        self._cm = streamable_http_client(self.url, http_client=self.client)
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self._cm.__aexit__(*exc)
        finally:
            await self.client.__aexit__(*exc)


def _post(url: str, headers: dict[str, str]) -> int:
    """The status of an initialize POST (a ``Host`` in ``headers`` replaces urllib's own)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_tools_listed_and_memory_round_trip_over_http(session: McpSession) -> None:
    names = {t.name for t in session.run(session.client.list_tools).tools}
    assert {"create_entities", "create_relations", "add_observations", "delete_entities", "delete_observations",
            "delete_relations", "read_graph", "search_nodes", "open_nodes", "search"} <= names
    session.ok("create_entities", {"entities": [{"name": "Eve_Park", "entityType": "person",
                                                 "observations": ["Eve runs the night shift"]},
                                                {"name": "Depot", "entityType": "place", "observations": []}]})
    session.ok("create_relations", {"relations": [{"from": "Eve_Park", "to": "Depot", "relationType": "works_at"}]})
    found = session.ok("search_nodes", {"query": "night shift"})
    assert [e["name"] for e in found["entities"]] == ["Eve_Park"]
    assert [(r["from"], r["to"], r["relationType"]) for r in found["relations"]] == [("Eve_Park", "Depot", "works_at")]
    session.ok("delete_entities", {"entityNames": ["Eve_Park", "Depot"]})
    assert session.ok("open_nodes", {"names": ["Eve_Park"]}) == {"entities": [], "relations": []}


def test_search_citations_and_resource_over_http(session: McpSession) -> None:
    text = "The night train leaves at 23:10. It stops in Porto and Coimbra."
    session.ok("ingest_document", {"doc_id": "train", "title": "Timetable", "text": text})
    cite = session.ok("search", {"query": "night train Porto"})["hits"][0]["citations"][0]
    assert text[cite["start"]:cite["end"]] == cite["text"]
    page = session.ok("wiki_write_page", {"category": "topic", "title": "Night train", "content": "Leaves 23:10."})
    res = session.run(session.client.read_resource, f"graphmem://wiki/{page['slug']}")
    assert "Leaves 23:10." in res.contents[0].text


def test_activate_skill_over_http(session: McpSession) -> None:
    if not SHARED_COLLECTION.is_dir():
        pytest.skip(f"shared skills corpus {SHARED_COLLECTION} not found; set GRAPHMEM_TEST_SKILLS")
    names = [s["name"] for s in session.ok("search_skills", {"message": "build an MCP server", "top_k": 3})["skills"]]
    assert "mcp-builder" in names
    skill = session.ok("activate_skill", {"name": "mcp-builder"})
    assert skill["content"].startswith('<skill_content name="mcp-builder">')


def test_tool_error_over_http_leaves_the_server_alive(session: McpSession) -> None:
    res = session.call("add_observations", {"observations": [{"entityName": "Ghost", "contents": ["boo"]}]})
    assert res.is_error and "observations[0].entityName" in res.content[0].text
    assert session.ok("read_graph")["entities"] == []


def test_requests_without_the_token_are_refused(http_server: dict[str, Any]) -> None:  # noqa: F811
    url = http_server["url"]
    assert _post(url, {}) == 401
    assert _post(url, {"Authorization": "Bearer wrong"}) == 401
    assert _post(url, {"Authorization": http_server["token"]}) == 401  # no scheme
    assert http_server["proc"].poll() is None


def test_non_loopback_host_needs_a_token(tmp_path: Any) -> None:
    p = subprocess.run([sys.executable, "-m", "graphmem", "mcp", "--home", str(tmp_path / "kb"), "--transport",
                        "http", "--host", "0.0.0.0", "--port", "9"], capture_output=True, text=True,
                       env=server_env(), timeout=60)
    assert p.returncode == 1 and "--host 0.0.0.0" in p.stderr and "token" in p.stderr
    assert not (tmp_path / "kb").exists()  # refused before anything was created


def test_a_token_server_answers_a_client_that_names_it_by_another_host(http_server: dict[str, Any]) -> None:  # noqa: F811
    # A remote client names the server by its LAN address; with a token the token is the protection.
    auth = {"Authorization": f"Bearer {http_server['token']}"}
    assert _post(http_server["url"], {**auth, "Host": f"192.168.1.20:{http_server['port']}"}) == 200
    assert _post(http_server["url"], {"Host": f"192.168.1.20:{http_server['port']}"}) == 401


def test_blank_token_is_refused(tmp_path: Any) -> None:
    p = subprocess.run([sys.executable, "-m", "graphmem", "mcp", "--home", str(tmp_path / "kb"), "--transport",
                        "http", "--host", "0.0.0.0", "--port", "9", "--token", "   "], capture_output=True, text=True,
                       env=server_env(), timeout=60)
    assert p.returncode == 1 and "--token" in p.stderr and "empty" in p.stderr
    assert not (tmp_path / "kb").exists()
