"""`graphmem mcp` as a real subprocess over stdio, driven by the official SDK's client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import SHARED_COLLECTION, McpSession, stdio_server  # noqa: F401 - the fixture

# The reference server's input schemas (modelcontextprotocol/servers, src/memory/index.ts): per tool,
# the top-level properties, and for arrays of objects the item properties (all of them required).
REFERENCE_INPUTS: dict[str, dict[str, list[str] | None]] = {
    "create_entities": {"entities": ["name", "entityType", "observations"]},
    "create_relations": {"relations": ["from", "to", "relationType"]},
    "add_observations": {"observations": ["entityName", "contents"]},
    "delete_entities": {"entityNames": None},
    "delete_observations": {"deletions": ["entityName", "observations"]},
    "delete_relations": {"relations": ["from", "to", "relationType"]},
    "read_graph": {},
    "search_nodes": {"query": None},
    "open_nodes": {"names": None},
}


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref:
        return dict(schema["$defs"][ref.split("/")[-1]])
    return node


def _strip(graph: dict[str, Any]) -> dict[str, Any]:
    """The reference's fields only (graphmem adds ids and normalised types)."""
    return {
        "entities": sorted(({"name": e["name"], "entityType": e["entityType"], "observations": e["observations"]}
                            for e in graph["entities"]), key=lambda e: e["name"]),
        "relations": sorted(({"from": r["from"], "to": r["to"], "relationType": r["relationType"]}
                             for r in graph["relations"]), key=lambda r: (r["from"], r["to"], r["relationType"])),
    }


@pytest.fixture(scope="module")
def session(stdio_server: tuple[McpSession, Path]) -> McpSession:  # noqa: F811 - the imported fixture
    return stdio_server[0]


def test_lists_the_nine_official_tools_with_their_input_schemas(session: McpSession) -> None:
    tools = {t.name: t for t in session.run(session.client.list_tools).tools}
    for name, props in REFERENCE_INPUTS.items():
        schema = tools[name].input_schema
        assert schema["type"] == "object"
        assert sorted(schema.get("properties", {})) == sorted(props), name
        assert sorted(schema.get("required", [])) == sorted(props), name
        for prop, item_fields in props.items():
            node = _resolve(schema, schema["properties"][prop])
            if name == "search_nodes":
                assert node["type"] == "string"
                continue
            assert node["type"] == "array", (name, prop)
            items = _resolve(schema, node["items"])
            if item_fields is None:
                assert items["type"] == "string"
            else:
                assert sorted(items["properties"]) == sorted(item_fields)
                assert sorted(items["required"]) == sorted(item_fields)
    assert tools["read_graph"].annotations.read_only_hint is True
    assert tools["delete_entities"].annotations.destructive_hint is True
    assert tools["create_entities"].annotations.read_only_hint is False
    assert tools["create_entities"].annotations.destructive_hint is False
    # graphmem's own tools are there too, with output schemas
    for name in ("search", "query_with_evidence", "get_context", "ingest_document", "wiki_write_page",
                 "memory_add", "list_events", "search_skills", "activate_skill", "read_skill_resource"):
        assert tools[name].output_schema is not None, name
    assert tools["search"].annotations.read_only_hint is True
    assert tools["memory_delete"].annotations.destructive_hint is True


