"""The review findings on the HTTP API (issue 19 follow-up): Host and Origin checks against CSRF and DNS
rebinding, POST /reset needing a JSON confirmation, token + CORS preflights, a huge Last-Event-ID, skills
the model may not invoke, entity names with a slash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from http_helpers import (
    LOCAL_URL,
    client_fixture,  # noqa: F401  (fixtures, by name)
    error_of,
    make_client,
)

TOKEN = "s3cret-token-for-review-tests"
UI = "http://ui.example"


def _memories(client: Any, **headers: str) -> list[str]:
    got = client.get("/memories", params={"user_id": "u"}, headers=headers)
    assert got.status_code == 200, got.text
    return [m["memory"] for m in got.json()["results"]]


# -- 1.1 Host and Origin checks without a token -------------------------------------------------------


def test_tokenless_server_refuses_a_foreign_host_header(client: Any) -> None:
    err = error_of(client.get("/stats", headers={"Host": "evil.example"}), 403, "Forbidden")
    assert err["field"] == "Host" and "--token" in err["message"]
    error_of(client.get("/stats", headers={"Host": "evil.example:8765"}), 403, "Forbidden")
    error_of(client.get("/stats", headers={"Host": "127.0.0.1.evil.example"}), 403, "Forbidden")
    error_of(client.post("/memories", json={"messages": "x", "user_id": "u"}, headers={"Host": "evil.example"}),
             403, "Forbidden")
    for host in ("localhost", "localhost:8765", "127.0.0.1", "127.0.0.1:8765", "[::1]:8765", "LOCALHOST:1"):
        assert client.get("/stats", headers={"Host": host}).status_code == 200, host
    assert _memories(client) == []  # the refused write wrote nothing


def test_token_server_accepts_any_host_because_the_token_protects_it(tmp_path: Path) -> None:
    client, kb = make_client(tmp_path / "kb", token=TOKEN)
    try:
        got = client.get("/stats", headers={"Host": "192.168.1.20:8765", "Authorization": f"Bearer {TOKEN}"})
        assert got.status_code == 200
    finally:
        kb.close()


def test_cross_site_form_cannot_reset_the_memories(client: Any) -> None:
    assert client.post("/memories", json={"messages": "keep me", "user_id": "u"}).status_code == 200
    form = client.post("/reset", data={"confirm": "true"},
                       headers={"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"})
    err = error_of(form, 403, "Forbidden")
    assert err["field"] == "Origin" and "--cors-origin" in err["message"]
    error_of(client.post("/memories", json={"messages": "x", "user_id": "u"}, headers={"Origin": "null"}),
             403, "Forbidden")
    assert _memories(client) == ["keep me"]


def test_reset_needs_a_json_confirmation(client: Any) -> None:
    assert client.post("/memories", json={"messages": "keep me", "user_id": "u"}).status_code == 200
    err = error_of(client.post("/reset"), 400, "InvalidInput")
    assert err["field"] == "confirm"
    error_of(client.post("/reset", json={"confirm": False}), 400, "InvalidInput")
    error_of(client.post("/reset", data={"confirm": "true"}), 400, "InvalidInput")  # a form body is not JSON
    assert _memories(client) == ["keep me"]
    assert client.post("/reset", json={"confirm": True}).json()["deleted"] == 1
    assert _memories(client) == []


def test_the_servers_own_origin_and_named_origins_are_allowed(tmp_path: Path) -> None:
    client, kb = make_client(tmp_path / "kb", cors_origins=[UI])
    try:
        own = LOCAL_URL  # the page the server itself serves calls back with its own origin
        assert client.post("/memories", json={"messages": "a", "user_id": "u"}, headers={"Origin": own}).status_code \
            == 200
        named = client.post("/memories", json={"messages": "b", "user_id": "u"}, headers={"Origin": UI})
        assert named.status_code == 200 and named.headers["access-control-allow-origin"] == UI
        error_of(client.get("/stats", headers={"Origin": "http://127.0.0.1:9999"}), 403, "Forbidden")  # other port
        assert sorted(_memories(client)) == ["a", "b"]
    finally:
        kb.close()


# -- 1.2 a token and CORS together ---------------------------------------------------------------------


def test_token_and_cors_preflight_then_authorised_call(tmp_path: Path) -> None:
    client, kb = make_client(tmp_path / "kb", token=TOKEN, cors_origins=[UI])
    try:
        pre = client.options("/memories", headers={"Origin": UI, "Access-Control-Request-Method": "POST",
                                                   "Access-Control-Request-Headers": "authorization,content-type"})
        assert pre.status_code == 200, pre.text
        assert pre.headers["access-control-allow-origin"] == UI
        assert "authorization" in pre.headers["access-control-allow-headers"].lower()
        call = client.post("/memories", json={"messages": "from the ui", "user_id": "u"},
                           headers={"Origin": UI, "Authorization": f"Bearer {TOKEN}"})
        assert call.status_code == 200 and call.headers["access-control-allow-origin"] == UI
        # Without the token: still 401, but readable by the allowed page (it can ask the user for the token).
        denied = client.get("/stats", headers={"Origin": UI})
        error_of(denied, 401, "Unauthorized")
        assert denied.headers["access-control-allow-origin"] == UI
        # A preflight from another origin is neither let through nor answered with CORS headers.
        evil = client.options("/memories", headers={"Origin": "http://evil.example",
                                                    "Access-Control-Request-Method": "POST"})
        error_of(evil, 403, "Forbidden")
        assert "access-control-allow-origin" not in evil.headers
        # A plain OPTIONS (not a preflight) still needs the token.
        error_of(client.options("/memories"), 401, "Unauthorized")
        assert _memories(client, Authorization=f"Bearer {TOKEN}") == ["from the ui"]
    finally:
        kb.close()


# -- 1.4 a huge Last-Event-ID ----------------------------------------------------------------------------


def test_huge_last_event_id_is_refused_before_the_stream_starts(client: Any) -> None:
    for value in (str(2**70), str(2**63)):
        resp = client.get("/events/stream", params={"limit": 1, "timeout": 0.2}, headers={"Last-Event-ID": value})
        err = error_of(resp, 400, "InvalidInput")
        assert err["field"] == "Last-Event-ID" and "at most" in err["message"]
    ok = client.get("/events/stream", params={"limit": 1, "timeout": 0.2}, headers={"Last-Event-ID": "5"})
    assert ok.status_code == 200 and ok.headers["content-type"].startswith("text/event-stream")


# -- 1.7 skills the model may not invoke -----------------------------------------------------------------


def _skill(root: Path, name: str, description: str, extra: str = "") -> None:
    d = root / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\nSteps.\n",
                                encoding="utf-8")


@pytest.mark.parametrize("flag", ["true", "'yes'"])
def test_skills_query_leaves_out_skills_the_model_may_not_invoke(tmp_path: Path, flag: str) -> None:
    root = tmp_path / "skills"
    _skill(root, "deploy-prod", "Deploy the release to production servers",
           f"disable-model-invocation: {flag}\n")
    _skill(root, "deploy-staging", "Deploy the release to staging servers")
    _skill(root, "pdf-tools", "Extract text and tables from PDF files")
    client, kb = make_client(tmp_path / "kb")
    try:
        kb.skills.build([root])
        for path, body in [("/skills/query", {"message": "deploy the release to production", "top_k": 3}),
                           ("/retrieve", {"query": "deploy the release to production", "top_k": 3})]:
            res = client.post(path, json=body).json()
            names = [s["name"] for s in res["skills"]]
            assert "deploy-staging" in names and "deploy-prod" not in names, (path, names)
            assert "deploy-prod" not in res["prompt"]["text"] and res["prompt"]["skills"] == len(names)
        # The user can still look the skill up (the UI's skill page), only the model's lists leave it out.
        assert client.get("/skills/deploy-prod").json()["name"] == "deploy-prod"
    finally:
        kb.close()


# -- 1.9 entity names with a slash ----------------------------------------------------------------------


def test_entity_whose_name_has_a_slash_is_reachable(client: Any) -> None:
    text = "CI/CD deploys the Billing Service."
    out = client.post("/documents", json={
        "content": text, "doc_id": "ci", "title": "CI",
        "entities": [{"name": "CI/CD", "type": "software", "supporting_text": text},
                     {"name": "Billing Service", "type": "service", "supporting_text": text}],
        "relations": [{"source": "CI/CD", "target": "Billing Service", "type": "deploys", "confidence": 0.9,
                       "supporting_text": text}]})
    assert out.status_code == 200, out.text
    ent = client.get("/entities/CI%2FCD")
    assert ent.status_code == 200, ent.text
    assert ent.json()["name"] == "CI/CD" and ent.json()["relations"][0]["type"] == "deploys"
    graph = client.get("/entities/CI%2FCD/graph", params={"depth": 1})
    assert graph.status_code == 200, graph.text
    assert {"CI/CD", "Billing Service"} <= {n["name"] for n in graph.json()["nodes"].values()}
    assert client.get("/entities/Billing%20Service/graph").status_code == 200
    error_of(client.get("/entities/CI%2FXX"), 404, "NotFound")
    error_of(client.get("/entities/CI%2FXX/graph"), 404, "NotFound")


# -- a negative Content-Length (seen by the reviewer's probe_cors.py) -----------------------------------


def test_negative_content_length_is_refused_and_writes_nothing(client: Any) -> None:
    resp = client.post("/memories", content=b'{"messages": "x", "user_id": "u"}',
                       headers={"content-type": "application/json", "content-length": "-1"})
    err = error_of(resp, 400, "InvalidInput")
    assert err["field"] == "Content-Length"
    assert _memories(client) == []


def test_values_are_taken_as_json_gives_them(client: Any) -> None:
    """Lax parsing turned {"confirm": "yes"} into True, and POST /reset deleted every memory."""
    assert client.post("/memories", json={"messages": "I like green tea", "user_id": "u"}).status_code == 200
    for confirm in ("yes", 1, "true"):
        err = error_of(client.post("/reset", json={"confirm": confirm}), 400, "InvalidInput")
        assert err["field"] == "confirm", err
    assert _memories(client) == ["I like green tea"]
    for k in (True, "5", 2.5):
        err = error_of(client.post("/search", json={"query": "tea", "k": k}), 400, "InvalidInput")
        assert err["field"] == "k", err
    assert client.post("/search", json={"query": "tea", "k": 5}).status_code == 200


def test_events_refuse_an_unknown_type_and_take_contextkit_names(client: Any) -> None:
    """GET /events?types=nope and ?types=node_added both answered {"events": []}."""
    assert client.post("/memories", json={"messages": "I like green tea", "user_id": "u"}).status_code == 200
    got = client.get("/events", params={"types": "node_added"})
    assert [e["type"] for e in got.json()["events"]] == ["memory.added"]
    err = error_of(client.get("/events", params={"types": "nope"}), 400, "InvalidInput")
    assert "'nope' is not an event type" in err["message"]


def test_a_body_that_is_not_json_names_the_body(client: Any) -> None:
    """Malformed JSON answered field "1" (a character offset, not a field); JSON nested 5,000 deep answered
    the undocumented type HTTPError with no field."""
    bad = client.post("/search", content=b'{bad json', headers={"content-type": "application/json"})
    err = error_of(bad, 400, "InvalidInput")
    assert err["field"] == "body" and err["message"].startswith("body: not valid JSON at character 1")
    deep = client.post("/search", content=b"[" * 5000 + b"]" * 5000, headers={"content-type": "application/json"})
    err = error_of(deep, 400, "InvalidInput")
    assert err["field"] == "body"
