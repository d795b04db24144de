"""A local stand-in for an OpenAI-compatible server (chat completions, embeddings), for tests.

It listens on 127.0.0.1 (port 0, so the OS picks a free one) in a background thread, records
every request, counts how many are in flight at once, and answers from a script of
:class:`Reply` objects (then from ``responder``, if set). Waits inside a reply are cut short
when the server closes, so no test hangs on a sleeping handler.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ROUTES", "FakeOpenAI", "Recorded", "Reply", "chat_reply", "embedding_reply", "extraction_reply"]

# The endpoints the fake answers (from the script); any other path is a 404.
ROUTES = ("/v1/chat/completions", "/v1/embeddings")


@dataclass
class Reply:
    """One scripted answer: status, JSON (dict/list) or raw (str) body, headers, delay in seconds."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Recorded:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of the request."""
        return list(self.body["messages"])


def chat_reply(content: str, **kwargs: Any) -> Reply:
    """A 200 chat-completions answer whose assistant message is ``content``."""
    return Reply(200, {
        "id": "chatcmpl-test", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
    }, **kwargs)


def extraction_reply(entities: list[dict[str, Any]], relations: list[dict[str, Any]], **kwargs: Any) -> Reply:
    """A 200 answer carrying an extraction as JSON content."""
    return chat_reply(json.dumps({"entities": entities, "relations": relations}), **kwargs)


def embedding_reply(vectors: list[list[float]], order: Iterable[int] | None = None, **kwargs: Any) -> Reply:
    """A 200 embeddings answer: item ``i`` carries ``vectors[i]`` with ``"index": i``.

    ``order`` lists the item indices in the order the items appear in ``data`` (default: in
    order), to check that clients sort by ``index`` rather than trust the list order.
    """
    indices = list(range(len(vectors))) if order is None else list(order)
    return Reply(200, {
        "object": "list", "model": "test-embedder",
        "data": [{"object": "embedding", "index": i, "embedding": vectors[i]} for i in indices],
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }, **kwargs)


class FakeOpenAI:
    """The fake server; use as a context manager (``with FakeOpenAI() as server:``)."""

    def __init__(self, replies: Iterable[Reply] = (), responder: Callable[[Recorded], Reply] | None = None) -> None:
        self.replies: deque[Reply] = deque(replies)
        self.responder = responder
        self.requests: list[Recorded] = []
        self.active = 0
        self.max_active = 0
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits for the next poll, and tests tear down often.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="fake-openai", daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Wake waiting handlers, stop serving and free the port."""
        self.stopped.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next_reply(self, recorded: Recorded) -> Reply:
        with self.lock:
            if self.replies:
                return self.replies.popleft()
        if self.responder is not None:
            return self.responder(recorded)
        return Reply(500, {"error": {"message": "fake server: no reply scripted"}})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body: Any = json.loads(raw)
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                recorded = Recorded(self.path, dict(self.headers.items()), body)
                with fake.lock:
                    fake.requests.append(recorded)
                    fake.active += 1
                    fake.max_active = max(fake.max_active, fake.active)
                try:
                    if self.path not in ROUTES:
                        reply = Reply(404, {"error": {"message": f"no route {self.path}"}})
                    else:
                        reply = fake._next_reply(recorded)
                    if reply.delay:
                        fake.stopped.wait(reply.delay)
                finally:
                    # Leave the in-flight count before answering: once the client has the answer
                    # it may start its next request, which must not be counted as overlapping.
                    with fake.lock:
                        fake.active -= 1
                data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                payload = data.encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer

        return Handler