def test_memory_round_trip_has_the_reference_result_shapes(session: McpSession) -> None:
    created = session.ok("create_entities", {"entities": [
        {"name": "Alice_Jones", "entityType": "person", "observations": ["Lives in Lisbon"]},
        {"name": "Acme", "entityType": "organization", "observations": []},
        {"name": "Bob_Lee", "entityType": "person", "observations": []},
    ]})
    assert [(e["name"], e["entityType"], e["observations"]) for e in created["entities"]] == [
        ("Alice_Jones", "person", ["Lives in Lisbon"]), ("Acme", "organization", []), ("Bob_Lee", "person", [])]
    again = session.ok("create_entities", {"entities": [{"name": "Acme", "entityType": "organization",
                                                         "observations": []}]})
    assert again == {"entities": []}  # existing names are skipped, as the reference does

    rels = session.ok("create_relations", {"relations": [
        {"from": "Alice_Jones", "to": "Acme", "relationType": "works_at"},
        {"from": "Bob_Lee", "to": "Alice_Jones", "relationType": "reports_to"},
    ]})
    assert [(r["from"], r["to"], r["relationType"]) for r in rels["relations"]] == [
        ("Alice_Jones", "Acme", "works_at"), ("Bob_Lee", "Alice_Jones", "reports_to")]
    assert session.ok("create_relations", {"relations": [
        {"from": "Alice_Jones", "to": "Acme", "relationType": "works_at"}]}) == {"relations": []}

    added = session.ok("add_observations", {"observations": [
        {"entityName": "Alice_Jones", "contents": ["Lives in Lisbon", "Speaks Portuguese"]}]})
    assert added == {"results": [{"entityName": "Alice_Jones", "addedObservations": ["Speaks Portuguese"]}]}

    found = _strip(session.ok("search_nodes", {"query": "portuguese"}))
    assert [e["name"] for e in found["entities"]] == ["Alice_Jones"]
    assert found["entities"][0]["observations"] == ["Lives in Lisbon", "Speaks Portuguese"]
    # relations touching at least one matching entity
    assert {(r["from"], r["to"]) for r in found["relations"]} == {("Alice_Jones", "Acme"), ("Bob_Lee", "Alice_Jones")}

    opened = _strip(session.ok("open_nodes", {"names": ["Acme", "Nobody"]}))
    assert [e["name"] for e in opened["entities"]] == ["Acme"]
    assert opened["relations"] == [{"from": "Alice_Jones", "to": "Acme", "relationType": "works_at"}]

    done = session.ok("delete_observations", {"deletions": [{"entityName": "Alice_Jones",
                                                             "observations": ["Lives in Lisbon"]}]})
    assert done == {"success": True, "message": "Observations deleted successfully"}
    assert _strip(session.ok("open_nodes", {"names": ["Alice_Jones"]}))["entities"][0]["observations"] == [
        "Speaks Portuguese"]
    assert session.ok("delete_relations", {"relations": [
        {"from": "Bob_Lee", "to": "Alice_Jones", "relationType": "reports_to"}]})["success"] is True
    assert session.ok("delete_entities", {"entityNames": ["Acme", "Nobody"]}) == {
        "success": True, "message": "Entities deleted successfully"}
    graph = _strip(session.ok("read_graph"))
    names = [e["name"] for e in graph["entities"]]
    assert "Acme" not in names and {"Alice_Jones", "Bob_Lee"} <= set(names)
    assert not [r for r in graph["relations"] if "Acme" in (r["from"], r["to"]) or r["relationType"] == "reports_to"]
    session.ok("delete_entities", {"entityNames": ["Alice_Jones", "Bob_Lee"]})


def test_observations_are_evidence_that_search_cites(session: McpSession) -> None:
    session.ok("create_entities", {"entities": [
        {"name": "Carol_Wu", "entityType": "person", "observations": ["Carol prefers tea over coffee"]}]})
    hits = session.ok("search", {"query": "tea coffee"})["hits"]
    cited = [c for h in hits for c in h["citations"] if c["text"] == "Carol prefers tea over coffee"]
    assert cited and cited[0]["doc_id"].startswith("memory_") and cited[0]["start"] == 0
    session.ok("delete_entities", {"entityNames": ["Carol_Wu"]})


BILLING = ("The billing service stores invoices in Postgres. Invoices are archived after 90 days. "
           "The billing service depends on the ledger API.")


def test_search_returns_citations_with_spans(session: McpSession) -> None:
    text = BILLING
    res = session.ok("ingest_document", {
        "doc_id": "billing", "title": "Billing notes", "text": text,
        "entities": [{"name": "billing service", "type": "service",
                      "supporting_text": "The billing service stores invoices in Postgres."},
                     {"name": "ledger API", "type": "api",
                      "supporting_text": "The billing service depends on the ledger API."}],
        "relations": [{"source": "billing service", "target": "ledger API", "type": "depends on",
                       "confidence": 1.0, "supporting_text": "The billing service depends on the ledger API."}],
    })
    assert res["status"] == "added" and res["warnings"] == []
    out = session.ok("search", {"query": "archived invoices", "k": 3})
    top = out["hits"][0]
    assert top["doc_id"] == "billing" and set(top["parts"]) >= {"lexical", "dense", "graph"}
    cite = top["citations"][0]
    assert cite["doc_id"] == "billing" and text[cite["start"]:cite["end"]] == cite["text"]
    ev = session.ok("query_with_evidence", {"query": "What does the billing service depend on?"})
    assert any(e["target_name"] == "ledger API" for e in ev["subgraph"]["edges"])
    ctx = session.ok("get_context", {"query": "archived invoices", "token_budget": 200})
    assert "archived after 90 days" in ctx["context"] and "[1]" in ctx["context"]


