"""The OpenAI-compatible client's two limits on an answer: the whole answer within the timeout (a server that
drips its body one byte at a time never trips a per-read timeout), and at most ``max_bytes`` of it read."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from graphmem.openai_http import MAX_RESPONSE_BYTES, HTTPFailure, post_json


class _Handler(BaseHTTPRequestHandler):
    body = b"{}"
    drip = 0.0  # seconds between bytes of the body

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        try:
            if not self.drip:
                self.wfile.write(self.body)
                return
            for i in range(len(self.body)):
                self.wfile.write(self.body[i:i + 1])
                self.wfile.flush()
                time.sleep(self.drip)
        except OSError:  # the client gave up: expected
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _url(srv: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}/v1/chat/completions"


def _post(srv: ThreadingHTTPServer, **kw: object) -> object:
    args: dict[str, object] = {"api_key": None, "timeout": 0.5, "max_attempts": 1, "backoff_base": 0.0,
                               "max_retry_after": 0.0}
    args.update(kw)
    return post_json(_url(srv), {"q": 1}, **args)  # type: ignore[arg-type]


def test_a_dripped_answer_times_out_as_a_whole(server: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # 400 bytes, one every 20 ms: each read returns well within the 0.5 s timeout, the answer takes 8 s
    monkeypatch.setattr(_Handler, "body", b'{"a": "' + b"x" * 390 + b'"}')
    monkeypatch.setattr(_Handler, "drip", 0.02)
    start = time.monotonic()
    with pytest.raises(HTTPFailure) as info:
        _post(server)
    assert time.monotonic() - start < 3.0  # the deadline plus at most one read's timeout
    assert info.value.kind == "exhausted" and "timed out after 0.5 s" in info.value.detail


def test_an_answer_over_the_byte_limit_is_refused(server: ThreadingHTTPServer,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_Handler, "body", b'{"a": "' + b"x" * 5000 + b'"}')
    with pytest.raises(HTTPFailure) as info:
        _post(server, max_bytes=1000, max_attempts=3)
    assert info.value.kind == "client" and "larger than 1,000 bytes" in str(info.value)


def test_answers_within_both_limits_are_read_whole(server: ThreadingHTTPServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_Handler, "body", b'{"a": "' + b"x" * 5000 + b'"}')
    assert _post(server, max_bytes=5009) == {"a": "x" * 5000}
    monkeypatch.setattr(_Handler, "body", b'{"a": 1}')
    monkeypatch.setattr(_Handler, "drip", 0.01)
    assert _post(server, timeout=2.0) == {"a": 1}


def test_the_default_byte_limit_leaves_room_for_big_embedding_batches() -> None:
    # 2,048 inputs x 3,072 dimensions as JSON floats (~20 bytes each) is about 126 MB
    assert MAX_RESPONSE_BYTES == 256 * 1024 * 1024
