"""Bearer token, loopback binding, body size limit, CORS; `graphmem serve` refusing what it must."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from http_helpers import (
    client_fixture,  # noqa: F401  (fixtures, by name)
    error_of,
    make_client,
)

from graphmem.errors import InvalidInput
from graphmem.server.http import check_bind, is_loopback

TOKEN = "s3cret-token-for-tests"


@pytest.fixture()
def token_client(tmp_path: Path) -> Any:
    client, kb = make_client(tmp_path / "kb", token=TOKEN)
    yield client
    kb.close()


def test_no_token_is_401_with_a_bearer_challenge(token_client: Any) -> None:
    resp = token_client.get("/stats")
    err = error_of(resp, 401, "Unauthorized")
    assert resp.headers["www-authenticate"] == "Bearer" and "Authorization: Bearer" in err["message"]
    error_of(token_client.post("/memories", json={"messages": "x", "user_id": "u"}), 401, "Unauthorized")
    error_of(token_client.get("/openapi.json"), 401, "Unauthorized")


def test_wrong_token_and_wrong_scheme_are_401(token_client: Any) -> None:
    err = error_of(token_client.get("/stats", headers={"Authorization": "Bearer nope"}), 401, "Unauthorized")
    assert "wrong token" in err["message"]
    error_of(token_client.get("/stats", headers={"Authorization": f"Basic {TOKEN}"}), 401, "Unauthorized")
    error_of(token_client.get("/stats", headers={"Authorization": f"Bearer {TOKEN}x"}), 401, "Unauthorized")
    error_of(token_client.get("/stats", headers={"Authorization": "Bearer "}), 401, "Unauthorized")


def test_right_token_is_served_and_writes(token_client: Any) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert token_client.get("/stats", headers=auth).status_code == 200
    resp = token_client.post("/memories", json={"messages": "hello", "user_id": "u"}, headers=auth)
    assert resp.status_code == 200
    listed = token_client.get("/memories", params={"user_id": "u"}, headers=auth).json()
    assert [m["memory"] for m in listed["results"]] == ["hello"]


def test_ui_shell_and_health_need_no_token(token_client: Any) -> None:
    assert token_client.get("/").status_code == 200  # the page asks for the token and sends it itself
    assert token_client.get("/ui/app.js").status_code == 200
    assert token_client.get("/docs").status_code == 200
    assert token_client.get("/health").json() == {"status": "ok"}


def test_loopback_without_token_is_allowed(client: Any) -> None:
    assert client.get("/stats").status_code == 200
    assert client.post("/memories", json={"messages": "hi", "user_id": "u"}).status_code == 200


def test_check_bind_refuses_a_public_address_without_token() -> None:
    for host in ("127.0.0.1", "127.8.9.1", "::1", "localhost"):
        assert is_loopback(host)
        check_bind(host, None)
    for host in ("0.0.0.0", "192.168.1.4", "::", "example.org"):
        assert not is_loopback(host)
        with pytest.raises(InvalidInput, match="--token"):
            check_bind(host, None)
        check_bind(host, TOKEN)
    with pytest.raises(InvalidInput, match="empty"):
        check_bind("127.0.0.1", "  ")


def test_body_over_the_limit_is_413_and_writes_nothing(tmp_path: Path) -> None:
    client, kb = make_client(tmp_path / "kb", max_body_bytes=2000)
    try:
        ok = client.post("/memories", json={"messages": "a" * 1500, "user_id": "u"})
        assert ok.status_code == 200
        big = client.post("/memories", json={"messages": "b" * 3000, "user_id": "u"})
        err = error_of(big, 413, "PayloadTooLarge")
        assert "2000 bytes" in err["message"] and "--max-body" in err["message"]

        def chunked() -> Any:  # no Content-Length: the guard counts what arrives
            yield b'{"messages": "'
            for _ in range(10):
                yield b"c" * 500
            yield b'", "user_id": "u"}'

        streamed = client.post("/memories", content=chunked(), headers={"content-type": "application/json"})
        error_of(streamed, 413, "PayloadTooLarge")
        assert [m["memory"][0] for m in client.get("/memories", params={"user_id": "u"}).json()["results"]] == ["a"]
    finally:
        kb.close()


def test_cors_is_off_by_default_and_on_for_named_origins(tmp_path: Path) -> None:
    client, kb = make_client(tmp_path / "kb")
    try:
        pre = client.options("/stats", headers={"Origin": "http://evil.example",
                                                "Access-Control-Request-Method": "GET"})
        assert "access-control-allow-origin" not in pre.headers
        assert "access-control-allow-origin" not in client.get("/stats", headers={"Origin": "http://a.example"}).headers
    finally:
        kb.close()
    client, kb = make_client(tmp_path / "kb2", cors_origins=["http://ui.example"])
    try:
        got = client.get("/stats", headers={"Origin": "http://ui.example"})
        assert got.headers["access-control-allow-origin"] == "http://ui.example"
        assert "access-control-allow-origin" not in client.get("/stats", headers={"Origin": "http://b.example"}).headers
    finally:
        kb.close()


def _graphmem(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphmem", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def test_serve_refuses_a_public_address_without_a_token_before_creating_anything(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    out = _graphmem("--home", str(home), "serve", "--host", "0.0.0.0", "--port", "8799", cwd=tmp_path)
    assert out.returncode == 1
    assert "--token" in out.stderr and "Traceback" not in out.stderr
    assert not home.exists()
    empty = _graphmem("--home", str(home), "serve", "--token", "", cwd=tmp_path)
    assert empty.returncode == 1 and "token is empty" in empty.stderr


def test_serve_without_the_server_extra_says_how_to_install_it(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['uvicorn'] = None; from graphmem.cli import main; "
            "sys.argv = ['graphmem', '--home', sys.argv[1], 'serve']; main()")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "kb")], capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 1
    assert "pip install 'graphmem[server]'" in out.stderr and "Traceback" not in out.stderr