def test_activate_skill_from_the_shared_corpus(session: McpSession) -> None:
    if not SHARED_COLLECTION.is_dir():
        pytest.skip(f"shared skills corpus {SHARED_COLLECTION} not found; set GRAPHMEM_TEST_SKILLS")
    found = session.ok("search_skills", {"message": "make generative algorithmic art with p5.js", "top_k": 3})
    assert "algorithmic-art" in [s["name"] for s in found["skills"]]
    assert all(s["why"] and len(s["description"]) <= 400 for s in found["skills"])
    skill = session.ok("activate_skill", {"name": "algorithmic-art"})
    body = (SHARED_COLLECTION / "algorithmic-art" / "SKILL.md").read_text(encoding="utf-8").split("---", 2)[2]
    assert skill["content"].startswith('<skill_content name="algorithmic-art">')
    assert skill["content"].endswith("</skill_content>")
    assert body.strip()[:200] in skill["content"]


def test_skill_resources_are_listed_and_confined(session: McpSession) -> None:
    skill = session.ok("activate_skill", {"name": "graphmem"})
    assert skill["license"] == "MIT" and "query_with_evidence" in skill["allowed_tools"]
    assert skill["compatibility"].startswith("Needs graphmem")
    assert "references/ingestion.md" in skill["resources"] and "SKILL.md" not in skill["resources"]
    got = session.ok("read_skill_resource", {"name": "graphmem", "path": "references/ingestion.md"})
    assert got["content"] == (Path(skill["folder"]) / "references" / "ingestion.md").read_text(encoding="utf-8")
    for bad in ("../graphmem/SKILL.md", "/etc/passwd", "references/../../x"):
        res = session.call("read_skill_resource", {"name": "graphmem", "path": bad})
        assert res.is_error and "path" in res.content[0].text


def test_a_skill_added_while_the_server_runs_is_found(session: McpSession,
                                                     stdio_server: tuple[McpSession, Path]) -> None:  # noqa: F811
    folder = stdio_server[1].parent / "project-skills" / "invoice-audit"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: invoice-audit\ndescription: Audit supplier invoices against "
                                     "purchase orders.\n---\n\nMatch each line.\n", encoding="utf-8")
    found = session.ok("search_skills", {"message": "audit supplier invoices against purchase orders"})
    assert found["skills"][0]["name"] == "invoice-audit"


def test_the_projects_claude_skills_folder_is_offered(session: McpSession) -> None:
    found = session.ok("search_skills", {"message": "check the changelog entry against merged pull requests"})
    assert found["skills"][0]["name"] == "changelog-check"
    assert "Compare them." in session.ok("activate_skill", {"name": "changelog-check"})["content"]


def test_skills_that_disable_model_invocation_are_not_offered(session: McpSession) -> None:
    names = [s["name"] for s in session.ok("search_skills", {"message": "release notes deploy prod changelog",
                                                              "top_k": 20})["skills"]]
    assert "release-notes" in names and "deploy-prod" not in names
    res = session.call("activate_skill", {"name": "deploy-prod"})
    assert res.is_error and "disable-model-invocation" in res.content[0].text


def test_wiki_page_resources(session: McpSession, stdio_server: tuple[McpSession, Path]) -> None:  # noqa: F811
    home = stdio_server[1]
    # the page cites the billing document: ingested here too, so the test also runs alone (-k); unchanged after
    # test_search_returns_citations_with_spans
    session.ok("ingest_document", {"doc_id": "billing", "title": "Billing notes", "text": BILLING})
    page = session.ok("wiki_write_page", {"category": "answer", "title": "Invoice retention",
                                           "content": "Invoices are archived after 90 days ([[billing service]]).",
                                           "source_documents": ["billing"]})
    res = session.run(session.client.read_resource, f"graphmem://wiki/{page['slug']}")
    assert res.contents[0].text == (home / "wiki" / "answer" / f"{page['slug']}.md").read_text(encoding="utf-8")
    index = session.run(session.client.read_resource, "graphmem://index").contents[0].text
    assert f"[[{page['slug']}|Invoice retention]]" in index
    log = session.run(session.client.read_resource, "graphmem://log").contents[0].text
    assert "Invoice retention" in log
    read = session.ok("wiki_read_page", {"slug": page["slug"]})
    assert "archived after 90 days" in read["content"]
    assert session.ok("wiki_search", {"query": "retention"})["results"][0]["slug"] == page["slug"]


