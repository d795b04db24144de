"""What a stranger's files can do to the HTTP server and its UI (found by a probe; each failed on the old code).

- Every response carries a Content-Security-Policy (scripts from this server only, no images or connections
  to other hosts, forms only here, no framing), X-Content-Type-Options and X-Frame-Options.
- ``--cors-origin http://App.example:3000/`` matched in the guard but not in Starlette's CORS layer (its
  preflight got a plain-text 400); origins are now kept as a browser sends them. ``*`` is refused.
- A page read returns ``link_slugs``: the page each link means, resolved as lint and backlinks do, so the UI
  no longer guesses slugs in JavaScript (``[[大阪 Office]]`` opened the Tokyo office's page).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from http_helpers import client_fixture, make_client  # noqa: F401  (a fixture, by name)

from graphmem.server.http import create_app
from graphmem.server.http.headers import CONTENT_SECURITY_POLICY


def test_every_response_carries_the_security_headers(client) -> None:
    for path in ("/", "/docs", "/ui/app.js", "/health", "/stats", "/nowhere"):
        resp = client.get(path)
        assert resp.headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
        assert resp.headers["x-content-type-options"] == "nosniff"
        assert resp.headers["x-frame-options"] == "DENY"
    refused = client.get("/stats", headers={"Origin": "http://evil.example"})  # the guard's own answer
    assert refused.status_code == 403 and "frame-ancestors 'none'" in refused.headers["content-security-policy"]
    assert "script-src 'self';" in CONTENT_SECURITY_POLICY and "img-src 'self' data:;" in CONTENT_SECURITY_POLICY


def test_the_docs_page_has_no_inline_script(client) -> None:
    html = client.get("/docs").text
    assert '<script src="/ui/docs.js"></script>' in html and "<script>" not in html and "<style>" not in html
    assert "openapi.json" in client.get("/ui/docs.js").text


def test_a_cors_origin_written_with_capitals_and_a_slash_works(tmp_path: Path) -> None:
    client, kb = make_client(tmp_path / "kb", cors_origins=["http://App.example:3000/"])
    try:
        pre = client.options("/stats", headers={"Origin": "http://app.example:3000",
                                                "Access-Control-Request-Method": "GET"})
        assert pre.status_code == 200, pre.text
        assert pre.headers["access-control-allow-origin"] == "http://app.example:3000"
        got = client.get("/stats", headers={"Origin": "http://app.example:3000"})
        assert got.status_code == 200 and got.headers["access-control-allow-origin"] == "http://app.example:3000"
    finally:
        kb.close()


@pytest.mark.parametrize("origin", ["*", "app.example", "http://app.example/path"])
def test_a_cors_origin_that_is_no_site_is_refused(tmp_path: Path, origin: str) -> None:
    import graphmem

    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        with pytest.raises(ValueError, match="scheme://host"):
            create_app(kb, cors_origins=[origin])


def test_a_page_read_says_which_page_each_link_means(client) -> None:
    for title, body in [("東京 Office", "Tokyo."), ("大阪 Office", "Osaka."), ("Москва", "Moscow."),
                        ("Straße", "Street.")]:
        made = client.post("/wiki/pages", json={"category": "notes", "title": title, "content": body})
        assert made.status_code == 200, made.text
    hub = client.post("/wiki/pages", json={"category": "notes", "title": "Offices", "content":
                                           "[[大阪 Office]], [[東京 Office]], [[Москва]], [[Straße]], [[nowhere]]"})
    assert hub.status_code == 200, hub.text
    pages = {p["title"]: p["slug"] for p in client.get("/wiki/pages").json()}
    got = client.get(f"/wiki/pages/{pages['Offices']}").json()
    assert got["link_slugs"] == {"大阪 office": pages["大阪 Office"], "東京 office": pages["東京 Office"],
                                 "москва": pages["Москва"], "straße": pages["Straße"]}
    assert pages["大阪 Office"] != pages["東京 Office"]


def test_head_answers_where_get_does(client) -> None:
    """HEAD /, /health and /docs answered 405: `curl -I` and uptime monitors use HEAD."""
    for path in ("/", "/health", "/docs"):
        resp = client.head(path)
        assert resp.status_code == 200, (path, resp.status_code)
        assert resp.content == b""


def test_a_cut_memory_list_says_so(client) -> None:
    for i in range(5):
        client.post("/memories", json={"messages": f"note {i}", "user_id": "u1"})
    cut = client.get("/memories/graph", params={"user_id": "u1", "limit": 3}).json()
    assert len(cut["results"]) == 3 and cut["more"] is True
    whole = client.get("/memories/graph", params={"user_id": "u1", "limit": 5}).json()
    assert len(whole["results"]) == 5 and whole["more"] is False


def test_memories_are_listed_page_by_page(client) -> None:
    for i in range(5):
        client.post("/memories", json={"messages": f"note {i}", "user_id": "u1",
                                       "timestamp": f"2026-03-01T10:0{i}:00Z"})
    first = client.get("/memories", params={"user_id": "u1", "limit": 2}).json()["results"]
    second = client.get("/memories", params={"user_id": "u1", "limit": 2, "offset": 2}).json()["results"]
    assert [m["memory"] for m in first + second] == ["note 0", "note 1", "note 2", "note 3"]


def test_the_openapi_document_has_one_operation_per_id(client) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # FastAPI warns "Duplicate Operation ID"
        spec = client.get("/openapi.json").json()
    ids = [op["operationId"] for ops in spec["paths"].values() for op in ops.values()]
    assert len(ids) == len(set(ids))
    assert list(spec["paths"]["/health"]) == ["get"]


def test_a_default_port_in_a_cors_origin_is_the_origin_browsers_send(tmp_path: Path) -> None:
    client, kb = make_client(tmp_path / "kb", cors_origins=["https://x.example:443", "http://y.example:80"])
    try:
        for origin in ("https://x.example", "http://y.example"):
            pre = client.options("/stats", headers={"Origin": origin, "Access-Control-Request-Method": "GET"})
            assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == origin
    finally:
        kb.close()


def test_serve_refuses_a_bad_cors_origin_before_opening_anything(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from graphmem.cli import cli

    home = tmp_path / "kb"
    got = CliRunner().invoke(cli, ["--home", str(home), "serve", "--cors-origin", "*"], obj={})
    assert got.exit_code != 0 and "--cors-origin" in got.output and "Traceback" not in got.output
    assert not home.exists()


def test_reading_pages_with_title_links_reads_the_page_forms_once(client, monkeypatch) -> None:
    """Every page view with a title or broken link read every page's forms again (0.5 s at 30,000 pages)."""
    client.post("/wiki/pages", json={"category": "notes", "title": "Target Page", "content": "Here."})
    made = client.post("/wiki/pages", json={"category": "notes", "title": "Hub",
                                            "content": "[[Target Page]] and [[nowhere]]."}).json()
    store = client.app.state.kb.store
    calls = []
    real = store.list_pages
    monkeypatch.setattr(store, "list_pages", lambda *a, **k: calls.append(1) or real(*a, **k))
    seen = []
    for _ in range(3):
        got = client.get(f"/wiki/pages/{made['slug']}").json()
        assert got["link_slugs"] == {"target page": "target-page"}
        seen.append(len(calls))
    assert seen == [1, 1, 1]  # every page's forms read on the first view only
    client.post("/wiki/pages", json={"category": "notes", "title": "Nowhere", "content": "Now here."})
    got = client.get(f"/wiki/pages/{made['slug']}").json()  # a change: read again, and it sees the new page
    assert got["link_slugs"] == {"target page": "target-page", "nowhere": "nowhere"}
