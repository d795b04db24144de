"""Every REST route in process: what it returns on success, and each error status it documents."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from http_helpers import (  # noqa: F401  (fixtures, by name)
    LOCAL_URL,
    QUESTION,
    client_fixture,
    corpus_client_fixture,
    corpus_home_fixture,
    error_of,
    make_client,
)

# -- reads over the example corpus ------------------------------------------------------------------


def test_health_and_stats_count_the_corpus(corpus_client: Any) -> None:
    assert corpus_client.get("/health").json() == {"status": "ok"}
    stats = corpus_client.get("/stats").json()
    assert stats["documents"] >= 14 and stats["entities"] > 50 and stats["backend"] == "sqlite"


def test_search_returns_hits_with_score_parts_citations_and_context(corpus_client: Any) -> None:
    resp = corpus_client.post("/search", json={"query": QUESTION, "kinds": ["chunk", "entity"], "k": 5,
                                               "context": True, "token_budget": 300})
    assert resp.status_code == 200, resp.text
    data = resp.json()
    assert data["query"] == QUESTION
    kinds = {h["kind"] for h in data["hits"]}
    assert kinds == {"chunk", "entity"}
    top = data["hits"][0]
    assert "INC-2041" in top["text"]
    assert set(top["parts"]) >= {"dense", "lexical", "graph", "relevance"}
    cite = top["citations"][0]
    assert {"doc_id", "chunk_id", "start", "end", "text"} <= set(cite)
    assert "INC-2041" in data["context"]


def test_search_strategy_and_kinds_are_validated(corpus_client: Any) -> None:
    err = error_of(corpus_client.post("/search", json={"query": "x", "strategy": "dfs"}), 400, "InvalidInput")
    assert err["field"] == "strategy"
    err = error_of(corpus_client.post("/search", json={"query": "x", "kinds": ["planet"]}), 400, "InvalidInput")
    assert err["field"].startswith("kinds")
    err = error_of(corpus_client.post("/search", json={"query": ""}), 400, "InvalidInput")
    assert err["field"] == "query"
    err = error_of(corpus_client.post("/search", json={"query": "x", "k": 0}), 400, "InvalidInput")
    assert err["field"] == "k"
    err = error_of(corpus_client.post("/search", json={"query": "x", "kk": 3}), 400, "InvalidInput")
    assert err["field"] == "kk"  # a misspelt field is refused, not ignored
    err = error_of(corpus_client.post("/search", content=b"{not json", headers={"content-type": "application/json"}),
                   400, "InvalidInput")


def test_query_returns_the_subgraph_with_evidence(corpus_client: Any) -> None:
    data = corpus_client.post("/query", json={"query": QUESTION}).json()
    names = {n["name"] for n in data["subgraph"]["nodes"].values()}
    assert "INC-2041" in names and "PgBouncer connection pool exhaustion" in names
    assert data["subgraph"]["edges"]
    error_of(corpus_client.post("/query", json={}), 400, "InvalidInput")


def test_documents_list_get_versions_chunks_and_passages(corpus_client: Any) -> None:
    docs = corpus_client.get("/documents", params={"limit": 100}).json()
    ids = [d["doc_id"] for d in docs]
    assert "examples/dispatch-api.md" in ids
    doc = corpus_client.get("/documents/examples/dispatch-api.md").json()
    assert doc["version"] == 1 and "Dispatch API" in doc["content"]
    assert [v["version"] for v in doc["versions"]] == [1]
    first = doc["chunks"][0]
    chunk = corpus_client.get(f"/chunks/{first['chunk_id']}").json()
    assert chunk["text"] == doc["content"][chunk["start"]:chunk["end"]]
    assert corpus_client.get("/documents", params={"limit": 2, "offset": 1}).json() == docs[1:3]


def test_documents_not_found_and_bad_version(corpus_client: Any) -> None:
    error_of(corpus_client.get("/documents/no/such.md"), 404, "NotFound")
    err = error_of(corpus_client.get("/documents/examples/dispatch-api.md", params={"version": 7}), 404, "NotFound")
    assert "versions: [1]" in err["message"]
    error_of(corpus_client.get("/chunks/nope:v1:c0"), 404, "NotFound")
    error_of(corpus_client.get("/documents", params={"limit": 0}), 400, "InvalidInput")


def test_entity_with_relations_evidence_and_neighbourhood(corpus_client: Any) -> None:
    ent = corpus_client.get("/entities/PgBouncer").json()
    assert ent["name"] == "PgBouncer"
    rel = next(r for r in ent["relations"] if r["other"] == "ledger-db")
    assert rel["type"] == "connects to" and rel["evidence"]
    assert "PgBouncer connects to ledger-db" in rel["evidence"][0]["text"]
    graph = corpus_client.get(f"/entities/{ent['id']}/graph", params={"depth": 1}).json()
    assert ent["id"] in graph["nodes"] and graph["nodes"][ent["id"]]["depth"] == 0
    assert any(e["source"] == ent["id"] or e["target"] == ent["id"] for e in graph["edges"])
    listed = corpus_client.get("/entities", params={"type": "software", "limit": 500}).json()
    assert "PgBouncer" in {e["name"] for e in listed}
    error_of(corpus_client.get("/entities/Nobody%20Here"), 404, "NotFound")
    error_of(corpus_client.get("/entities/PgBouncer/graph", params={"depth": 9}), 400, "InvalidInput")
    error_of(corpus_client.get("/entities/Nobody/graph"), 404, "NotFound")
    error_of(corpus_client.get("/entities", params={"limit": 0}), 400, "InvalidInput")


def test_wiki_list_read_backlinks_search_lint_log(corpus_client: Any) -> None:
    pages = corpus_client.get("/wiki/pages").json()
    assert "pgbouncer" in {p["slug"] for p in pages}
    page = corpus_client.get("/wiki/pages/entity/pgbouncer").json()
    assert page["title"] == "PgBouncer" and "[[ledger-db]]" in page["content"]
    assert page["backlinks"]
    back = corpus_client.get("/wiki/backlinks/pgbouncer").json()
    assert {b["slug"] for b in back} == {b["slug"] for b in page["backlinks"]}
    hits = corpus_client.get("/wiki/search", params={"q": "PgBouncer"}).json()
    assert hits and hits[0]["slug"]
    lint = corpus_client.get("/wiki/lint").json()
    assert isinstance(lint["problems"], int) and "broken_wikilinks" in lint
    log = corpus_client.get("/wiki/log", params={"last_n": 5}).json()
    assert 0 < len(log) <= 5 and log[-1]["operation"]
    error_of(corpus_client.get("/wiki/pages/no-such-page"), 404, "NotFound")
    error_of(corpus_client.get("/wiki/search"), 400, "InvalidInput")
    error_of(corpus_client.get("/wiki/pages", params={"limit": 0}), 400, "InvalidInput")
    error_of(corpus_client.get("/wiki/log", params={"last_n": 0}), 400, "InvalidInput")
    error_of(corpus_client.get("/wiki/pages/summary/pgbouncer"), 404, "NotFound")  # the slug is an entity page


def test_unknown_route_and_method_are_json_errors(corpus_client: Any) -> None:
    err = error_of(corpus_client.get("/nowhere"), 404, "NotFound")
    assert "/docs" in err["message"]
    error_of(corpus_client.patch("/search", json={}), 405, "MethodNotAllowed")


def test_openapi_document_lists_every_route(corpus_client: Any) -> None:
    spec = corpus_client.get("/openapi.json").json()
    paths = spec["paths"]
    for path, method in [("/documents", "post"), ("/search", "post"), ("/query", "post"), ("/entities/merge", "post"),
                         ("/wiki/pages", "post"), ("/wiki/lint", "get"), ("/skills/query", "post"),
                         ("/skills/{skill_id}", "get"), ("/events", "get"), ("/events/stream", "get"),
                         ("/memories", "post"), ("/memories", "delete"), ("/memories/{memory_id}", "put"),
                         ("/memories/{memory_id}/history", "get"), ("/reset", "post"), ("/retrieve", "post"),
                         ("/stats", "get")]:
        assert method in paths[path], (path, method)
    assert "ErrorResponse" in spec["components"]["schemas"]
    docs = corpus_client.get("/docs")
    assert docs.status_code == 200 and "/openapi.json" in docs.text


def test_web_ui_is_served_with_its_vendored_libraries(corpus_client: Any) -> None:
    page = corpus_client.get("/")
    assert page.status_code == 200 and "/ui/app.js" in page.text and "/ui/vendor/vendor.min.js" in page.text
    js = corpus_client.get("/ui/vendor/vendor.min.js")
    assert js.status_code == 200 and "cytoscape" in js.text and "DOMPurify" in js.text
    assert "cdn" not in page.text.lower()
    assert corpus_client.get("/ui/vendor/LICENSES.txt").status_code == 200


# -- writes, each on a knowledge base of its own ---------------------------------------------------


def test_ingest_text_with_offline_extraction_then_delete(client: Any) -> None:
    text = "The Billing Service depends on PgBouncer. PgBouncer exhaustion causes the billing outage."
    out = client.post("/documents", json={"content": text, "doc_id": "billing", "title": "Billing"}).json()
    assert out["status"] == "added" and out["edges_added"] == 2 and out["version"] == 1
    ent = client.get("/entities/Billing%20Service").json()
    assert ent["relations"][0]["type"] == "depends on"
    again = client.post("/documents", json={"content": text, "doc_id": "billing"}).json()
    assert again["status"] == "unchanged"
    v2 = client.post("/documents", json={"content": text + " It is fine now.", "doc_id": "billing"}).json()
    assert v2["status"] == "new_version" and v2["version"] == 2
    assert [v["version"] for v in client.get("/documents/billing").json()["versions"]] == [1, 2]
    gone = client.delete("/documents/billing").json()
    assert gone["versions_deleted"] == 2
    error_of(client.get("/documents/billing"), 404, "NotFound")
    error_of(client.delete("/documents/billing"), 404, "NotFound")


def test_ingest_without_extraction_and_with_agent_extraction(client: Any) -> None:
    plain = client.post("/documents", json={"content": "Alpha calls Beta.", "extract": "none"}).json()
    assert plain["status"] == "added" and plain["doc_id"].startswith("doc_")
    assert client.get("/entities", params={"limit": 10}).json() == []
    agent = client.post("/documents", json={
        "content": "Kafka feeds the Tracker.", "doc_id": "k1", "title": "K",
        "entities": [{"name": "Kafka", "type": "software", "supporting_text": "Kafka feeds the Tracker."},
                     {"name": "Tracker", "type": "service", "supporting_text": "Kafka feeds the Tracker."}],
        "relations": [{"source": "Kafka", "target": "Tracker", "type": "feeds", "confidence": 0.9,
                       "supporting_text": "Kafka feeds the Tracker."}]}).json()
    assert agent["nodes_added"] == 2 and agent["edges_added"] == 1
    err = error_of(client.post("/documents", json={"content": "x", "entities": []}), 400, "InvalidInput")
    assert err["field"] == "doc_id"
    err = error_of(client.post("/documents", json={"content": "x", "extract": "magic"}), 400, "InvalidInput")
    assert err["field"] == "extract"
    bad = client.post("/documents", json={"content": "x", "doc_id": "k2", "relations": [{"source": "a"}]})
    error_of(bad, 400, "InvalidInput")
    error_of(client.get("/documents/k2"), 404, "NotFound")  # a failed call writes nothing
    err = error_of(client.post("/documents", json={"content": "A needs B.", "doc_id": "k3", "extract": "llm"}), 400,
                   "InvalidInput")
    assert "[llm] model" in err["message"]  # no LLM configured: said so, and nothing stored
    error_of(client.get("/documents/k3"), 404, "NotFound")


def test_merge_entities(client: Any) -> None:
    text = "Postgres stores orders. PostgreSQL serves reads."
    client.post("/documents", json={"content": text, "doc_id": "d", "entities": [
        {"name": "Postgres", "type": "database", "supporting_text": "Postgres stores orders."},
        {"name": "PostgreSQL", "type": "database", "supporting_text": "PostgreSQL serves reads."}]})
    kb_ents = {e["name"] for e in client.get("/entities").json()}
    assert {"Postgres", "PostgreSQL"} <= kb_ents
    out = client.post("/entities/merge", json={"keep": "PostgreSQL", "other": "Postgres"}).json()
    assert "Postgres" in out["aliases_added"]
    assert client.get("/entities/Postgres").json()["name"] == "PostgreSQL"
    error_of(client.post("/entities/merge", json={"keep": "PostgreSQL", "other": "Postgres"}), 400, "InvalidInput")
    error_of(client.post("/entities/merge", json={"keep": "PostgreSQL", "other": "Nope"}), 404, "NotFound")


def test_wiki_pages_create_read_update_delete(client: Any) -> None:
    made = client.post("/wiki/pages", json={"category": "notes", "title": "Pool sizing",
                                            "content": "See [[other-page]] for limits.", "tags": ["ops"]}).json()
    assert made["created"] is True and made["slug"] == "pool-sizing"
    page = client.get("/wiki/pages/notes/pool-sizing").json()
    assert "[[other-page]]" in page["content"] and page["tags"] == ["ops"]
    lint = client.get("/wiki/lint").json()
    assert "notes/pool-sizing" in str(lint["broken_wikilinks"]) or "pool-sizing" in str(lint["broken_wikilinks"])
    client.post("/wiki/pages", json={"category": "notes", "title": "Other Page", "content": "Limits: 100."})
    assert {b["slug"] for b in client.get("/wiki/backlinks/other-page").json()} == {"pool-sizing"}
    upd = client.put("/wiki/pages/pool-sizing", json={"content": "Now 200 connections."}).json()
    assert upd["created"] is False
    assert "200 connections" in client.get("/wiki/pages/pool-sizing").json()["content"]
    assert client.get("/wiki/search", params={"q": "connections"}).json()[0]["slug"] == "pool-sizing"
    err = error_of(client.post("/wiki/pages", json={"category": "notes", "title": "E", "content": " "}), 400,
                   "InvalidInput")
    assert err["field"] == "content"
    error_of(client.put("/wiki/pages/absent", json={"content": "x"}), 404, "NotFound")
    assert client.delete("/wiki/pages/pool-sizing").json()["deleted"] is True
    error_of(client.get("/wiki/pages/pool-sizing"), 404, "NotFound")
    error_of(client.delete("/wiki/pages/pool-sizing"), 404, "NotFound")


def _skills_dir(root: Path) -> Path:
    for name, desc, body in [("pdf-tools", "Extract text and tables from PDF files", "Use pypdf to read pages."),
                             ("git-helper", "Write good git commit messages", "Summarise the diff."),
                             ("diagram-drawing", "Draw hand-drawn diagrams with excalidraw", "Open excalidraw.")]:
        d = root / name
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {desc}\n---\n{body}\n", encoding="utf-8")
    return root


def test_skills_query_prompt_block_get_and_skillgraph_alias(tmp_path: Path) -> None:
    client, kb = make_client(tmp_path / "kb")
    try:
        kb.skills.build([_skills_dir(tmp_path / "skills")])
        assert client.get("/skills").json()["skills"] == 3
        res = client.post("/skills/query", json={"message": "extract the tables from this PDF", "top_k": 2}).json()
        assert res["skills"][0]["name"] == "pdf-tools"
        assert res["prompt"]["skills"] == len(res["skills"]) and "pdf-tools" in res["prompt"]["text"]
        claude = client.post("/skills/query", json={"message": "extract PDF tables", "format": "claude"}).json()
        assert claude["prompt"]["format"] == "claude"
        alias = client.post("/retrieve", json={"query": "extract the tables from this PDF", "top_k": 2}).json()
        assert [s["id"] for s in alias["skills"]] == [s["id"] for s in res["skills"]]
        one = client.get(f"/skills/{res['skills'][0]['id']}").json()
        assert one["name"] == "pdf-tools" and "pypdf" in one["body"] and isinstance(one["neighbours"], dict)
        error_of(client.get("/skills/no-such-skill"), 404, "NotFound")
        error_of(client.post("/skills/query", json={"message": "  "}), 400, "InvalidInput")
        error_of(client.post("/skills/query", json={"message": "x", "format": "yaml"}), 400, "InvalidInput")
    finally:
        kb.close()


def test_events_page_with_after_and_types(client: Any) -> None:
    client.post("/documents", json={"content": "Alpha depends on Beta.", "doc_id": "a"})
    page = client.get("/events", params={"limit": 3}).json()
    assert [e["id"] for e in page["events"]] == [1, 2, 3] and page["last_id"] == 3
    rest = client.get("/events", params={"after": page["last_id"], "limit": 1000}).json()
    assert rest["events"][0]["id"] == 4
    added = client.get("/events", params={"types": "document.added"}).json()["events"]
    assert [e["target"] for e in added] == ["a"]
    empty = client.get("/events", params={"after": 10_000}).json()
    assert empty == {"events": [], "last_id": 10_000}
    error_of(client.get("/events", params={"after": -1}), 400, "InvalidInput")


def test_store_busy_is_503_with_retry_after_and_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    client, kb = make_client(home)
    kb.close()
    from fastapi.testclient import TestClient

    import graphmem
    from graphmem.server.http import create_app

    kb = graphmem.open(home, config={"store": {"busy_timeout": 0.2}})
    client = TestClient(create_app(kb), base_url=LOCAL_URL)
    other = sqlite3.connect(home / "graph.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        resp = client.post("/memories", json={"messages": "remember this", "user_id": "u"})
        err = error_of(resp, 503, "StoreBusy")
        assert resp.headers["retry-after"] == "1" and err["field"] is None
        other.execute("ROLLBACK")
        assert client.get("/memories", params={"user_id": "u"}).json() == {"results": []}
        assert client.post("/memories", json={"messages": "remember this", "user_id": "u"}).status_code == 200
    finally:
        other.close()
        kb.close()


def test_conflicting_embedding_model_is_409(tmp_path: Path, model_dir: Path) -> None:
    from fastapi.testclient import TestClient

    import graphmem
    from graphmem.server.http import create_app

    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": f"model2vec:{model_dir}"}})
    try:
        with kb.store.transaction():
            kb.store.set_meta("embeddings.model", "some-other-model")  # vectors made by another model
        client = TestClient(create_app(kb), base_url=LOCAL_URL)
        err = error_of(client.post("/documents", json={"content": "Alpha depends on Beta.", "doc_id": "a"}), 409,
                       "Conflict")
        assert "reindex" in err["message"]
        error_of(client.get("/documents/a"), 404, "NotFound")
    finally:
        kb.close()


def test_read_only_knowledge_base_refuses_writes_with_403(corpus_home: Path) -> None:
    from fastapi.testclient import TestClient

    import graphmem
    from graphmem.server.http import create_app

    with pytest.warns(UserWarning):
        kb = graphmem.open(corpus_home, read_only=True)
    try:
        client = TestClient(create_app(kb), base_url=LOCAL_URL)
        assert client.post("/search", json={"query": QUESTION}).status_code == 200
        err = error_of(client.post("/memories", json={"messages": "x", "user_id": "u"}), 403, "ReadOnly")
        assert "read-only" in err["message"]
    finally:
        kb.close()