def test_subscribed_client_hears_when_a_page_changes(session: McpSession) -> None:
    from mcp.client.subscriptions import ResourceUpdated

    uri = "graphmem://wiki/subscribed-page"

    async def watch_and_write() -> list[str]:
        seen: list[str] = []
        async with session.client.listen(resource_subscriptions=[uri, "graphmem://index"]) as sub:
            await session.client.call_tool("wiki_write_page", {"category": "topic", "title": "Subscribed page",
                                                               "content": "First words."})
            with anyio.fail_after(30):
                async for event in sub:
                    if isinstance(event, ResourceUpdated):
                        seen.append(event.uri)
                    if {uri, "graphmem://index"} <= set(seen):
                        break
        return seen

    seen = session.run(watch_and_write)
    assert uri in seen and "graphmem://index" in seen


def test_errors_are_tool_errors_and_the_server_lives_on(session: McpSession) -> None:
    res = session.call("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]})
    assert res.is_error and "observations[0].entityName" in res.content[0].text
    res = session.call("search", {"query": "invoices", "k": "many"})  # schema validation
    assert res.is_error and "k" in res.content[0].text
    res = session.call("create_relations", {"relations": [{"from": "Nobody", "to": "Nor_Me", "relationType": "x"}]})
    assert res.is_error and "relations[0].from" in res.content[0].text
    res = session.call("wiki_read_page", {"slug": "no-such-page"})
    assert res.is_error and "no-such-page" in res.content[0].text
    res = session.call("memory_update", {"memory_id": "mem_nope", "text": "x"})
    assert res.is_error
    # still alive, and nothing was written by the failed calls
    assert session.ok("open_nodes", {"names": ["Nobody", "Nor_Me"]}) == {"entities": [], "relations": []}


def test_memories_and_events(session: McpSession) -> None:
    added = session.ok("memory_add", {"text": "Dana likes window seats", "user_id": "dana"})
    mid = added["results"][0]["id"]
    found = session.ok("memory_search", {"query": "window seats", "user_id": "dana"})
    assert found["results"][0]["id"] == mid
    session.ok("memory_update", {"memory_id": mid, "text": "Dana likes aisle seats"})
    history = session.ok("memory_history", {"memory_id": mid})["results"]
    assert [h["new_text"] for h in history] == ["Dana likes window seats", "Dana likes aisle seats"]
    assert session.ok("memory_feedback", {"memory_id": mid, "query": "seats", "helpful": True})["helpful"] is True
    assert session.ok("memory_delete", {"memory_id": mid})["event"] == "DELETE"
    events = session.ok("list_events", {"types": ["memory.added"]})["results"]
    assert any(e["target"] == mid for e in events)


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
def test_a_2025_era_client_subscribes_with_resources_subscribe(tmp_path: Path) -> None:
    import sys
    from contextlib import ExitStack

    from anyio.from_thread import start_blocking_portal
    from mcp_helpers import server_env

    from mcp import Client, StdioServerParameters

    heard: list[str] = []

    async def on_message(message: Any) -> None:
        params = getattr(getattr(message, "root", message), "params", None)
        if getattr(getattr(message, "root", message), "method", "") == "notifications/resources/updated":
            heard.append(str(params.uri))

    params = StdioServerParameters(command=sys.executable, args=["-m", "graphmem", "mcp", "--home",
                                                                 str(tmp_path / "kb")], env=server_env())
    with ExitStack() as stack:
        portal = stack.enter_context(start_blocking_portal())
        client = stack.enter_context(portal.wrap_async_context_manager(
            Client(params, mode="legacy", message_handler=on_message)))
        assert client.server_capabilities.resources.subscribe is True
        uri = "graphmem://wiki/legacy-page"

        async def subscribe_write_wait() -> None:
            await client.subscribe_resource(uri)
            await client.call_tool("wiki_write_page", {"category": "topic", "title": "Legacy page",
                                                       "content": "Written."})
            with anyio.fail_after(30):
                while uri not in heard:
                    await anyio.sleep(0.05)
            await client.unsubscribe_resource(uri)
            heard.clear()
            await client.call_tool("wiki_write_page", {"category": "topic", "title": "Legacy page",
                                                       "content": "Written again."})
            await client.call_tool("read_graph", {})  # a round trip after the write: a notice would be here

        portal.call(subscribe_write_wait)
        assert uri not in heard  # unsubscribed: not told any more
